//===- KVCacheOptions.h - the paged KV cache a model is built with -*- C++ -*-//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the generation functions (`prefill` and `decode`, and `append` when
// asked for, emitted beside a model's `forward`) are built over: the
// frontends that build them (a checkpoint's, an ONNX decoder exported with
// past key/values) share these.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_FRONTEND_KVCACHEOPTIONS_H
#define MNEMO_FRONTEND_KVCACHEOPTIONS_H

#include <cstdint>

namespace mlir::mnemo {

/// Storage of the KV cache: FP8 is E4M3 with a scale per token and head.
enum class KVCacheDType { F32, BF16, F16, FP8 };

/// The paged KV cache of the generation functions: storage type and tokens
/// per page.
struct KVCacheOptions {
  /// false: `forward` only.
  bool generation = true;
  /// Also `append`, the step that feeds several tokens to live sequences
  /// (a prompt appended to a conversation, a long prompt in chunks).
  bool appendStep = false;
  KVCacheDType dtype = KVCacheDType::F32;
  int64_t pageSize = 16;
};

} // namespace mlir::mnemo

#endif // MNEMO_FRONTEND_KVCACHEOPTIONS_H

//===- KVCacheReport.h - KV cache bytes per token ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_COMPILER_KVCACHEREPORT_H
#define MNEMO_COMPILER_KVCACHEREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::mnemo {

/// Prints what the KV cache of `module`'s generation step (`decode`, else
/// the first function with cache pools) holds per sequence at a context of
/// `context` tokens: per kind of pool and in total, the bytes the runtime
/// keeps (on whole pages: of P entries for a pool of one row per R tokens,
/// of P tokens for the others, less those behind the widest window their
/// rows are read in when every one of them declares one), the bytes of the rows
/// the steps use (`mnemo.kv_window` / `mnemo.kv_last`: the last W tokens';
/// `mnemo.kv_every`: one row per m tokens), and those of full attention
/// (every token's key and value rows, no window, nothing else). Returns
/// false, printing nothing, when the module has no cache pools.
bool printKVCacheReport(ModuleOp module, int64_t context,
                        llvm::raw_ostream &os);

} // namespace mlir::mnemo

#endif // MNEMO_COMPILER_KVCACHEREPORT_H

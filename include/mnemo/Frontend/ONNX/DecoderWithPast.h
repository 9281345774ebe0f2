//===- DecoderWithPast.h - generation steps of an ONNX decoder --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An ONNX decoder exported with its KV cache as inputs and outputs, in the
// form optimum and ONNX Runtime GenAI use:
//
//   (input_ids [B, S], attention_mask [B, P + S], position_ids [B, S],
//    past_key_values.N.key [B, Hkv, P, Dk], past_key_values.N.value
//    [B, Hkv, P, Dv] for every layer N)
//     -> (logits [B, S, V], present.N.key [B, Hkv, P + S, Dk],
//         present.N.value [B, Hkv, P + S, Dv], ...)
//
// compiles, beside the graph itself, into the generation steps `prefill`
// and `decode` over a paged KV cache (GenerationStep.h), so that the
// runtime's generator runs it like a checkpoint.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_FRONTEND_ONNX_DECODERWITHPAST_H
#define MNEMO_FRONTEND_ONNX_DECODERWITHPAST_H

#include "mnemo/Frontend/KVCacheOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace mlir::mnemo {

/// Whether the imported graph `module` takes past key/values
/// (`past_key_values.N.key` / `.value` inputs).
bool isDecoderWithPast(ModuleOp module);

/// Adds `prefill` and `decode` to an imported decoder with past key/values.
/// Each step runs the graph once with what the graph expects, built from
/// the paged cache: each sequence's cached keys and values gathered through
/// its block table into a past of P tokens (1 in `prefill`; the block
/// table's capacity, pages x page size, in `decode`),
/// right-aligned as a left-padded batch is (zeros before a shorter
/// sequence), the attention mask that says so (0 on that padding and on a
/// ragged batch's padding tokens, 1 elsewhere), and the positions as
/// position_ids; the new tokens' keys and values, the presents' last S
/// tokens, are written into the pools. The graph's own mask computation
/// (causality, windows) thus sees exactly a left-padded batch. On input
/// the steps cannot feed, fails with `error` naming `path` and the input or
/// output at fault.
LogicalResult addDecoderWithPastSteps(ModuleOp module,
                                      const KVCacheOptions &options,
                                      llvm::StringRef path, std::string &error);

} // namespace mlir::mnemo

#endif // MNEMO_FRONTEND_ONNX_DECODERWITHPAST_H

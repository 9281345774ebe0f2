//===- LlamaFamily.h - Llama-family decoder builder -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_CHECKPOINT_LLAMAFAMILY_H
#define MNEMO_LIB_FRONTEND_CHECKPOINT_LLAMAFAMILY_H

#include "ModelConfig.h"
#include "mnemo/Frontend/Checkpoint/Safetensors.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::mnemo {

/// Builds @forward for a Llama, Mistral, Qwen2 or Qwen3 decoder from
/// `weights`.
/// On a missing or mis-shaped tensor returns null and sets `error`.
OwningOpRef<ModuleOp> buildLlamaFamily(const ModelConfig &config,
                                       const SafetensorsCheckpoint &weights,
                                       MLIRContext *context,
                                       std::string &error);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_LLAMAFAMILY_H

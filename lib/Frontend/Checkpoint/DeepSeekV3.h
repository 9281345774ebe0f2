//===- DeepSeekV3.h - DeepSeek-V3 decoder builder ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_CHECKPOINT_DEEPSEEKV3_H
#define MNEMO_LIB_FRONTEND_CHECKPOINT_DEEPSEEKV3_H

#include "ModelConfig.h"
#include "mnemo/Frontend/Checkpoint/Safetensors.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::mnemo {

/// Builds @forward for a DeepseekV3ForCausalLM checkpoint (`config.deepseek`
/// set). On a missing or mis-shaped tensor returns null and sets `error`.
OwningOpRef<ModuleOp> buildDeepSeekV3(const ModelConfig &config,
                                      const SafetensorsCheckpoint &weights,
                                      MLIRContext *context,
                                      std::string &error);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_DEEPSEEKV3_H

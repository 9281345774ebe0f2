//===- LoraAdapter.h - PEFT LoRA adapters merged into weights ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_CHECKPOINT_LORAADAPTER_H
#define MNEMO_LIB_FRONTEND_CHECKPOINT_LORAADAPTER_H

#include "mnemo/Frontend/Checkpoint/Safetensors.h"

#include "llvm/Support/SHA256.h"
#include <map>
#include <string>
#include <vector>

namespace mlir::mnemo {

/// One adapted module's factors: A [rank, in] and B [out, rank] with the
/// adapter's scaling folded into B, so that the update is B A.
struct LoraFactors {
  int64_t rank = 0, in = 0, out = 0;
  std::vector<float> a, b;
};

/// The factors of the PEFT LoRA adapter in `directory` by module name
/// ("model.layers.0.self_attn.q_proj"), checked against `weights` as
/// mergeLoraAdapter checks them; false with one line on failure.
bool readLoraAdapter(const SafetensorsCheckpoint &weights,
                     llvm::StringRef directory, llvm::SHA256 &hash,
                     std::map<std::string, LoraFactors> &factors,
                     std::string &error);

/// Merges the PEFT LoRA adapter in `directory` (adapter_config.json and
/// adapter_model.safetensors) into `weights`: each adapted module's weight
/// W [out, in] becomes W + scaling * B A (A = lora_A [r, in], B = lora_B
/// [out, r], scaling = lora_alpha / r, or / sqrt(r) with use_rslora),
/// computed in f64 and rounded to f32. Adds the adapter's files to `hash`.
/// On an adapter it cannot merge exactly (DoRA, biases, saved modules, per-
/// module ranks, a tensor without its pair or its base weight, mismatched
/// shapes) returns false with one line naming the file and key or tensor.
bool mergeLoraAdapter(SafetensorsCheckpoint &weights, llvm::StringRef directory,
                      llvm::SHA256 &hash, std::string &error);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_LORAADAPTER_H

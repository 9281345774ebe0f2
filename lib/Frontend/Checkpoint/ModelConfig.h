//===- ModelConfig.h - Hugging Face config.json -----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The decoder hyper-parameters read from a checkpoint's config.json, already
// checked against what the builders support.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_CHECKPOINT_MODELCONFIG_H
#define MNEMO_LIB_FRONTEND_CHECKPOINT_MODELCONFIG_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <string>

namespace mlir::mnemo {

/// Rotary scaling as in transformers' `rope_parameters`.
struct RopeScalingConfig {
  enum class Kind { None, Linear, Dynamic, Yarn, Llama3 } kind = Kind::None;
  double factor = 1.0;
  int64_t originalMaxPosition = 0;
  double lowFreqFactor = 1.0, highFreqFactor = 4.0;
  double betaFast = 32.0, betaSlow = 1.0;
  std::optional<double> attentionFactor;
  bool truncate = true;
};

/// A Llama-family decoder (Llama, Mistral, Qwen3).
struct ModelConfig {
  std::string architecture;
  int64_t vocabSize = 0, hiddenSize = 0, intermediateSize = 0;
  int64_t numLayers = 0, numHeads = 0, numKVHeads = 0, headDim = 0;
  int64_t rotaryDim = 0;
  double rmsNormEps = 1e-6;
  double ropeTheta = 10000.0;
  RopeScalingConfig ropeScaling;
  /// Per layer: the sliding window, or nullopt for full attention.
  llvm::SmallVector<std::optional<int64_t>> layerWindows;
  bool qkNorm = false;
  bool attentionBias = false;
  bool mlpBias = false;
  bool tieWordEmbeddings = false;
};

/// Reads and checks `path` (a config.json). On failure sets `error` to one
/// line naming the file and the key at fault.
bool parseModelConfig(llvm::StringRef path, ModelConfig &config,
                      std::string &error);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_MODELCONFIG_H

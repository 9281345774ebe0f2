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

#include "mnemo/Frontend/Checkpoint/ImportCheckpoint.h"

#include "LoraAdapter.h"

#include <set>

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
  /// YaRN's `mscale_all_dim` (0 when absent); DeepSeek scales the softmax
  /// by its mscale squared.
  double mscaleAllDim = 0.0;
};

/// DeepSeek-V3 multi-head latent attention and mixture of experts.
/// DeepSeek-V3.2's lightning indexer (DeepSeek Sparse Attention).
struct SparseIndexerConfig {
  int64_t heads = 0, headDim = 0, topk = 0;
};

struct DeepSeekConfig {
  /// Query low-rank compression (q_a, norm, q_b); q_proj without it.
  std::optional<int64_t> qLoraRank;
  int64_t kvLoraRank = 0, nopeDim = 0, ropeDim = 0, valueDim = 0;
  bool ropeInterleave = true;
  /// The softmax scale: (nope + rope)^-1/2, times YaRN's mscale squared.
  double softmaxScale = 1.0;
  /// Layers before this one have a dense MLP, the others a mixture of
  /// experts.
  int64_t firstDenseLayers = 0;
  /// Per layer: whether its MLP is a mixture of experts (V3: the layers
  /// from firstDenseLayers on; V3.2: its `mlp_layer_types`).
  llvm::SmallVector<bool> moeLayers;
  /// Set for DeepseekV32ForCausalLM: every layer's attention is sparse.
  std::optional<SparseIndexerConfig> indexer;
  int64_t numExperts = 0, expertsPerToken = 0, numGroups = 1, topkGroups = 1;
  int64_t sharedExperts = 0, moeIntermediateSize = 0;
  bool normTopkProb = true;
  double routedScalingFactor = 1.0;
};

/// A decoder: Llama family (Llama, Mistral, Qwen2, Qwen3) or DeepSeek-V3.
/// DeepseekV4ForCausalLM (docs/DeepSeekV4.md): per-layer compressed memory,
/// hyper-connections, and sqrtsoftplus / hash-routed experts.
struct DeepSeekV4Config {
  enum class Memory { Window, CSA, HCA };
  /// Per layer: the memory beside the sliding window, and whether its MoE
  /// is hash-routed (`tid2eid`) rather than top-k.
  llvm::SmallVector<Memory> memory;
  llvm::SmallVector<bool> hashRouted;
  int64_t qLoraRank = 0, oGroups = 1, oLoraRank = 0, window = 0;
  /// Tokens per entry: compress_rates.{compressed_sparse_attention,
  /// heavily_compressed_attention}.
  int64_t csaRate = 4, hcaRate = 128;
  /// The rotated trailing channels of a head (qk_rope_head_dim).
  int64_t ropeDim = 0;
  /// The `compress` rope of compressed layers (the `main` one is
  /// ModelConfig's ropeTheta / ropeScaling).
  double compressTheta = 160000.0;
  RopeScalingConfig compressScaling;
  SparseIndexerConfig indexer;
  int64_t hcMult = 4, sinkhornIters = 20;
  double hcEps = 1e-6;
  int64_t numExperts = 0, expertsPerToken = 0, sharedExperts = 1;
  int64_t moeIntermediateSize = 0;
  double routedScalingFactor = 1.0, swigluLimit = 0.0;
};

/// Linear layers a checkpoint holds already quantized (config.json's
/// `quantization_config`, PrequantizedWeights.cpp): their codes, scales and
/// zero points are kept as they are.
struct PrequantizedConfig {
  enum class Method { GPTQ, AWQ, BitsAndBytesNF4, FP8 };
  Method method = Method::GPTQ;
  int64_t bits = 4;
  /// Input features per scale; 0 for all of them (group_size -1). For
  /// bitsandbytes each tensor's quant_state gives its block size.
  int64_t groupSize = 128;
  /// GPTQ's first checkpoint format ("gptq"): qzeros hold zero - 1.
  bool zeroMinusOne = true;
  /// FP8 (DeepSeek-V3's weight_block_size [rows, columns]): a scale per
  /// block of blockRows outputs x groupSize inputs.
  int64_t blockRows = 128;
};

struct ModelConfig {
  std::string architecture;
  /// Storage of the weight matrices: a compile option, not read from
  /// config.json.
  WeightOptions weights;
  /// An adapter attached rather than merged (--lora-attach): its factors by
  /// module, and the modules a linear layer applied them to.
  const std::map<std::string, LoraFactors> *attachedLora = nullptr;
  std::set<std::string> *loraApplied = nullptr;
  /// The generation functions' KV cache: a compile option too.
  KVCacheOptions kvCache;
  int64_t vocabSize = 0, hiddenSize = 0, intermediateSize = 0;
  int64_t numLayers = 0, numHeads = 0, numKVHeads = 0, headDim = 0;
  int64_t rotaryDim = 0;
  double rmsNormEps = 1e-6;
  double ropeTheta = 10000.0;
  RopeScalingConfig ropeScaling;
  /// Per layer: the sliding window, or nullopt for full attention.
  llvm::SmallVector<std::optional<int64_t>> layerWindows;
  bool qkNorm = false;
  /// Biases of the q/k/v projections, and of the output projection.
  bool attentionBias = false;
  bool outputBias = false;
  bool mlpBias = false;
  bool tieWordEmbeddings = false;
  /// Set for DeepseekV3ForCausalLM and DeepseekV32ForCausalLM.
  std::optional<DeepSeekConfig> deepseek;
  /// Set for DeepseekV4ForCausalLM.
  std::optional<DeepSeekV4Config> deepseekV4;
  /// Set for a GPTQ or AWQ checkpoint.
  std::optional<PrequantizedConfig> prequantized;
};

class ConfigReader;
/// Reads the DeepSeek-V3 keys of `top` into `config.deepseek`, with
/// `sparse` V3.2's indexer and layer types too (DeepSeekConfig.cpp);
/// problems go to `top`'s error.
void parseDeepSeekConfig(ConfigReader &top, ModelConfig &config, bool sparse);
/// `quantization_config` into `config.prequantized` (PrequantizedWeights.cpp).
void parsePrequantizedConfig(ConfigReader &top, ModelConfig &config);
/// The keys of DeepseekV4Config (DeepSeekV4Config.cpp), after the common
/// ones.
void parseDeepSeekV4Config(ConfigReader &top, ModelConfig &config);
/// A rope object's `rope_theta` (into `theta`, kept when absent) and
/// scaling keys; `top` holds max_position_embeddings.
void parseRopeObject(ConfigReader &top, ConfigReader &rope, double &theta,
                     RopeScalingConfig &scaling);

/// Reads and checks `path` (a config.json). On failure sets `error` to one
/// line naming the file and the key at fault.
bool parseModelConfig(llvm::StringRef path, ModelConfig &config,
                      std::string &error);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_MODELCONFIG_H

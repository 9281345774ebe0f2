//===- ModelConfig.cpp - Hugging Face config.json ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads the keys of transformers 5.x LlamaConfig, MistralConfig,
// Qwen2Config, Qwen3Config and DeepseekV3Config (DeepSeekConfig.cpp) that
// change the computation; a value the builders cannot honour is an error
// naming its key, never silently ignored.
//
//===----------------------------------------------------------------------===//

#include "ModelConfig.h"

#include "ConfigReader.h"
#include "JsonFile.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;
using llvm::StringRef;
using llvm::json::Object;

/// The most decoder layers a config may declare.
static constexpr int64_t kMaxLayers = 1 << 16;

static void parseRope(ConfigReader &top, ModelConfig &config) {
  StringRef key =
      top.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  config.ropeTheta = top.getDouble("rope_theta", 10000.0);
  if (!top.has(key))
    return;
  const Object *params = top.object.getObject(key);
  if (!params) {
    top.fail(key, "expected an object");
    return;
  }
  ConfigReader rope(*params, (key + ".").str(), top.error);
  parseRopeObject(top, rope, config.ropeTheta, config.ropeScaling);
}

void mnemo::parseRopeObject(ConfigReader &top, ConfigReader &rope,
                            double &theta, RopeScalingConfig &s) {
  theta = rope.getDouble("rope_theta", theta);
  StringRef typeKey = rope.has("rope_type") ? "rope_type" : "type";
  std::string type = rope.getString(typeKey, "default");
  using Kind = RopeScalingConfig::Kind;
  std::optional<Kind> kind = llvm::StringSwitch<std::optional<Kind>>(type)
                                 .Case("default", Kind::None)
                                 .Case("linear", Kind::Linear)
                                 .Case("dynamic", Kind::Dynamic)
                                 .Case("yarn", Kind::Yarn)
                                 .Case("llama3", Kind::Llama3)
                                 .Default(std::nullopt);
  if (!kind) {
    rope.fail(typeKey, "unsupported rope type '" + type +
                           "' (expected default, linear, dynamic, yarn or "
                           "llama3)");
    return;
  }
  s.kind = *kind;
  if (s.kind == Kind::None)
    return;
  s.factor = rope.getDouble("factor", 1.0);
  if (s.kind != Kind::Linear) {
    int64_t maxPosition = top.getInt("max_position_embeddings", 2048);
    s.originalMaxPosition =
        rope.getInt("original_max_position_embeddings", maxPosition);
  }
  if (s.kind == Kind::Llama3) {
    s.lowFreqFactor = rope.getDouble("low_freq_factor", 1.0);
    s.highFreqFactor = rope.getDouble("high_freq_factor", 4.0);
    if (!(s.highFreqFactor > s.lowFreqFactor))
      rope.fail("high_freq_factor", "must exceed low_freq_factor");
  }
  if (s.kind == Kind::Yarn) {
    s.betaFast = rope.getDouble("beta_fast", 32.0);
    s.betaSlow = rope.getDouble("beta_slow", 1.0);
    if (!(s.betaFast > s.betaSlow))
      rope.fail("beta_fast", "must exceed beta_slow");
    if (rope.has("attention_factor"))
      s.attentionFactor = rope.getDouble("attention_factor", 1.0);
    s.truncate = rope.getBool("truncate", true);
    // As transformers: with both mscale and mscale_all_dim (non-zero) the
    // cos/sin factor is their ratio of mscales, else 0.1 ln(factor) + 1.
    double mscale = rope.getDouble("mscale", 0.0, /*positive=*/false);
    double mscaleAllDim =
        rope.getDouble("mscale_all_dim", 0.0, /*positive=*/false);
    auto getMscale = [&](double m) {
      return s.factor <= 1.0 ? 1.0 : 0.1 * m * std::log(s.factor) + 1.0;
    };
    if (!s.attentionFactor && mscale != 0.0 && mscaleAllDim != 0.0)
      s.attentionFactor = getMscale(mscale) / getMscale(mscaleAllDim);
  }
  if (rope.has("mscale_all_dim"))
    s.mscaleAllDim = rope.getDouble("mscale_all_dim", 0.0, /*positive=*/false);
}

static void parseWindows(ConfigReader &top, ModelConfig &config, bool mistral,
                         bool qwen) {
  config.layerWindows.assign(config.numLayers, std::nullopt);
  std::optional<int64_t> window;
  if (top.has("sliding_window"))
    window = top.getInt("sliding_window", std::nullopt);
  if (top.has("layer_types")) {
    const llvm::json::Array *types = top.object.getArray("layer_types");
    if (!types || int64_t(types->size()) != config.numLayers) {
      top.fail("layer_types", "expected one string per layer");
      return;
    }
    for (auto [i, type] : llvm::enumerate(*types)) {
      std::optional<StringRef> name = type.getAsString();
      if (name && *name == "full_attention")
        continue;
      if (!name || *name != "sliding_attention") {
        top.fail("layer_types", "unsupported layer type");
        return;
      }
      if (!window) {
        top.fail("sliding_window", "missing for a sliding_attention layer");
        return;
      }
      config.layerWindows[i] = window;
    }
    return;
  }
  if (mistral && window)
    config.layerWindows.assign(config.numLayers, window);
  if (qwen && window && top.getBool("use_sliding_window", false)) {
    int64_t first = top.getInt("max_window_layers", 0, 0);
    for (int64_t i = first; i < config.numLayers; ++i)
      config.layerWindows[i] = window;
  }
}

bool mnemo::parseModelConfig(StringRef path, ModelConfig &config,
                             std::string &error) {
  auto fail = [&](const llvm::Twine &message) {
    error = (path + ": " + message).str();
    return false;
  };
  std::optional<llvm::json::Value> json = readJsonFile(path, error);
  if (!json)
    return false;
  const Object *root = json->getAsObject();
  if (!root)
    return fail("not a JSON object");

  std::string problem;
  ConfigReader top(*root, "", problem);
  const llvm::json::Array *archs = root->getArray("architectures");
  if (!archs || archs->size() != 1 || !(*archs)[0].getAsString())
    return fail("key 'architectures': expected a list of one name");
  config.architecture = (*archs)[0].getAsString()->str();
  StringRef arch = config.architecture;
  bool llama = arch == "LlamaForCausalLM";
  bool mistral = arch == "MistralForCausalLM";
  bool qwen2 = arch == "Qwen2ForCausalLM";
  bool qwen3 = arch == "Qwen3ForCausalLM";
  bool deepseekV32 = arch == "DeepseekV32ForCausalLM";
  bool deepseek = arch == "DeepseekV3ForCausalLM" || deepseekV32;
  bool deepseekV4 = arch == "DeepseekV4ForCausalLM";
  if (!llama && !mistral && !qwen2 && !qwen3 && !deepseek && !deepseekV4)
    return fail("key 'architectures': unsupported architecture '" + arch +
                "' (expected LlamaForCausalLM, MistralForCausalLM, "
                "Qwen2ForCausalLM, Qwen3ForCausalLM, "
                "DeepseekV3ForCausalLM, DeepseekV32ForCausalLM or "
                "DeepseekV4ForCausalLM)");
  // transformers builds the model class that `model_type` names; a config
  // whose model_type is missing, unknown or another architecture's is one
  // transformers refuses or reads as another model.
  StringRef expectedType = llama     ? "llama"
                           : mistral ? "mistral"
                           : qwen2   ? "qwen2"
                           : qwen3   ? "qwen3"
                           : deepseekV32 ? "deepseek_v32"
                           : deepseekV4  ? "deepseek_v4"
                                         : "deepseek_v3";
  std::optional<StringRef> modelType = root->getString("model_type");
  if (!modelType)
    return fail("key 'model_type': missing (expected '" + expectedType +
                "' for " + arch + ")");
  if (*modelType != expectedType) {
    bool known = llvm::is_contained(
        {"llama", "mistral", "qwen2", "qwen3", "deepseek_v3", "deepseek_v32",
         "deepseek_v4"},
        *modelType);
    return fail("key 'model_type': " +
                (known ? "'" + *modelType + "' does not match architecture " +
                             arch + " (expected '" + expectedType + "')"
                       : "unsupported model type '" + *modelType +
                             "' (expected '" + expectedType + "' for " + arch +
                             ")"));
  }

  config.vocabSize = top.getInt("vocab_size", std::nullopt);
  config.hiddenSize = top.getInt("hidden_size", std::nullopt);
  // V4's MLPs are all experts (moe_intermediate_size).
  if (!deepseekV4)
    config.intermediateSize = top.getInt("intermediate_size", std::nullopt);
  // Per-layer settings are read into vectors of this size before any
  // tensor is: a bound, far above any model's depth.
  config.numLayers =
      top.getInt("num_hidden_layers", std::nullopt, 1, kMaxLayers);
  config.numHeads = top.getInt("num_attention_heads", std::nullopt);
  config.numKVHeads = top.getInt("num_key_value_heads", config.numHeads);
  if (problem.empty())
    config.headDim = top.getInt(
        "head_dim", config.hiddenSize / std::max<int64_t>(config.numHeads, 1));
  config.rmsNormEps = top.getDouble("rms_norm_eps", 1e-6);
  config.tieWordEmbeddings = top.getBool("tie_word_embeddings", false);
  // Qwen2 always has q/k/v biases and never an o_proj bias.
  config.attentionBias = qwen2 || top.getBool("attention_bias", false);
  config.outputBias = !qwen2 && config.attentionBias;
  config.mlpBias = llama && top.getBool("mlp_bias", false);
  config.qkNorm = qwen3;
  std::string act = top.getString("hidden_act", "silu");
  if (act != "silu")
    top.fail("hidden_act",
             "unsupported activation '" + act + "' (expected silu)");
  if (problem.empty() && config.numHeads % config.numKVHeads != 0)
    top.fail("num_key_value_heads", "must divide num_attention_heads");
  if (problem.empty() && top.getInt("pretraining_tp", 1) != 1)
    top.fail("pretraining_tp", "only 1 is supported");
  double partial = top.getFraction("partial_rotary_factor", 1.0);
  config.rotaryDim = int64_t(config.headDim * partial);
  // DeepSeek's rotary dims are qk_rope_head_dim, checked with its keys.
  if (problem.empty())
    parsePrequantizedConfig(top, config);
  if (problem.empty() && deepseekV4) {
    parseDeepSeekV4Config(top, config);
    return problem.empty() || fail(problem);
  }
  if (problem.empty() && !deepseek &&
      (config.rotaryDim <= 0 || config.rotaryDim % 2 ||
       config.rotaryDim > config.headDim))
    top.fail("partial_rotary_factor", "gives an unsupported rotary dimension");
  if (problem.empty())
    parseRope(top, config);
  // V3.2's layer_types name its sparse attention (DeepSeekConfig.cpp).
  if (problem.empty() && deepseekV32)
    config.layerWindows.assign(config.numLayers, std::nullopt);
  else if (problem.empty())
    parseWindows(top, config, mistral, qwen2 || qwen3);
  if (problem.empty() && deepseek)
    parseDeepSeekConfig(top, config, deepseekV32);
  if (!problem.empty())
    return fail(problem);
  return true;
}

//===- DeepSeekV4Config.cpp - DeepSeek-V4 keys of config.json ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The keys of transformers 5.17's DeepseekV4Config that change the
// computation (docs/DeepSeekV4.md). Defaults are the config class's; a value
// the builder cannot honour is an error naming its key.
//
//===----------------------------------------------------------------------===//

#include "ConfigReader.h"
#include "ModelConfig.h"

using namespace mlir;
using namespace mlir::mnemo;
using llvm::StringRef;

/// rope_parameters.{main, compress} (or the top-level rope_theta alone).
static void parseRopes(ConfigReader &top, ModelConfig &config,
                       DeepSeekV4Config &v4) {
  config.ropeTheta = top.getDouble("rope_theta", 10000.0);
  v4.compressTheta = top.getDouble("compress_rope_theta", 160000.0);
  if (!top.has("rope_parameters"))
    return;
  const llvm::json::Object *params = top.object.getObject("rope_parameters");
  if (!params) {
    top.fail("rope_parameters", "expected an object");
    return;
  }
  auto read = [&](StringRef name, double &theta, RopeScalingConfig &s) {
    const llvm::json::Object *sub = params->getObject(name);
    if (!sub)
      return;
    ConfigReader rope(*sub, ("rope_parameters." + name + ".").str(),
                      top.error);
    parseRopeObject(top, rope, theta, s);
    if (rope.getDouble("partial_rotary_factor",
                       top.getDouble("partial_rotary_factor", 1.0)) !=
        top.getDouble("partial_rotary_factor", 1.0))
      rope.fail("partial_rotary_factor",
                "must equal the top-level partial_rotary_factor");
  };
  read("main", config.ropeTheta, config.ropeScaling);
  read("compress", v4.compressTheta, v4.compressScaling);
}

static void parseMemory(ConfigReader &top, ModelConfig &config,
                        DeepSeekV4Config &v4) {
  using Memory = DeepSeekV4Config::Memory;
  v4.window = top.getInt("sliding_window", 128);
  if (top.has("compress_rates")) {
    const llvm::json::Object *rates = top.object.getObject("compress_rates");
    if (!rates) {
      top.fail("compress_rates", "expected an object");
      return;
    }
    ConfigReader r(*rates, "compress_rates.", top.error);
    v4.csaRate = r.getInt("compressed_sparse_attention", 4);
    v4.hcaRate = r.getInt("heavily_compressed_attention", 128);
  }
  for (StringRef t :
       layerStrings(top, "layer_types", config.numLayers,
                    {"sliding_attention", "compressed_sparse_attention",
                     "heavily_compressed_attention"}))
    v4.memory.push_back(t == "sliding_attention"             ? Memory::Window
                        : t == "compressed_sparse_attention" ? Memory::CSA
                                                             : Memory::HCA);
  for (StringRef t : layerStrings(top, "mlp_layer_types", config.numLayers,
                                  {"moe", "hash_moe"}))
    v4.hashRouted.push_back(t == "hash_moe");
  SparseIndexerConfig &ix = v4.indexer;
  ix.heads = top.getInt("index_n_heads", 64);
  ix.headDim = top.getInt("index_head_dim", 128);
  ix.topk = top.getInt("index_topk", 512);
  if (top.error.empty() && ix.headDim < v4.ropeDim)
    top.fail("index_head_dim", "must be at least the rotary dims (" +
                                   llvm::Twine(v4.ropeDim) + ")");
}

static void parseMoE(ConfigReader &top, DeepSeekV4Config &v4) {
  v4.numExperts = top.getInt("n_routed_experts", 256);
  v4.expertsPerToken = top.getInt("num_experts_per_tok", 6);
  v4.sharedExperts = top.getInt("n_shared_experts", 1);
  v4.moeIntermediateSize = top.getInt("moe_intermediate_size", 2048);
  v4.routedScalingFactor = top.getDouble("routed_scaling_factor", 1.5);
  v4.swigluLimit = top.getDouble("swiglu_limit", 10.0);
  if (top.getString("scoring_func", "sqrtsoftplus") != "sqrtsoftplus")
    top.fail("scoring_func", "only sqrtsoftplus is supported");
  if (!top.getBool("norm_topk_prob", true))
    top.fail("norm_topk_prob", "only true is supported");
  if (top.error.empty() && v4.expertsPerToken > v4.numExperts)
    top.fail("num_experts_per_tok", "exceeds n_routed_experts");
  if (top.getString("hidden_act", "silu") != "silu")
    top.fail("hidden_act", "only silu is supported");
}

void mnemo::parseDeepSeekV4Config(ConfigReader &top, ModelConfig &config) {
  DeepSeekV4Config &v4 = config.deepseekV4.emplace();
  if (config.numKVHeads != 1)
    top.fail("num_key_value_heads",
             "must be 1 (V4's key and value are one shared head)");
  v4.qLoraRank = top.getInt("q_lora_rank", 1024);
  v4.oGroups = top.getInt("o_groups", 8);
  v4.oLoraRank = top.getInt("o_lora_rank", 1024);
  v4.hcMult = top.getInt("hc_mult", 4);
  v4.sinkhornIters = top.getInt("hc_sinkhorn_iters", 20);
  v4.hcEps = top.getDouble("hc_eps", 1e-6);
  // The rope covers the trailing partial_rotary_factor * head_dim channels
  // of every head (qk_rope_head_dim says the same where present).
  double partial = top.getFraction("partial_rotary_factor", 1.0);
  v4.ropeDim = int64_t(config.headDim * partial);
  config.rotaryDim = v4.ropeDim;
  if (!top.error.empty())
    return;
  if (v4.ropeDim <= 0 || v4.ropeDim % 2 || v4.ropeDim > config.headDim)
    top.fail("partial_rotary_factor", "gives an unsupported rotary dimension");
  else if (top.has("qk_rope_head_dim") &&
           top.getInt("qk_rope_head_dim", std::nullopt) != v4.ropeDim)
    top.fail("qk_rope_head_dim",
             "must equal partial_rotary_factor * head_dim (" +
                 llvm::Twine(v4.ropeDim) + ")");
  else if (config.numHeads % v4.oGroups)
    top.fail("o_groups", "must divide num_attention_heads (each group "
                         "projects whole heads)");
  if (!top.error.empty())
    return;
  parseRopes(top, config, v4);
  if (top.error.empty())
    parseMemory(top, config, v4);
  if (top.error.empty())
    parseMoE(top, v4);
  config.layerWindows.assign(config.numLayers, v4.window);
}

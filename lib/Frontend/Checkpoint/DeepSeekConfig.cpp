//===- DeepSeekConfig.cpp - DeepSeek-V3 keys of config.json -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The keys of transformers 5.x DeepseekV3Config that change the
// computation. Defaults are the config class's; a value the builder cannot
// honour is an error naming its key.
//
//===----------------------------------------------------------------------===//

#include "ConfigReader.h"
#include "ModelConfig.h"

#include "llvm/ADT/StringExtras.h"
#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;

/// transformers' yarn_get_mscale.
static double yarnMscale(double scale, double mscale) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

static void parseMoE(ConfigReader &top, DeepSeekConfig &ds,
                     int64_t numLayers, bool sparse) {
  ds.firstDenseLayers = top.getInt("first_k_dense_replace", 3, 0);
  ds.moeLayers.clear();
  // V3.2 names each layer's MLP; V3 counts its dense ones.
  if (sparse && top.has("mlp_layer_types")) {
    for (StringRef t :
         layerStrings(top, "mlp_layer_types", numLayers, {"dense", "sparse"}))
      ds.moeLayers.push_back(t == "sparse");
  } else {
    for (int64_t i = 0; i < numLayers; ++i)
      ds.moeLayers.push_back(i >= ds.firstDenseLayers);
  }
  ds.numExperts = top.getInt("n_routed_experts", 256);
  ds.expertsPerToken = top.getInt("num_experts_per_tok", 8);
  ds.numGroups = top.getInt("n_group", 8);
  ds.topkGroups = top.getInt("topk_group", 4);
  ds.sharedExperts = top.getInt("n_shared_experts", 1, 0);
  ds.moeIntermediateSize = top.getInt("moe_intermediate_size", 2048);
  ds.normTopkProb = top.getBool("norm_topk_prob", true);
  ds.routedScalingFactor = top.getDouble("routed_scaling_factor", 2.5);
  if (!top.error.empty() || !llvm::is_contained(ds.moeLayers, true))
    return;
  // Keys of the original DeepSeek configs that transformers does not read
  // but that would change the routing if they differed.
  if (top.getString("scoring_func", "sigmoid") != "sigmoid")
    top.fail("scoring_func", "only sigmoid is supported");
  if (top.getString("topk_method", "noaux_tc") != "noaux_tc")
    top.fail("topk_method", "only noaux_tc is supported");
  if (top.getInt("moe_layer_freq", 1) != 1)
    top.fail("moe_layer_freq", "only 1 is supported");
  if (ds.numExperts % ds.numGroups != 0)
    top.fail("n_group", "must divide n_routed_experts");
  else if (ds.numExperts / ds.numGroups < 2)
    top.fail("n_group", "needs at least 2 experts per group (the group "
                        "score sums the top 2)");
  else if (ds.topkGroups > ds.numGroups)
    top.fail("topk_group", "must not exceed n_group");
  else if (ds.expertsPerToken >
           ds.topkGroups * (ds.numExperts / ds.numGroups))
    top.fail("num_experts_per_tok",
             "exceeds the experts of the topk_group selected groups");
}

/// DeepSeek-V3.2: every layer's attention is DeepSeek Sparse Attention,
/// with a lightning indexer that rotates its first qk_rope_head_dim
/// features (rotate-half) and reads the low-rank query.
static void parseIndexer(ConfigReader &top, ModelConfig &config) {
  DeepSeekConfig &ds = *config.deepseek;
  SparseIndexerConfig &ix = ds.indexer.emplace();
  ix.heads = top.getInt("index_n_heads", 64);
  ix.headDim = top.getInt("index_head_dim", 128);
  ix.topk = top.getInt("index_topk", 2048);
  if (!top.error.empty())
    return;
  if (!ds.qLoraRank)
    top.fail("q_lora_rank", "must be set: the indexer's queries read the "
                            "low-rank query");
  else if (ix.headDim < ds.ropeDim)
    top.fail("index_head_dim", "must be at least qk_rope_head_dim");
  else if (top.has("head_dim") &&
           top.getInt("head_dim", std::nullopt) != ds.ropeDim)
    top.fail("head_dim", "must equal qk_rope_head_dim (the rotary "
                         "embedding's dim)");
  if (top.has("layer_types"))
    layerStrings(top, "layer_types", config.numLayers,
                 {"deepseek_sparse_attention"});
}

void mnemo::parseDeepSeekConfig(ConfigReader &top, ModelConfig &config,
                                bool sparse) {
  DeepSeekConfig &ds = config.deepseek.emplace();
  if (top.has("q_lora_rank"))
    ds.qLoraRank = top.getInt("q_lora_rank", std::nullopt);
  ds.kvLoraRank = top.getInt("kv_lora_rank", 512);
  ds.nopeDim = top.getInt("qk_nope_head_dim", 128);
  ds.ropeDim = top.getInt("qk_rope_head_dim", 64);
  ds.valueDim = top.getInt("v_head_dim", 128);
  // V3.2 always rotates interleaved pairs.
  ds.ropeInterleave = sparse || top.getBool("rope_interleave", true);
  if (!top.error.empty())
    return;
  // Every head reads the same latent cache: key/value heads are the query
  // heads, and transformers' eager attention needs them equal.
  if (config.numKVHeads != config.numHeads)
    top.fail("num_key_value_heads", "must equal num_attention_heads for "
                                    "multi-head latent attention");
  if (ds.ropeDim % 2 != 0)
    top.fail("qk_rope_head_dim", "must be even");
  // The rotary embedding covers the rope part of each head.
  config.headDim = ds.ropeDim;
  config.rotaryDim = ds.ropeDim;
  if (top.getDouble("partial_rotary_factor", 1.0) != 1.0)
    top.fail("partial_rotary_factor", "only 1 is supported");
  ds.softmaxScale = 1.0 / std::sqrt(double(ds.nopeDim + ds.ropeDim));
  const RopeScalingConfig &rope = config.ropeScaling;
  if (rope.kind != RopeScalingConfig::Kind::None && rope.mscaleAllDim != 0.0) {
    double m = yarnMscale(rope.factor, rope.mscaleAllDim);
    ds.softmaxScale *= m * m;
  }
  parseMoE(top, ds, config.numLayers, sparse);
  if (sparse && top.error.empty())
    parseIndexer(top, config);
}

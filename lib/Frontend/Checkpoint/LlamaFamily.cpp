//===- LlamaFamily.cpp - Llama-family decoder builder -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Emits transformers' LlamaForCausalLM / MistralForCausalLM /
// Qwen2ForCausalLM / Qwen3ForCausalLM forward pass over `input_ids` [B, S]
// at positions 0..S-1: pre-norm decoder layers of GQA attention (Qwen2:
// q/k/v biases; Qwen3: per-head RMSNorm on q and k before RoPE; Mistral:
// sliding window) and a SwiGLU MLP, then the final norm and the LM head (the
// embedding when tied). Reshapes and residual adds use upstream tensor and
// linalg ops, as examples/tiny-decoder does.
//
//===----------------------------------------------------------------------===//

#include "LlamaFamily.h"

#include "DecoderBuilder.h"

#include "dialects/Mnemo/IR/MnemoOps.h"

using namespace mlir;
using namespace mlir::mnemo;

namespace {
class LlamaBuilder final : public DecoderBuilder {
public:
  using DecoderBuilder::DecoderBuilder;

private:
  Value layer(Value h, int64_t i) override;
};
} // namespace

Value LlamaBuilder::layer(Value h, int64_t i) {
  std::string p = "model.layers." + std::to_string(i) + ".";
  int64_t hidden = config.hiddenSize, d = config.headDim;
  int64_t nq = config.numHeads, nkv = config.numKVHeads;
  bool ab = config.attentionBias;
  Value inNorm = weight(p + "input_layernorm.weight", {hidden});
  Value wq = matrix(p + "self_attn.q_proj.weight", {nq * d, hidden});
  Value bq = optionalBias(ab, p + "self_attn.q_proj.bias", nq * d);
  Value wk = matrix(p + "self_attn.k_proj.weight", {nkv * d, hidden});
  Value bk = optionalBias(ab, p + "self_attn.k_proj.bias", nkv * d);
  Value wv = matrix(p + "self_attn.v_proj.weight", {nkv * d, hidden});
  Value bv = optionalBias(ab, p + "self_attn.v_proj.bias", nkv * d);
  Value wo = matrix(p + "self_attn.o_proj.weight", {hidden, nq * d});
  Value bo = optionalBias(config.outputBias, p + "self_attn.o_proj.bias",
                         hidden);
  Value qNorm, kNorm;
  if (config.qkNorm) {
    qNorm = weight(p + "self_attn.q_norm.weight", {d});
    kNorm = weight(p + "self_attn.k_norm.weight", {d});
  }
  Value postNorm = weight(p + "post_attention_layernorm.weight", {hidden});
  int64_t inter = config.intermediateSize;
  bool mb = config.mlpBias;
  Value wg = matrix(p + "mlp.gate_proj.weight", {inter, hidden});
  Value bg = optionalBias(mb, p + "mlp.gate_proj.bias", inter);
  Value wu = matrix(p + "mlp.up_proj.weight", {inter, hidden});
  Value bu = optionalBias(mb, p + "mlp.up_proj.bias", inter);
  Value wd = matrix(p + "mlp.down_proj.weight", {hidden, inter});
  Value bd = optionalBias(mb, p + "mlp.down_proj.bias", hidden);
  if (failed())
    return {};

  Value x = rmsNorm(h, inNorm);
  Value q = splitHeads(linear(x, wq, bq, nq * d), nq, d);
  Value k = splitHeads(linear(x, wk, bk, nkv * d), nkv, d);
  Value v = splitHeads(linear(x, wv, bv, nkv * d), nkv, d);
  if (config.qkNorm) {
    q = rmsNorm(q, qNorm);
    k = rmsNorm(k, kNorm);
  }
  q = rope(swap12(q));
  k = rope(swap12(k));
  v = swap12(v);
  IntegerAttr window;
  if (std::optional<int64_t> w = config.layerWindows[i])
    window = b.getI64IntegerAttr(*w);
  Value a = attention(q, k, v, i, window);
  Value r = add(h, linear(mergeHeads(a), wo, bo, hidden));
  Value m = rmsNorm(r, postNorm);
  return add(r, swigluMLP(m, wg, bg, wu, bu, wd, bd, inter));
}

OwningOpRef<ModuleOp>
mnemo::buildLlamaFamily(const ModelConfig &config,
                        const SafetensorsCheckpoint &weights,
                        MLIRContext *context, std::string &error) {
  return buildDecoderModule(
      config, weights, context, error,
      [&](ImplicitLocOpBuilder &b, Value ids, CacheStep *step) {
        return LlamaBuilder(config, weights, b, error, step).build(ids);
      },
      config.kvCache.generation
          ? std::optional<CacheLayout>(CacheLayout{
                config.numKVHeads, config.headDim, config.headDim})
          : std::nullopt);
}

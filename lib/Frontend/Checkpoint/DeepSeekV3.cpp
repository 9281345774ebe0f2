//===- DeepSeekV3.cpp - DeepSeek-V3 decoder builder -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Emits transformers' DeepseekV3ForCausalLM forward pass over `input_ids`
// [B, S] at positions 0..S-1. Each layer is pre-norm multi-head latent
// attention as one mnemo.mla_attention (its form left to
// mnemo-select-mla-form) and an MLP: SwiGLU for the first
// `first_k_dense_replace` layers, a mixture of experts after them.
//
// Attention: q = q_b(rmsnorm(q_a(x))) (or q_proj(x)), split per head into
// q_nope and q_pe; [c_kv, k_pe] = kv_a_proj_with_mqa(x), c_kv normalized;
// kv_b_proj holds W_UK and W_UV. The weights are split here, at import
// time, into the operands the op takes. With `rope_interleave`,
// transformers rotates the pairs (2i, 2i+1) and stores the results
// de-interleaved (evens first); mnemo.rope's interleaved mode rotates the
// same pairs by the same angles and keeps them in place. Queries and keys
// are permuted alike, so every q_pe . k_pe, the only use of either, is the
// same sum.
//
// Mixture of experts: the router's weights per expert (MoERouting.cpp), the
// k selected experts of each token (mnemo.top_k over them: the selected
// ones are those with a positive weight) and one mnemo.experts, which runs
// each token through its selected experts only; the shared experts are a
// SwiGLU MLP beside it.
//
//===----------------------------------------------------------------------===//

#include "DeepSeekV3.h"

#include "DecoderBuilder.h"
#include "MoERouting.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "mnemo/Frontend/GenerationStep.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;

namespace {

class DeepSeekBuilder final : public DecoderBuilder {
public:
  DeepSeekBuilder(const ModelConfig &config,
                  const SafetensorsCheckpoint &weights,
                  ImplicitLocOpBuilder &b, std::string &error,
                  CacheStep *step)
      : DecoderBuilder(config, weights, b, error, step), ds(*config.deepseek) {}

private:
  Value layer(Value h, int64_t i) override;
  Value attention(Value x, const std::string &p, int64_t layer);
  /// DeepSeek-V3.2's lightning indexer inputs, from the normed input `x`
  /// and the low-rank query `qLow`: queries [B, S, h, d], one key per token
  /// [B, S, d] (both rotated) and the head weights [B, S, h].
  struct IndexerInputs {
    Value q, k, w;
  };
  std::optional<IndexerInputs> indexerInputs(Value x, Value qLow,
                                             const std::string &a);
  /// The index_topk keys [B, S, topk] each query selects: its indexer
  /// scores over `keys` ([B, T, d], or with a block table `table` the
  /// pool of paged keys [Pages, 1, P, d]; causal at `positions`, or at the
  /// row index without them), the best of each row's first `lengths[b]`
  /// (all without them) in PyTorch's CPU order among equal scores.
  Value selectKeys(const IndexerInputs &in, Value keys, Value positions,
                   Value lengths, Value table = Value());
  /// A generation step's sparse MLA (absorbed): the latent rows `k` and
  /// `latent` and the indexer keys written into the layer's pools, the
  /// queries `q` attending over the rows their indexer selects among the
  /// sequence's cached tokens.
  Value sparseStepAttention(Value q, Value k, Value latent, int64_t layer,
                            Value x, Value qLow, const std::string &a);
  /// y[b, h, s, n] = sum_k x[b, h, s, k] * w[h, k, n] ([H, K, N] `w`), or
  /// with `transposed`, * w[h, n, k] ([H, N, K]).
  Value perHead(Value x, Value w, bool transposed);
  /// [.., a] and [.., c] -> [.., a + c] along the last dim (rank 4).
  Value concatLast(Value x, Value y);
  Value moe(Value x, const std::string &p);
  /// [B, S, d] <-> [B, 1, S, d].
  Value unitHeads(Value x, int64_t d);
  Value dropUnitHeads(Value x, int64_t d);

  const DeepSeekConfig &ds;
};

} // namespace

Value DeepSeekBuilder::unitHeads(Value x, int64_t d) {
  return swap12(splitHeads(x, 1, d));
}

Value DeepSeekBuilder::dropUnitHeads(Value x, int64_t d) {
  SmallVector<ReassociationIndices> groups = {{0, 1}, {2}, {3}};
  return tensor::CollapseShapeOp::create(b, act({d}), x, groups);
}

Value DeepSeekBuilder::perHead(Value x, Value w, bool transposed) {
  auto wType = cast<RankedTensorType>(w.getType());
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t n = wType.getDimSize(transposed ? 1 : 2);
  auto type = RankedTensorType::get(
      {kDyn, xType.getDimSize(1), kDyn, n}, f32);
  Value init = linalg::FillOp::create(
                   b, ValueRange{arith::ConstantOp::create(
                       b, b.getF32FloatAttr(0.0))},
                   ValueRange{empty(type, {batch, seq})})
                   .getResult(0);
  MLIRContext *ctx = b.getContext();
  AffineExpr bi, h, s, o, k;
  bindDims(ctx, bi, h, s, o, k);
  auto map = [&](ArrayRef<AffineExpr> e) {
    return AffineMap::get(5, 0, e, ctx);
  };
  SmallVector<AffineMap> maps = {
      map({bi, h, s, k}), transposed ? map({h, o, k}) : map({h, k, o}),
      map({bi, h, s, o})};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, TypeRange{type}, ValueRange{x, w}, ValueRange{init}, maps,
             iterators,
             [](OpBuilder &nb, Location nl, ValueRange args) {
               Value m = arith::MulFOp::create(nb, nl, args[0], args[1]);
               Value a = arith::AddFOp::create(nb, nl, args[2], m);
               linalg::YieldOp::create(nb, nl, a);
             })
      ->getResult(0);
}

Value DeepSeekBuilder::concatLast(Value x, Value y) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t a = xType.getDimSize(3),
          c = cast<RankedTensorType>(y.getType()).getDimSize(3);
  auto type = RankedTensorType::get({kDyn, xType.getDimSize(1), kDyn, a + c},
                                    f32);
  Value out = empty(type, {batch, seq});
  auto insert = [&](Value part, int64_t offset, int64_t width) {
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0),
                                         b.getIndexAttr(0),
                                         b.getIndexAttr(offset)};
    SmallVector<OpFoldResult> sizes = {batch, b.getIndexAttr(xType.getDimSize(1)),
                                       seq, b.getIndexAttr(width)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    out = tensor::InsertSliceOp::create(b, part, out, offsets, sizes, strides);
  };
  insert(x, 0, a);
  insert(y, a, c);
  return out;
}

Value DeepSeekBuilder::attention(Value x, const std::string &p,
                                 int64_t layer) {
  int64_t hidden = config.hiddenSize, heads = config.numHeads;
  int64_t dn = ds.nopeDim, dr = ds.ropeDim, dv = ds.valueDim;
  int64_t r = ds.kvLoraRank, dq = dn + dr;
  bool ab = config.attentionBias;
  std::string a = p + "self_attn.";

  // Queries, from the low-rank q_a/q_b pair or q_proj, split per head into
  // the nope and rope rows.
  std::string qName = a + (ds.qLoraRank ? "q_b_proj.weight" : "q_proj.weight");
  int64_t qIn = ds.qLoraRank.value_or(hidden);
  Value qSource = x;
  if (ds.qLoraRank) {
    Value wqa = matrix(a + "q_a_proj.weight", {qIn, hidden});
    Value bqa = optionalBias(ab, a + "q_a_proj.bias", qIn);
    Value qaNorm = weight(a + "q_a_layernorm.weight", {qIn});
    if (failed())
      return {};
    qSource = rmsNorm(linear(x, wqa, bqa, qIn), qaNorm, 1e-6);
  }
  Value wqNope = rowsOf(qName, heads * dq, qIn, RowBlocks{heads, dq, {{0, dn}}},
                        {heads * dn, qIn}, /*isMatrix=*/true);
  Value wqPe = rowsOf(qName, heads * dq, qIn, RowBlocks{heads, dq, {{dn, dr}}},
                      {heads * dr, qIn}, /*isMatrix=*/true);
  // The latent and the shared rope key, from kv_a_proj_with_mqa's rows.
  std::string kvA = a + "kv_a_proj_with_mqa.";
  Value wc = rowsOf(kvA + "weight", r + dr, hidden, RowBlocks{1, 0, {{0, r}}},
                    {r, hidden}, /*isMatrix=*/true);
  Value wkPe =
      rowsOf(kvA + "weight", r + dr, hidden, RowBlocks{1, 0, {{r, dr}}},
             {dr, hidden}, /*isMatrix=*/true);
  Value bc, bkPe;
  if (ab) {
    bc = rowsOf(kvA + "bias", r + dr, 1, RowBlocks{1, 0, {{0, r}}}, {r});
    bkPe = rowsOf(kvA + "bias", r + dr, 1, RowBlocks{1, 0, {{r, dr}}}, {dr});
  }
  Value kvNorm = weight(a + "kv_a_layernorm.weight", {r});
  // kv_b_proj viewed as [H, dn + dv, r]: W_UK then W_UV in each head.
  std::string kvB = a + "kv_b_proj.weight";
  int64_t kvRows = heads * (dn + dv);
  // Float storage keeps the per-head up-projections f32; quantized storage
  // quantizes them too (groups along the latent).
  bool quantized = config.weights.quantized();
  Value wuk = rowsOf(kvB, kvRows, r, RowBlocks{heads, dn + dv, {{0, dn}}},
                     {heads, dn, r}, quantized);
  Value wuv = rowsOf(kvB, kvRows, r, RowBlocks{heads, dn + dv, {{dn, dv}}},
                     {heads, dv, r}, quantized);
  Value wo = matrix(a + "o_proj.weight", {hidden, heads * dv});
  Value bo = optionalBias(config.outputBias, a + "o_proj.bias", hidden);
  if (failed())
    return {};

  Value qNope = swap12(splitHeads(linear(qSource, wqNope, Value(), heads * dn),
                                  heads, dn));
  Value qPe = swap12(
      splitHeads(linear(qSource, wqPe, Value(), heads * dr), heads, dr));
  qPe = rope(qPe, ds.ropeInterleave);
  Value c = rmsNorm(linear(x, wc, bc, r), kvNorm, 1e-6);
  Value kPe = unitHeads(linear(x, wkPe, bkPe, dr), dr);
  kPe = dropUnitHeads(rope(kPe, ds.ropeInterleave), dr);

  // A generation step caches each token's latent and rope key, one row of
  // r + dr whose first r features are also the token's value. Dense
  // `prefill` then attends like `forward` (new sequences see only their own
  // tokens; the op's form is the compiler's choice, and the two functions
  // share the kernel); later steps attend over the cache.
  bool prefill = step && step->fresh && !ds.indexer;
  if (prefill)
    writeCache(b, *step, layer, concatLast(unitHeads(c, r), unitHeads(kPe, dr)),
               Value());
  if (step && !prefill) {
    // Over the cache, MQA over the latent (the absorbed form): queries
    // absorb W_UK (q_nope W_UK against the latent, q_pe against the rope
    // key), the values are the latents, and W_UV expands the output per
    // head.
    Value q = concatLast(perHead(qNope, wuk, /*transposed=*/false), qPe);
    Value latent = unitHeads(c, r);
    Value k = concatLast(latent, unitHeads(kPe, dr));
    Value o = ds.indexer
                  ? sparseStepAttention(q, k, latent, layer, x, qSource, a)
                  : DecoderBuilder::attention(
                        q, k, latent, layer, IntegerAttr(),
                        b.getF64FloatAttr(ds.softmaxScale));
    if (!o)
      return {};
    o = perHead(o, wuv, /*transposed=*/true);
    return linear(mergeHeads(o), wo, bo, hidden);
  }
  FloatAttr scale;
  if (std::abs(ds.softmaxScale * std::sqrt(double(dq)) - 1.0) > 1e-15)
    scale = b.getF64FloatAttr(ds.softmaxScale);
  // V3.2: each token attends to the keys its indexer selects (causal among
  // them), not to every earlier one.
  Value indices;
  if (ds.indexer) {
    std::optional<IndexerInputs> in = indexerInputs(x, qSource, a);
    if (!in)
      return {};
    indices = selectKeys(*in, in->k, /*positions=*/Value(),
                         /*lengths=*/Value());
  }
  auto type = RankedTensorType::get({kDyn, heads, kDyn, dv}, f32);
  Value o = MLAAttentionOp::create(b, type, qNope, qPe, c, kPe, wuk, wuv,
                                   /*q_offset=*/Value(), indices,
                                   /*causal=*/!indices, scale, MLAFormAttr());
  return linear(mergeHeads(o), wo, bo, hidden);
}

std::optional<DeepSeekBuilder::IndexerInputs>
DeepSeekBuilder::indexerInputs(Value x, Value qLow, const std::string &a) {
  const SparseIndexerConfig &ix = *ds.indexer;
  int64_t hidden = config.hiddenSize, h = ix.heads, d = ix.headDim;
  int64_t qIn = *ds.qLoraRank;
  std::string p = a + "indexer.";
  Value wq = matrix(p + "wq_b.weight", {h * d, qIn});
  Value wk = matrix(p + "wk.weight", {d, hidden});
  Value normW = weight(p + "k_norm.weight", {d});
  Value normB = weight(p + "k_norm.bias", {d});
  // transformers scales the head weights by heads^-1/2 after the
  // projection; folded into the projection here.
  Value wHeads = scaledMatrix(p + "weights_proj.weight", {h, hidden},
                              1.0 / std::sqrt(double(h)));
  if (failed())
    return std::nullopt;

  // Their first qk_rope_head_dim features rotated (rotate-half, not
  // interleaved as the attention's are).
  Value q = swap12(splitHeads(linear(qLow, wq, Value(), h * d), h, d));
  q = swap12(rope(q, /*interleaved=*/false));
  Value k = layerNorm(linear(x, wk, Value(), d), normW, normB, 1e-6);
  k = dropUnitHeads(rope(unitHeads(k, d), /*interleaved=*/false), d);
  return IndexerInputs{q, k, linear(x, wHeads, Value(), h)};
}

Value DeepSeekBuilder::selectKeys(const IndexerInputs &in, Value keys,
                                  Value positions, Value lengths, Value table) {
  Value scores = LightningIndexerOp::create(
      b, RankedTensorType::get({kDyn, kDyn, kDyn}, f32), in.q, keys, in.w,
      positions, lengths, table, /*causal=*/true, /*scale=*/FloatAttr());
  int64_t topk = ds.indexer->topk;
  // PyTorch's CPU top-k order among equal scores, so that ties (ReLU
  // zeros) select what transformers selects.
  auto type = RankedTensorType::get({kDyn, kDyn, topk}, b.getI64Type());
  return TopKOp::create(
      b, type, scores, lengths, b.getI64IntegerAttr(topk),
      TopKTiesAttr::get(b.getContext(), TopKTies::Introselect));
}

Value DeepSeekBuilder::sparseStepAttention(Value q, Value k, Value latent,
                                           int64_t layer, Value x, Value qLow,
                                           const std::string &a) {
  std::optional<IndexerInputs> in = indexerInputs(x, qLow, a);
  if (!in)
    return {};
  int64_t d = ds.indexer->headDim;
  writeCache(b, *step, layer, k, Value());
  writeIndexKeys(b, *step, layer, unitHeads(in->k, d));
  // New sequences see their own tokens; later steps every cached one,
  // the indexer's keys read from their pages through the block table.
  Value keys = in->k, table;
  if (!step->fresh) {
    keys = step->indexKeys[layer];
    table = step->blockTable;
  }
  // Each row scores its sequence's first context_lengths[b] tokens, causal
  // at its own position, and keeps the best index_topk of them.
  Value indices =
      selectKeys(*in, keys, step->positions, step->contextLengths, table);
  auto qType = cast<RankedTensorType>(q.getType());
  int64_t dv = cast<RankedTensorType>(latent.getType()).getDimSize(3);
  auto type = RankedTensorType::get({kDyn, qType.getDimSize(1), kDyn, dv}, f32);
  FloatAttr scale = b.getF64FloatAttr(ds.softmaxScale);
  if (step->fresh)
    return SparseAttentionOp::create(b, type, q, k, latent, indices,
                                     /*sink=*/Value(), scale);
  // Over the pages: the selected rows of the latent cache (values: their
  // leading kv_lora features), read where the attention loads them.
  bool fp8 = !step->keyScales.empty();
  auto [values, valueScales] = valuePool(b, *step, layer, dv);
  return PagedAttentionOp::create(
      b, type, q, step->keys[layer], values, step->blockTable,
      step->contextLengths, step->positions, /*sink=*/Value(),
      fp8 ? step->keyScales[layer] : Value(), valueScales, indices,
      /*mask=*/Value(), /*causal=*/false, IntegerAttr(), scale, FloatAttr());
}

Value DeepSeekBuilder::moe(Value x, const std::string &p) {
  int64_t hidden = config.hiddenSize, e = ds.numExperts;
  int64_t inter = ds.moeIntermediateSize, k = ds.expertsPerToken;
  std::string m = p + "mlp.";
  Value gate = matrix(m + "gate.weight", {e, hidden});
  Value bias = weight(m + "gate.e_score_correction_bias", {e});

  // Every expert's gate and up rows ([E, I, hidden] each) and down rows
  // ([E, hidden, I]), in PyTorch's [out, in] order.
  std::vector<float> gates, ups, downs;
  auto addExpert = [&](ArrayRef<float> g, ArrayRef<float> u,
                       ArrayRef<float> d) {
    gates.insert(gates.end(), g.begin(), g.end());
    ups.insert(ups.end(), u.begin(), u.end());
    downs.insert(downs.end(), d.begin(), d.end());
  };
  if (hasWeight(m + "experts.gate_up_proj")) {
    // transformers' fused layout: gate_up_proj [E, 2I, hidden] (gate rows
    // first), down_proj [E, hidden, I].
    auto gu = weightData(m + "experts.gate_up_proj", {e, 2 * inter, hidden});
    auto dp = weightData(m + "experts.down_proj", {e, hidden, inter});
    if (!gu || !dp)
      return {};
    ArrayRef<float> guRef(*gu), dpRef(*dp);
    int64_t block = inter * hidden;
    for (int64_t i = 0; i < e; ++i)
      addExpert(guRef.slice(2 * i * block, block),
                guRef.slice((2 * i + 1) * block, block),
                dpRef.slice(i * block, block));
  } else {
    for (int64_t i = 0; i < e; ++i) {
      std::string ex = m + "experts." + std::to_string(i) + ".";
      auto g = weightData(ex + "gate_proj.weight", {inter, hidden});
      auto u = weightData(ex + "up_proj.weight", {inter, hidden});
      auto d = weightData(ex + "down_proj.weight", {hidden, inter});
      if (!g || !u || !d)
        return {};
      addExpert(*g, *u, *d);
    }
  }
  int64_t shared = inter * ds.sharedExperts;
  Value sg, su, sd;
  if (shared) {
    std::string s = m + "shared_experts.";
    sg = matrix(s + "gate_proj.weight", {shared, hidden});
    su = matrix(s + "up_proj.weight", {shared, hidden});
    sd = matrix(s + "down_proj.weight", {hidden, shared});
  }
  if (failed())
    return {};

  // The router's weight per expert (0 for the unselected ones), then the
  // k selected experts of each token and their weights: the experts with a
  // positive weight are the k largest.
  Value w = buildExpertWeights(b, linear(x, gate, Value(), e), bias, ds,
                               batch, seq);
  auto idxType = RankedTensorType::get({kDyn, kDyn, k}, b.getI64Type());
  Value idx = TopKOp::create(b, idxType, w, /*lengths=*/Value(),
                             b.getI64IntegerAttr(k), TopKTiesAttr());
  auto wType = RankedTensorType::get({kDyn, kDyn, k}, f32);
  AffineMap id = b.getMultiDimIdentityMap(3);
  Value picked =
      linalg::GenericOp::create(
          b, TypeRange{wType}, ValueRange{idx},
          ValueRange{empty(wType, {batch, seq})},
          ArrayRef<AffineMap>{id, id},
          SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value ei = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                  a[0]);
            Value v = tensor::ExtractOp::create(
                nb, nl, w,
                ValueRange{linalg::IndexOp::create(nb, nl, 0),
                           linalg::IndexOp::create(nb, nl, 1), ei});
            linalg::YieldOp::create(nb, nl, v);
          })
          ->getResult(0);
  Value routed = ExpertsOp::create(
      b, x.getType(), x, matrixConstant({e, inter, hidden}, gates),
      matrixConstant({e, inter, hidden}, ups),
      matrixConstant({e, hidden, inter}, downs), idx, picked, FloatAttr());
  if (!shared)
    return routed;
  return add(routed, swigluMLP(x, sg, Value(), su, Value(), sd, Value(),
                               shared));
}

Value DeepSeekBuilder::layer(Value h, int64_t i) {
  std::string p = "model.layers." + std::to_string(i) + ".";
  int64_t hidden = config.hiddenSize;
  Value inNorm = weight(p + "input_layernorm.weight", {hidden});
  Value postNorm = weight(p + "post_attention_layernorm.weight", {hidden});
  if (failed())
    return {};
  Value a = attention(rmsNorm(h, inNorm), p, i);
  if (failed())
    return {};
  Value r = add(h, a);
  Value m = rmsNorm(r, postNorm);
  Value mlp;
  if (ds.moeLayers[i]) {
    mlp = moe(m, p);
  } else {
    int64_t inter = config.intermediateSize;
    Value wg = matrix(p + "mlp.gate_proj.weight", {inter, hidden});
    Value wu = matrix(p + "mlp.up_proj.weight", {inter, hidden});
    Value wd = matrix(p + "mlp.down_proj.weight", {hidden, inter});
    if (failed())
      return {};
    mlp = swigluMLP(m, wg, Value(), wu, Value(), wd, Value(), inter);
  }
  if (failed())
    return {};
  return add(r, mlp);
}

OwningOpRef<ModuleOp>
mnemo::buildDeepSeekV3(const ModelConfig &config,
                       const SafetensorsCheckpoint &weights,
                       MLIRContext *context, std::string &error) {
  // The generation steps cache one row per token: the latent and the
  // rope key (DeepSeekBuilder::attention), the latent also the token's
  // value (no value pool), and for V3.2 the indexer's key.
  const DeepSeekConfig &ds = *config.deepseek;
  return buildDecoderModule(
      config, weights, context, error,
      [&](ImplicitLocOpBuilder &b, Value ids, CacheStep *step) {
        return DeepSeekBuilder(config, weights, b, error, step).build(ids);
      },
      config.kvCache.generation
          ? std::optional<CacheLayout>(
                CacheLayout{1, ds.kvLoraRank + ds.ropeDim, /*valueDim=*/0,
                            ds.indexer ? ds.indexer->headDim : 0})
          : std::nullopt);
}

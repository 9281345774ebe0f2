//===- DeepSeekV4.cpp - DeepSeek-V4 decoder builder -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Emits transformers 5.17's DeepseekV4ForCausalLM forward pass over
// `input_ids` [B, S] at positions 0..S-1, as docs/DeepSeekV4.md sets it
// out. The residual is `hc_mult` streams [B, S, n, hidden]; each layer
// mixes them into the attention's input and places its output back
// (hyper-connections, with Sinkhorn-normalized mixing), then does the same
// around the mixture of experts. The head collapses the streams, normalizes
// and projects.
//
// The experts: sqrt(softplus) router scores; the k experts are those of
// the best biased scores, or for hash-routed layers the checkpoint's table
// `tid2eid` at the token; their weights are the unbiased scores normalized
// to sum 1 and scaled; one mnemo.experts with the clamped SwiGLU, and the
// shared experts beside it.
//
//===----------------------------------------------------------------------===//

#include "DeepSeekV4.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "mnemo/Frontend/GenerationStep.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;

namespace {
using IT = utils::IteratorType;


Value sigmoid(OpBuilder &nb, Location l, Value x) {
  Value one = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(1.0));
  Value e = math::ExpOp::create(nb, l, arith::NegFOp::create(nb, l, x));
  return arith::DivFOp::create(nb, l, one,
                               arith::AddFOp::create(nb, l, one, e));
}
} // namespace

Value DeepSeekV4Builder::generic(
    RankedTensorType type, ValueRange dyn, ValueRange ins,
    ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> its,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body, Value init) {
  if (!init)
    init = empty(type, dyn);
  return linalg::GenericOp::create(
             b, TypeRange{type}, ins, ValueRange{init}, maps, its,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(nb, l, body(nb, l, a));
             })
      ->getResult(0);
}

Value DeepSeekV4Builder::ones(int64_t size) {
  return constant({size}, std::vector<float>(size, 1.0f));
}

DecoderBuilder::RowBlocks DeepSeekV4Builder::ropeFirstRows(int64_t heads,
                                                           int64_t d) const {
  int64_t r = v4.ropeDim;
  return RowBlocks{heads, d, {{d - r, r}, {0, d - r}}};
}

Value DeepSeekV4Builder::ropeAt(Value x, Value positions, bool compressed) {
  return compressed ? rope(x, /*interleaved=*/true, positions,
                           v4.compressTheta, v4.compressScaling, v4.ropeDim)
                    : rope(x, /*interleaved=*/true, positions,
                           config.ropeTheta, config.ropeScaling, v4.ropeDim);
}

Value DeepSeekV4Builder::streamMix(Value streams, const std::string &fnName,
                                   int64_t rows) {
  int64_t n = v4.hcMult, hidden = config.hiddenSize;
  Value fn = matrix(fnName, {rows, n * hidden});
  if (failed())
    return {};
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
  Value flat =
      tensor::CollapseShapeOp::create(b, act({n * hidden}), streams, groups);
  return linear(rmsNorm(flat, ones(n * hidden)), fn, Value(), rows);
}

Value DeepSeekV4Builder::collapseStreams(Value streams, Value w) {
  MLIRContext *ctx = b.getContext();
  // (b, s, h, i): sum over the streams i.
  Value init = linalg::FillOp::create(
                   b, ValueRange{f32Const(b, b.getLoc(), 0.0)},
                   ValueRange{empty(act({config.hiddenSize}), {batch, seq})})
                   .getResult(0);
  return generic(act({config.hiddenSize}), {}, {w, streams},
                 {builders::projection(ctx, 4, {0, 1, 3}), builders::projection(ctx, 4, {0, 1, 3, 2}),
                  builders::projection(ctx, 4, {0, 1, 2})},
                 {IT::parallel, IT::parallel, IT::parallel, IT::reduction},
                 [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                   return arith::AddFOp::create(
                       nb, l, a[2], arith::MulFOp::create(nb, l, a[0], a[1]));
                 },
                 init);
}

std::optional<DeepSeekV4Builder::Mixing>
DeepSeekV4Builder::mixStreams(Value streams, const std::string &prefix) {
  int64_t n = v4.hcMult, rows = (2 + n) * n;
  std::optional<std::vector<float>> base = weightData(prefix + "_base", {rows});
  std::optional<std::vector<float>> scale = weightData(prefix + "_scale", {3});
  Value mix = streamMix(streams, prefix + "_fn", rows);
  if (failed() || !base || !scale || !mix)
    return std::nullopt;
  MLIRContext *ctx = b.getContext();
  double eps = v4.hcEps;
  auto slice = [&](int64_t offset, int64_t size) -> Value {
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0),
                                         b.getIndexAttr(offset)};
    SmallVector<OpFoldResult> sizes = {batch, seq, b.getIndexAttr(size)};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, act({size}), mix, offsets, sizes,
                                          strides);
  };
  AffineMap id3 = b.getMultiDimIdentityMap(3);
  SmallVector<IT> par3(3, IT::parallel), par4(4, IT::parallel);
  // pre = sigmoid(a * s0 + b) + eps, post = 2 sigmoid(a * s1 + b).
  auto gate = [&](int64_t offset, double s, double mul, double add) {
    Value bias = constant({n}, ArrayRef<float>(*base).slice(offset, n));
    return generic(act({n}), {batch, seq}, {slice(offset, n), bias},
                   {id3, builders::projection(ctx, 3, {2}), id3}, par3,
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     Value z = arith::AddFOp::create(
                         nb, l, arith::MulFOp::create(nb, l, a[0],
                                                      f32Const(nb, l, s)),
                         a[1]);
                     Value g = arith::MulFOp::create(nb, l, sigmoid(nb, l, z),
                                                     f32Const(nb, l, mul));
                     return arith::AddFOp::create(nb, l, g,
                                                  f32Const(nb, l, add));
                   });
  };
  Mixing m;
  m.post = gate(n, (*scale)[1], 2.0, 0.0);
  Value pre = gate(0, (*scale)[0], 1.0, eps);

  // comb: a row softmax of a * s2 + b, plus eps, then a column
  // normalization, then (iters - 1) rounds of rows then columns.
  RankedTensorType combType = act({n, n});
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
  Value logits = tensor::ExpandShapeOp::create(
      b, combType, slice(2 * n, n * n), groups,
      SmallVector<OpFoldResult>{batch, seq, b.getIndexAttr(n),
                                b.getIndexAttr(n)});
  Value combBias = constant({n, n}, ArrayRef<float>(*base).slice(2 * n, n * n));
  AffineMap id4 = b.getMultiDimIdentityMap(4);
  double s2 = (*scale)[2];
  logits = generic(combType, {batch, seq}, {logits, combBias},
                   {id4, builders::projection(ctx, 4, {2, 3}), id4}, par4,
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     return arith::AddFOp::create(
                         nb, l,
                         arith::MulFOp::create(nb, l, a[0], f32Const(nb, l, s2)),
                         a[1]);
                   });
  // Each element of [B, S, n, n] runs the whole normalization of its
  // (b, s) matrix on scalars (n is small) and keeps its own entry: the
  // iterations are a loop with n * n scalar carries, not tensors.
  Value comb = generic(
      combType, {batch, seq}, {logits}, {id4, id4}, par4,
      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
        Value bi = linalg::IndexOp::create(nb, l, 0);
        Value si = linalg::IndexOp::create(nb, l, 1);
        SmallVector<Value> c;
        for (int64_t r = 0; r < n; ++r)
          for (int64_t k = 0; k < n; ++k)
            c.push_back(tensor::ExtractOp::create(
                nb, l, logits,
                ValueRange{bi, si, arith::ConstantIndexOp::create(nb, l, r),
                           arith::ConstantIndexOp::create(nb, l, k)}));
        auto normalize = [&](OpBuilder &ob, SmallVector<Value> &v, bool rows) {
          for (int64_t line = 0; line < n; ++line) {
            auto at = [&](int64_t k) -> Value & {
              return rows ? v[line * n + k] : v[k * n + line];
            };
            Value sum = f32Const(ob, l, eps);
            for (int64_t k = 0; k < n; ++k)
              sum = arith::AddFOp::create(ob, l, sum, at(k));
            for (int64_t k = 0; k < n; ++k)
              at(k) = arith::DivFOp::create(ob, l, at(k), sum);
          }
        };
        // Row softmax plus eps.
        for (int64_t r = 0; r < n; ++r) {
          Value mx = c[r * n];
          for (int64_t k = 1; k < n; ++k)
            mx = arith::MaximumFOp::create(nb, l, mx, c[r * n + k]);
          Value sum = f32Const(nb, l, 0.0);
          for (int64_t k = 0; k < n; ++k) {
            c[r * n + k] = math::ExpOp::create(
                nb, l, arith::SubFOp::create(nb, l, c[r * n + k], mx));
            sum = arith::AddFOp::create(nb, l, sum, c[r * n + k]);
          }
          for (int64_t k = 0; k < n; ++k)
            c[r * n + k] = arith::AddFOp::create(
                nb, l, arith::DivFOp::create(nb, l, c[r * n + k], sum),
                f32Const(nb, l, eps));
        }
        normalize(nb, c, /*rows=*/false);
        if (v4.sinkhornIters > 1) {
          auto loop = scf::ForOp::create(
              nb, l, arith::ConstantIndexOp::create(nb, l, 0),
              arith::ConstantIndexOp::create(nb, l, v4.sinkhornIters - 1),
              arith::ConstantIndexOp::create(nb, l, 1), c,
              [&](OpBuilder &lb, Location, Value, ValueRange carried) {
                SmallVector<Value> v(carried);
                normalize(lb, v, /*rows=*/true);
                normalize(lb, v, /*rows=*/false);
                scf::YieldOp::create(lb, l, v);
              });
          c.assign(loop.getResults().begin(), loop.getResults().end());
        }
        // This element's entry: c[i * n + j].
        Value flat = arith::AddIOp::create(
            nb, l,
            arith::MulIOp::create(nb, l, linalg::IndexOp::create(nb, l, 2),
                                  arith::ConstantIndexOp::create(nb, l, n)),
            linalg::IndexOp::create(nb, l, 3));
        Value out = c[0];
        for (int64_t k = 1; k < n * n; ++k)
          out = arith::SelectOp::create(
              nb, l,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, flat,
                                    arith::ConstantIndexOp::create(nb, l, k)),
              c[k], out);
        return out;
      });
  m.comb = comb;
  m.input = collapseStreams(streams, pre);
  return m;
}

Value DeepSeekV4Builder::placeOutput(Value streams, Value out,
                                     const Mixing &m) {
  MLIRContext *ctx = b.getContext();
  int64_t n = v4.hcMult, hidden = config.hiddenSize;
  RankedTensorType type = act({n, hidden});
  AffineMap id4 = b.getMultiDimIdentityMap(4);
  Value placed = generic(
      type, {batch, seq}, {m.post, out},
      {builders::projection(ctx, 4, {0, 1, 2}), builders::projection(ctx, 4, {0, 1, 3}), id4},
      SmallVector<IT>(4, IT::parallel),
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::MulFOp::create(nb, l, a[0], a[1]);
      });
  // (b, s, i, h, j): + comb[b, s, j, i] * streams[b, s, j, h].
  return generic(
      type, {}, {m.comb, streams},
      {builders::projection(ctx, 5, {0, 1, 4, 2}), builders::projection(ctx, 5, {0, 1, 4, 3}),
       builders::projection(ctx, 5, {0, 1, 2, 3})},
      {IT::parallel, IT::parallel, IT::parallel, IT::parallel, IT::reduction},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, l, a[2],
                                     arith::MulFOp::create(nb, l, a[0], a[1]));
      },
      placed);
}

Value DeepSeekV4Builder::moe(Value x, int64_t i) {
  std::string p = "model.layers." + std::to_string(i) + ".ffn.";
  int64_t hidden = config.hiddenSize, e = v4.numExperts;
  int64_t k = v4.expertsPerToken, inter = v4.moeIntermediateSize;
  MLIRContext *ctx = b.getContext();
  Value gate = matrix(p + "gate.weight", {e, hidden});
  Value table, bias;
  if (v4.hashRouted[i])
    table = indexWeight(p + "gate.tid2eid", {config.vocabSize, k}, e);
  else
    bias = weight(p + "gate.bias", {e});
  std::vector<float> gates, ups, downs;
  for (int64_t j = 0; j < e && !failed(); ++j) {
    std::string ex = p + "experts." + std::to_string(j) + ".";
    auto g = weightData(ex + "w1.weight", {inter, hidden});
    auto u = weightData(ex + "w3.weight", {inter, hidden});
    auto d = weightData(ex + "w2.weight", {hidden, inter});
    if (!g || !u || !d)
      return {};
    gates.insert(gates.end(), g->begin(), g->end());
    ups.insert(ups.end(), u->begin(), u->end());
    downs.insert(downs.end(), d->begin(), d->end());
  }
  int64_t shared = inter * v4.sharedExperts;
  std::string s = p + "shared_experts.";
  Value sg = matrix(s + "w1.weight", {shared, hidden});
  Value su = matrix(s + "w3.weight", {shared, hidden});
  Value sd = matrix(s + "w2.weight", {hidden, shared});
  if (failed())
    return {};

  AffineMap id3 = b.getMultiDimIdentityMap(3);
  SmallVector<IT> par3(3, IT::parallel);
  // sqrt(softplus(z)), softplus(z) = max(z, 0) + log1p(exp(-|z|)).
  Value scores = generic(
      act({e}), {batch, seq}, {linear(x, gate, Value(), e)}, {id3, id3}, par3,
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value zero = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0.0));
        Value sp = arith::AddFOp::create(
            nb, l, arith::MaximumFOp::create(nb, l, a[0], zero),
            math::Log1pOp::create(
                nb, l,
                math::ExpOp::create(
                    nb, l,
                    arith::NegFOp::create(nb, l,
                                          math::AbsFOp::create(nb, l, a[0])))));
        return math::SqrtOp::create(nb, l, sp);
      });
  auto idxType = RankedTensorType::get({kDyn, kDyn, k}, b.getI64Type());
  Value idx;
  if (table) {
    // The experts of token ids[b, s]: row ids[b, s] of tid2eid.
    idx = generic(idxType, {batch, seq}, {ids},
                  {builders::projection(ctx, 3, {0, 1}), id3}, par3,
                  [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                    Value row = arith::IndexCastOp::create(
                        nb, l, nb.getIndexType(), a[0]);
                    return tensor::ExtractOp::create(
                        nb, l, table,
                        ValueRange{row, linalg::IndexOp::create(nb, l, 2)});
                  });
  } else {
    Value biased = generic(act({e}), {batch, seq}, {scores, bias},
                           {id3, builders::projection(ctx, 3, {2}), id3}, par3,
                           [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                             return arith::AddFOp::create(nb, l, a[0], a[1]);
                           });
    idx = TopKOp::create(b, idxType, biased, /*lengths=*/Value(),
                         b.getI64IntegerAttr(k), TopKTiesAttr());
  }
  // The unbiased scores of the selected experts, normalized to sum 1 and
  // scaled.
  auto wType = RankedTensorType::get({kDyn, kDyn, k}, f32);
  Value picked = generic(
      wType, {batch, seq}, {idx}, {id3, id3}, par3,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value ei = arith::IndexCastOp::create(nb, l, nb.getIndexType(), a[0]);
        return tensor::ExtractOp::create(
            nb, l, scores,
            ValueRange{linalg::IndexOp::create(nb, l, 0),
                       linalg::IndexOp::create(nb, l, 1), ei});
      });
  auto rowType = RankedTensorType::get({kDyn, kDyn}, f32);
  Value total = generic(
      rowType, {}, {picked}, {id3, builders::projection(ctx, 3, {0, 1})},
      {IT::parallel, IT::parallel, IT::reduction},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, l, a[1], a[0]);
      },
      linalg::FillOp::create(b, ValueRange{f32Const(b, b.getLoc(), 0.0)},
                             ValueRange{empty(rowType, {batch, seq})})
          .getResult(0));
  double routed = v4.routedScalingFactor;
  Value w = generic(
      wType, {batch, seq}, {picked, total}, {id3, builders::projection(ctx, 3, {0, 1}), id3},
      par3, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value d =
            arith::AddFOp::create(nb, l, a[1], f32Const(nb, l, 1e-20));
        return arith::MulFOp::create(nb, l,
                                     arith::DivFOp::create(nb, l, a[0], d),
                                     f32Const(nb, l, routed));
      });
  FloatAttr limit = b.getF64FloatAttr(v4.swigluLimit);
  Value out = ExpertsOp::create(
      b, x.getType(), x, matrixConstant({e, inter, hidden}, gates),
      matrixConstant({e, inter, hidden}, ups),
      matrixConstant({e, hidden, inter}, downs), idx, w, limit);
  Value act = SwiGluOp::create(b, linear(x, sg, Value(), shared),
                               linear(x, su, Value(), shared), limit);
  return add(out, linear(act, sd, Value(), hidden));
}

Value DeepSeekV4Builder::streamLayer(Value streams, int64_t i) {
  std::string p = "model.layers." + std::to_string(i) + ".";
  int64_t hidden = config.hiddenSize;
  Value attnNorm = weight(p + "attn_norm.weight", {hidden});
  Value ffnNorm = weight(p + "ffn_norm.weight", {hidden});
  if (failed())
    return {};
  std::optional<Mixing> m = mixStreams(streams, p + "hc_attn");
  if (!m)
    return {};
  Value out = attention(rmsNorm(m->input, attnNorm), i);
  if (!out)
    return {};
  streams = placeOutput(streams, out, *m);
  m = mixStreams(streams, p + "hc_ffn");
  if (!m)
    return {};
  out = moe(rmsNorm(m->input, ffnNorm), i);
  if (!out)
    return {};
  return placeOutput(streams, out, *m);
}

Value DeepSeekV4Builder::forward(Value inputIds) {
  ids = inputIds;
  int64_t vocab = config.vocabSize, hidden = config.hiddenSize;
  int64_t n = v4.hcMult;
  Value embed =
      endMatrix("model.embed_tokens.weight", {vocab, hidden}, /*head=*/false);
  Value finalNorm = weight("model.norm.weight", {hidden});
  Value head = config.tieWordEmbeddings
                   ? embed
                   : endMatrix(hasWeight("head.weight") ? "head.weight"
                                                        : "lm_head.weight",
                               {vocab, hidden}, /*head=*/true);
  std::optional<std::vector<float>> headBase =
      weightData("model.hc_head.hc_base", {n});
  std::optional<std::vector<float>> headScale =
      weightData("model.hc_head.hc_scale", {1});
  if (failed() || !headBase || !headScale)
    return {};
  batch = tensor::DimOp::create(b, ids, 0);
  seq = tensor::DimOp::create(b, ids, 1);
  pos = step ? step->positions : positions();
  MLIRContext *ctx = b.getContext();
  // Every stream starts as the embedding.
  Value h = EmbeddingOp::create(b, act({hidden}), embed, ids);
  Value streams = generic(
      act({n, hidden}), {batch, seq}, {h},
      {builders::projection(ctx, 4, {0, 1, 3}), b.getMultiDimIdentityMap(4)},
      SmallVector<IT>(4, IT::parallel),
      [](OpBuilder &, Location, ValueRange a) -> Value { return a[0]; });
  Location file = b.getLoc();
  for (int64_t i = 0; i < config.numLayers; ++i) {
    b.setLoc(tensorLoc("model.layers." + Twine(i)));
    streams = streamLayer(streams, i);
    b.setLoc(file);
    if (failed() || !streams)
      return {};
  }
  // hc_head: pre = sigmoid(mix * scale + base) + eps, no post or comb.
  Value mix = streamMix(streams, "model.hc_head.hc_fn", n);
  if (!mix)
    return {};
  AffineMap id3 = b.getMultiDimIdentityMap(3);
  double scale = (*headScale)[0], eps = v4.hcEps;
  Value pre = generic(
      act({n}), {batch, seq}, {mix, constant({n}, *headBase)},
      {id3, builders::projection(ctx, 3, {2}), id3}, SmallVector<IT>(3, IT::parallel),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value z = arith::AddFOp::create(
            nb, l, arith::MulFOp::create(nb, l, a[0], f32Const(nb, l, scale)),
            a[1]);
        return arith::AddFOp::create(nb, l, sigmoid(nb, l, z),
                                     f32Const(nb, l, eps));
      });
  Value x = collapseStreams(streams, pre);
  if (step && step->lastTokenLogits)
    x = lastTokenRows(b, *step, x);
  return linear(rmsNorm(x, finalNorm), head, Value(), vocab);
}

StepLayerCache DeepSeekV4Builder::cacheOf(const ModelConfig &config,
                                          int64_t i) {
  const DeepSeekV4Config &v4 = *config.deepseekV4;
  using Memory = DeepSeekV4Config::Memory;
  int64_t d = config.headDim, di = v4.indexer.headDim;
  // What the steps read, which the runtime keeps (and `mnemoc --report`
  // counts): the keys of the last `window` tokens, the compressor rows of
  // the open window (and, overlapping, of the one before), one entry per
  // `rate` tokens on pages of their own.
  StepLayerCache layer{1, d, /*valueDim=*/0, std::nullopt};
  layer.readWindow = v4.window;
  if (v4.memory[i] == Memory::Window)
    return layer;
  bool csa = v4.memory[i] == Memory::CSA;
  int64_t rate = csa ? v4.csaRate : v4.hcaRate;
  int64_t width = csa ? 2 * d : d, open = csa ? 2 * rate : rate;
  layer.extraPools = {{"compressor", 2 * width, 0, open},
                      {"entries", d, rate, 0}};
  if (csa)
    layer.extraPools.append({{"index_compressor", 4 * di, 0, open},
                             {"index_entries", di, rate, 0}});
  return layer;
}

OwningOpRef<ModuleOp>
mnemo::buildDeepSeekV4(const ModelConfig &config,
                       const SafetensorsCheckpoint &weights,
                       MLIRContext *context, std::string &error) {
  context->loadDialect<math::MathDialect, scf::SCFDialect>();
  std::optional<CacheLayout> cache;
  if (config.kvCache.generation) {
    cache.emplace(CacheLayout{1, config.headDim, 0});
    for (int64_t i = 0; i < config.numLayers; ++i)
      cache->perLayer.push_back(DeepSeekV4Builder::cacheOf(config, i));
  }
  return buildDecoderModule(
      config, weights, context, error,
      [&](ImplicitLocOpBuilder &b, Value ids, CacheStep *step) {
        return DeepSeekV4Builder(config, weights, b, error, step)
            .forward(ids);
      },
      cache);
}

//===- ContribAttention.cpp - ONNX Runtime's attention ops ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// com.microsoft MultiHeadAttention and GroupQueryAttention as mnemo.attention.
//
// MultiHeadAttention: query [B, S, N*D]; key/value [B, L, N*D] (or already
// split [B, N, L, D]); `unidirectional` is causal (bottom-right when L > S);
// key_padding_mask [B, L] (0 = padding) or [B] (valid lengths) masks keys
// with mask_filter_value (added, as ORT does, not -inf); attention_bias
// [B|1, N|1, S, L] is added. Not imported yet: the packed `bias` input and
// past_key/past_value.
//
// GroupQueryAttention: query [B, S, N*D] with key/value [B, S, Nkv*D], or
// packed QKV in query; past_key/past_value [B, Nkv, P, D] hold exactly the
// past (present = past ++ new); seqlens_k[b] + 1 is the number of valid keys
// of batch entry b, so query s sits at position seqlens_k[b] + 1 - S + s,
// sees keys up to it (causal), at most `local_window_size` of them, and no
// key past the valid ones; with do_rotary, Q and K are rotated at those
// positions from cos_cache/sin_cache before K enters the cache.
//
//===----------------------------------------------------------------------===//

#include "AttentionMasks.h"
#include "Importer.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {

/// Heads of a 3-D [B, S, N*D] input, or a 4-D [B, N, S, D] one as is.
FailureOr<Value> heads(NodeContext &ctx, Value x, int64_t n,
                       llvm::StringRef what) {
  auto t = cast<RankedTensorType>(x.getType());
  if (t.getRank() == 4 && t.getDimSize(1) == n)
    return x;
  if (t.getRank() != 3 || t.isDynamicDim(2) || t.getDimSize(2) % n != 0) {
    (void)ctx.error(llvm::Twine(what) + " must be [B, S, " + llvm::Twine(n) +
                    "*D] or [B, " + llvm::Twine(n) + ", S, D]");
    return failure();
  }
  return splitHeads(ctx.builder(), ctx.getLoc(), x, n);
}

/// mnemo.attention, verified, merged back to [B, S, N*Dv].
LogicalResult emit(NodeContext &ctx, Value q, Value k, Value v, Value mask,
                   bool causal, Value qOffset, IntegerAttr window,
                   FloatAttr scale, FloatAttr softcap) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  auto qType = cast<RankedTensorType>(q.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  auto resultType = RankedTensorType::get(
      {qType.getDimSize(0), qType.getDimSize(1), qType.getDimSize(2),
       vType.getDimSize(3)},
      qType.getElementType());
  Value y = AttentionOp::create(b, loc, resultType, q, k, v, mask,
                                /*sink=*/Value(), qOffset,
                                causal ? b.getUnitAttr() : UnitAttr(), window,
                                scale, softcap);
  if (failed(ctx.verifyBuilt(y.getDefiningOp(),
                             "inputs do not form a valid attention")))
    return failure();
  ctx.raised(("attention (com.microsoft." + ctx.proto().op_type() + ")"));
  return ctx.setOutput(0, mergeHeads(b, loc, y));
}

/// An additive f32 mask [B, 1, 1, L] from a key padding mask: [B, L]
/// (0 = padding) or [B] (valid lengths); hidden keys get `filter`.
Value keyPaddingMask(OpBuilder &b, Location loc, Value pad, Value k,
                     double filter) {
  auto padType = cast<RankedTensorType>(pad.getType());
  SmallVector<OpFoldResult> ks = builders::tensorSizes(b, loc, k);
  Type f32 = b.getF32Type();
  Value init = builders::emptyTensor(
      b, loc, {ks[0], b.getIndexAttr(1), b.getIndexAttr(1), ks[2]}, f32);
  auto id = AffineMap::getMultiDimIdentityMap(4, b.getContext());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, init,
             ArrayRef<AffineMap>{id}, builders::iterators(4),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               Value bi = linalg::IndexOp::create(nb, nl, 0);
               Value j = linalg::IndexOp::create(nb, nl, 3);
               Value hidden;
               if (padType.getRank() == 2) {
                 Value m = tensor::ExtractOp::create(nb, nl, pad,
                                                     ValueRange{bi, j});
                 hidden = arith::CmpIOp::create(
                     nb, nl, arith::CmpIPredicate::eq, m,
                     arith::ConstantIntOp::create(nb, nl, m.getType(), 0));
               } else {
                 Value len = arith::IndexCastOp::create(
                     nb, nl, nb.getIndexType(),
                     tensor::ExtractOp::create(nb, nl, pad, ValueRange{bi}));
                 hidden = arith::CmpIOp::create(
                     nb, nl, arith::CmpIPredicate::sge, j, len);
               }
               linalg::YieldOp::create(
                   nb, nl,
                   arith::SelectOp::create(
                       nb, nl, hidden, builders::floatConst(nb, nl, f32, filter),
                       builders::floatConst(nb, nl, f32, 0.0))
                       .getResult());
             })
      .getResult(0);
}

LogicalResult multiHeadAttention(NodeContext &ctx) {
  int64_t n = ctx.getInt("num_heads", 0);
  if (n <= 0)
    return ctx.error("num_heads must be positive");
  if (ctx.hasInput(3))
    return ctx.error("the packed bias input is not supported yet");
  if (ctx.hasInput(6) || ctx.hasInput(7))
    return ctx.error("past_key/past_value are not supported yet");
  for (unsigned i = 1; i < ctx.numOutputs(); ++i)
    if (!ctx.proto().output(i).empty())
      return ctx.error("only the output Y is supported yet");
  if (!ctx.hasInput(1) || !ctx.hasInput(2))
    return ctx.error("packed QKV (no key/value inputs) is not supported yet");
  FailureOr<Value> q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  if (failed(q) || failed(k) || failed(v))
    return failure();
  FailureOr<Value> qh = heads(ctx, *q, n, "query"),
                   kh = heads(ctx, *k, n, "key"),
                   vh = heads(ctx, *v, n, "value");
  if (failed(qh) || failed(kh) || failed(vh))
    return failure();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  Value mask;
  if (ctx.hasInput(4)) {
    FailureOr<Value> pad = ctx.input(4);
    if (failed(pad))
      return failure();
    auto t = cast<RankedTensorType>(pad->getType());
    if (!isa<IntegerType>(t.getElementType()) || t.getRank() < 1 ||
        t.getRank() > 2)
      return ctx.error("key_padding_mask must be an integer [B, L] or [B]");
    mask = keyPaddingMask(b, loc, *pad, *kh,
                          ctx.getFloat("mask_filter_value", -10000.0f));
  }
  if (ctx.hasInput(5)) {
    FailureOr<Value> bias = ctx.input(5);
    if (failed(bias))
      return failure();
    if (!mask) {
      mask = *bias;
    } else {
      auto bt = cast<RankedTensorType>(bias->getType());
      FailureOr<SmallVector<int64_t>> shape = broadcastShapes(
          cast<RankedTensorType>(mask.getType()).getShape(), bt.getShape());
      if (failed(shape))
        return ctx.error("attention_bias does not broadcast with the mask");
      FailureOr<Value> sum = broadcastElementwise(
          ctx, {mask, *bias}, b.getF32Type(),
          [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return arith::AddFOp::create(
                nb, nl, a[0], builders::castFloat(nb, nl, a[1],
                                                  nb.getF32Type()));
          },
          *shape);
      if (failed(sum))
        return failure();
      mask = *sum;
    }
  }
  bool causal = ctx.getInt("unidirectional", 0) != 0;
  Value qOffset;
  int64_t s = cast<RankedTensorType>(qh->getType()).getDimSize(2);
  int64_t l = cast<RankedTensorType>(kh->getType()).getDimSize(2);
  if (causal && l != s) {
    if (ShapedType::isDynamic(s) || ShapedType::isDynamic(l) || l < s)
      return ctx.error("unidirectional with key length below the query "
                       "length or dynamic lengths is not supported yet");
    qOffset = arith::ConstantIndexOp::create(b, loc, l - s);
  }
  FloatAttr scale;
  if (float sc = ctx.getFloat("scale", 0.0f); sc != 0.0f)
    scale = b.getF64FloatAttr(sc);
  return emit(ctx, *qh, *kh, *vh, mask, causal, qOffset, IntegerAttr(), scale,
              FloatAttr());
}

/// seqlens_k + 1 as i64 [B]: the valid keys per batch entry.
Value validKeys(OpBuilder &b, Location loc, Value seqlens) {
  SmallVector<OpFoldResult> sizes = builders::tensorSizes(b, loc, seqlens);
  Type i64 = b.getI64Type();
  Value init = builders::emptyTensor(b, loc, sizes, i64);
  auto id = AffineMap::getMultiDimIdentityMap(1, b.getContext());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{seqlens}, init,
             ArrayRef<AffineMap>{id, id}, builders::iterators(1),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value x = a[0];
               if (x.getType() != i64)
                 x = arith::ExtSIOp::create(nb, nl, i64, x);
               linalg::YieldOp::create(
                   nb, nl,
                   arith::AddIOp::create(
                       nb, nl, x, arith::ConstantIntOp::create(nb, nl, i64, 1))
                       .getResult());
             })
      .getResult(0);
}

/// Positions [B, S] of the new tokens: valid[b] - S + s.
Value newPositions(OpBuilder &b, Location loc, Value valid, Value q) {
  SmallVector<OpFoldResult> qs = builders::tensorSizes(b, loc, q);
  Type i64 = b.getI64Type();
  Value init = builders::emptyTensor(b, loc, {qs[0], qs[2]}, i64);
  auto ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{valid}, init,
             ArrayRef<AffineMap>{
                 AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx),
                 AffineMap::getMultiDimIdentityMap(2, ctx)},
             builders::iterators(2),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value s = arith::IndexCastOp::create(
                   nb, nl, i64, linalg::IndexOp::create(nb, nl, 1));
               Value len = arith::IndexCastOp::create(
                   nb, nl, i64,
                   getValueOrCreateConstantIndexOp(nb, nl, qs[2]));
               Value p = arith::AddIOp::create(
                   nb, nl, arith::SubIOp::create(nb, nl, a[0], len), s);
               linalg::YieldOp::create(nb, nl, p);
             })
      .getResult(0);
}

LogicalResult groupQueryAttention(NodeContext &ctx) {
  int64_t n = ctx.getInt("num_heads", 0), nkv = ctx.getInt("kv_num_heads", 0);
  if (n <= 0 || nkv <= 0 || n % nkv != 0)
    return ctx.error("num_heads must be a positive multiple of kv_num_heads");
  if (ctx.getInt("smooth_softmax", 0) != 0)
    return ctx.error("smooth_softmax is not supported yet");
  for (unsigned i : {9u, 10u, 11u})
    if (ctx.hasInput(i))
      return ctx.error("position_ids/attention_bias/head_sink inputs are not "
                       "supported yet");
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  FailureOr<Value> query = ctx.input(0);
  if (failed(query))
    return failure();
  Value q, k, v;
  if (!ctx.hasInput(1) && !ctx.hasInput(2)) {
    // Packed [B, S, (N + 2 Nkv) * D].
    auto t = cast<RankedTensorType>(query->getType());
    if (t.getRank() != 3 || t.isDynamicDim(2) ||
        t.getDimSize(2) % (n + 2 * nkv) != 0)
      return ctx.error("packed QKV must be [B, S, (num_heads + 2 * "
                       "kv_num_heads) * D]");
    int64_t d = t.getDimSize(2) / (n + 2 * nkv);
    SmallVector<OpFoldResult> sizes = builders::tensorSizes(b, loc, *query);
    auto part = [&](int64_t offset, int64_t width) -> Value {
      SmallVector<OpFoldResult> off = {b.getIndexAttr(0), b.getIndexAttr(0),
                                       b.getIndexAttr(offset)};
      SmallVector<OpFoldResult> sz = {sizes[0], sizes[1],
                                      b.getIndexAttr(width)};
      SmallVector<OpFoldResult> st(3, b.getIndexAttr(1));
      return tensor::ExtractSliceOp::create(b, loc, *query, off, sz, st);
    };
    q = part(0, n * d);
    k = part(n * d, nkv * d);
    v = part((n + nkv) * d, nkv * d);
  } else {
    FailureOr<Value> key = ctx.input(1), value = ctx.input(2);
    if (failed(key) || failed(value))
      return failure();
    q = *query;
    k = *key;
    v = *value;
  }
  FailureOr<Value> qh = heads(ctx, q, n, "query"),
                   kh = heads(ctx, k, nkv, "key"),
                   vh = heads(ctx, v, nkv, "value");
  FailureOr<Value> seqlens = ctx.input(5);
  if (failed(qh) || failed(kh) || failed(vh) || failed(seqlens))
    return failure();
  auto st = cast<RankedTensorType>(seqlens->getType());
  if (st.getRank() != 1 || !isa<IntegerType>(st.getElementType()))
    return ctx.error("seqlens_k must be an integer tensor [B]");
  Value valid = validKeys(b, loc, *seqlens);

  bool interleaved = ctx.getInt("rotary_interleaved", 0) != 0;
  if (ctx.getInt("do_rotary", 0) != 0) {
    FailureOr<Value> cos = ctx.input(7), sin = ctx.input(8);
    if (failed(cos) || failed(sin))
      return failure();
    auto ct = cast<RankedTensorType>(cos->getType());
    int64_t d = cast<RankedTensorType>(qh->getType()).getDimSize(3);
    if (ct.getRank() != 2 || ct != sin->getType() || ct.isDynamicDim(1) ||
        2 * ct.getDimSize(1) > d)
      return ctx.error("cos_cache/sin_cache must be [max_position, r/2] "
                       "with r <= head size");
    int64_t r = 2 * ct.getDimSize(1);
    Value positions = newPositions(b, loc, valid, *qh);
    for (Value *x : {&*qh, &*kh}) {
      Value c = ropeTable(b, loc, *cos, positions, *x, r, interleaved);
      Value s = ropeTable(b, loc, *sin, positions, *x, r, interleaved);
      *x = RopeTablesOp::create(b, loc, x->getType(), *x, c, s,
                                interleaved ? b.getUnitAttr() : UnitAttr());
    }
  }
  if (ctx.hasInput(3) != ctx.hasInput(4))
    return ctx.error("past_key and past_value must be given together");
  if (ctx.hasInput(3)) {
    FailureOr<Value> pk = ctx.input(3), pv = ctx.input(4);
    if (failed(pk) || failed(pv))
      return failure();
    for (Value p : {*pk, *pv})
      if (cast<RankedTensorType>(p.getType()).getRank() != 4)
        return ctx.error("past_key/past_value must be [B, Nkv, P, D]");
    *kh = concatValues(b, loc, {*pk, *kh}, 2);
    *vh = concatValues(b, loc, {*pv, *vh}, 2);
  }
  for (unsigned i : {1u, 2u})
    if (i < ctx.numOutputs() && !ctx.proto().output(i).empty() &&
        failed(ctx.setOutput(i, i == 1 ? *kh : *vh)))
      return failure();

  MaskSpec spec;
  spec.nonpad = valid;
  spec.causal = true;
  if (int64_t w = ctx.getInt("local_window_size", -1); w > 0)
    spec.left = w - 1;
  Value mask = combinedMask(b, loc, spec, *qh, *kh);
  FloatAttr scale, softcap;
  if (float sc = ctx.getFloat("scale", 0.0f); sc != 0.0f)
    scale = b.getF64FloatAttr(sc);
  if (float c = ctx.getFloat("softcap", 0.0f); c > 0.0f)
    softcap = b.getF64FloatAttr(c);
  return emit(ctx, *qh, *kh, *vh, mask, /*causal=*/false, Value(),
              IntegerAttr(), scale, softcap);
}

} // namespace

void mlir::mnemo::onnx_import::registerContribAttentionHandlers(
    HandlerRegistry &r) {
  r.add("com.microsoft", "MultiHeadAttention", 1, multiHeadAttention);
  r.add("com.microsoft", "GroupQueryAttention", 1, groupQueryAttention);
}

//===- DecomposeMLA.cpp - MLA as attention plus projections -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites mnemo.mla_attention into one mnemo.attention and per-head
// projections (linalg contractions), in the expanded or the absorbed form
// (see Transforms.h). The attention that results is tiled like any other
// by mnemo-tile-attention; in the absorbed form it is multi-query, so one
// tile of the latent cache serves every head.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"
#include "dialects/Mnemo/Transforms/Transforms.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_DECOMPOSEMLAPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// Builds the decomposition of one mnemo.mla_attention before it.
class MLADecomposer {
public:
  MLADecomposer(OpBuilder &b, MLAAttentionOp op)
      : b(b), op(op), loc(op.getLoc()), ctx(op.getContext()),
        ct(computeType(op.getResult().getType().getElementType())),
        heads(op.getNumHeads()) {
    bindDims(ctx, d0, d1, d2, d3, d4);
  }

  Value expanded();
  Value absorbed();

private:
  OpFoldResult dim(Value v, int64_t i) {
    return tensor::getMixedSize(b, loc, v, i);
  }
  OpFoldResult cst(int64_t v) { return b.getIndexAttr(v); }

  /// [B, S, d] -> [B, 1, S, d].
  Value unitHeads(Value x);
  /// A [B, Hx, S, d] tensor as [B, h, S, d] in the compute type (Hx is h,
  /// or 1 broadcast to h heads).
  Value toHeads(Value x, int64_t h);
  /// Concatenation along the last dim of [B, H, S, d_i] compute-type parts.
  Value concat(ArrayRef<Value> parts);
  /// out[d0, d1, d2, d3] = sum_d4 x[xMap] * w[wMap], in the compute type.
  Value contract(Value x, AffineMap xMap, Value w, AffineMap wMap,
                 ArrayRef<OpFoldResult> sizes);
  /// mnemo.attention with the op's scale, causality and query offset, or
  /// with indices mnemo.sparse_attention over the keys they select.
  Value attention(Value q, Value k, Value v);
  /// The compute-type result converted to the op's result type.
  Value finish(Value out);

  AffineMap map(ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(5, 0, exprs, ctx);
  }

  OpBuilder &b;
  MLAAttentionOp op;
  Location loc;
  MLIRContext *ctx;
  FloatType ct;
  int64_t heads;
  AffineExpr d0, d1, d2, d3, d4;
};

Value MLADecomposer::unitHeads(Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  auto resultType = RankedTensorType::get(
      {type.getDimSize(0), 1, type.getDimSize(1), type.getDimSize(2)},
      type.getElementType());
  SmallVector<ReassociationIndices> groups = {{0, 1}, {2}, {3}};
  SmallVector<OpFoldResult> shape = {dim(x, 0), cst(1), dim(x, 1), dim(x, 2)};
  return tensor::ExpandShapeOp::create(b, loc, resultType, x, groups, shape);
}

Value MLADecomposer::toHeads(Value x, int64_t h) {
  auto type = cast<RankedTensorType>(x.getType());
  bool broadcast = type.getDimSize(1) != h;
  if (!broadcast && type.getElementType() == ct)
    return x;
  SmallVector<OpFoldResult> sizes = {dim(x, 0), cst(h), dim(x, 2), dim(x, 3)};
  Value init = emptyTensor(b, loc, sizes, ct);
  AffineExpr a0, a1, a2, a3;
  bindDims(ctx, a0, a1, a2, a3);
  AffineMap in = AffineMap::get(
      4, 0, {a0, broadcast ? getAffineConstantExpr(0, ctx) : a1, a2, a3}, ctx);
  AffineMap out = AffineMap::getMultiDimIdentityMap(4, ctx);
  return linalg::GenericOp::create(
             b, loc, init.getType(), x, init, ArrayRef<AffineMap>{in, out},
             iterators(4),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, castFloat(nb, nl, args[0], ct));
             })
      .getResult(0);
}

Value MLADecomposer::concat(ArrayRef<Value> parts) {
  int64_t width = 0;
  for (Value p : parts)
    width += cast<RankedTensorType>(p.getType()).getDimSize(3);
  Value first = parts.front();
  SmallVector<OpFoldResult> sizes = {dim(first, 0), dim(first, 1),
                                     dim(first, 2), cst(width)};
  Value result = emptyTensor(b, loc, sizes, ct);
  int64_t offset = 0;
  for (Value p : parts) {
    int64_t d = cast<RankedTensorType>(p.getType()).getDimSize(3);
    SmallVector<OpFoldResult> offsets = {cst(0), cst(0), cst(0), cst(offset)};
    SmallVector<OpFoldResult> partSizes = {sizes[0], sizes[1], sizes[2],
                                           cst(d)};
    SmallVector<OpFoldResult> strides(4, cst(1));
    result = tensor::InsertSliceOp::create(b, loc, p, result, offsets,
                                           partSizes, strides);
    offset += d;
  }
  return result;
}

Value MLADecomposer::contract(Value x, AffineMap xMap, Value w, AffineMap wMap,
                              ArrayRef<OpFoldResult> sizes) {
  Value init = filledTensor(b, loc, sizes, ct, 0.0);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{x, w}, init,
             ArrayRef<AffineMap>{xMap, wMap, map({d0, d1, d2, d3})},
             iterators(5, {4}),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value prod = arith::MulFOp::create(
                   nb, nl, castFloat(nb, nl, args[0], ct),
                   castFloat(nb, nl, args[1], ct));
               linalg::YieldOp::create(
                   nb, nl,
                   arith::AddFOp::create(nb, nl, args[2], prod).getResult());
             })
      .getResult(0);
}

Value MLADecomposer::attention(Value q, Value k, Value v) {
  auto qType = cast<RankedTensorType>(q.getType());
  auto type = RankedTensorType::get(
      {qType.getDimSize(0), heads, qType.getDimSize(2),
       cast<RankedTensorType>(v.getType()).getDimSize(3)},
      ct);
  if (Value indices = op.getIndices())
    return SparseAttentionOp::create(b, loc, type, q, k, v, indices,
                                     /*sink=*/Value(),
                                     b.getF64FloatAttr(op.getEffectiveScale()));
  return AttentionOp::create(b, loc, type, q, k, v, Value(), Value(),
                             op.getQOffset(), op.getCausal(), IntegerAttr(),
                             b.getF64FloatAttr(op.getEffectiveScale()),
                             FloatAttr());
}

Value MLADecomposer::finish(Value out) {
  RankedTensorType resultType = op.getResult().getType();
  return castToType(b, loc,
                    castElements(b, loc, out, resultType.getElementType()),
                    resultType);
}

/// k_nope[b,h,j,e] = sum_c c_kv[b,j,c] W_UK[h,e,c] (and v with W_UV), then
/// attention over q = [q_nope, q_pe], k = [k_nope, k_pe].
Value MLADecomposer::expanded() {
  Value c = op.getCKv(), wk = op.getWUk(), wv = op.getWUv();
  // Loops (b, h, j, e, c) over [B, H, Skv, d] x latent rank.
  AffineMap cMap = map({d0, d2, d4}), wMap = map({d1, d3, d4});
  Value kNope = contract(c, cMap, wk, wMap,
                         {dim(c, 0), cst(heads), dim(c, 1),
                          cst(op.getNopeDim())});
  Value v = contract(c, cMap, wv, wMap,
                     {dim(c, 0), cst(heads), dim(c, 1),
                      cst(op.getValueDim())});
  Value q =
      concat({toHeads(op.getQNope(), heads), toHeads(op.getQPe(), heads)});
  Value k = concat({kNope, toHeads(unitHeads(op.getKPe()), heads)});
  return finish(attention(q, k, v));
}

/// q_lat[b,h,i,c] = sum_e q_nope[b,h,i,e] W_UK[h,e,c]; multi-query attention
/// over the latent cache; out[b,h,i,e] = sum_c o_lat[b,h,i,c] W_UV[h,e,c].
Value MLADecomposer::absorbed() {
  Value qn = op.getQNope(), wk = op.getWUk(), wv = op.getWUv();
  int64_t rank = op.getLatentRank();
  // Loops (b, h, i, c, e): the nope dim e is reduced.
  Value qLat = contract(qn, map({d0, d1, d2, d4}), wk, map({d1, d4, d3}),
                        {dim(qn, 0), cst(heads), dim(qn, 2), cst(rank)});
  Value q = concat({qLat, toHeads(op.getQPe(), heads)});
  Value latent = toHeads(unitHeads(op.getCKv()), 1);
  Value k = concat({latent, toHeads(unitHeads(op.getKPe()), 1)});
  Value oLat = attention(q, k, latent);
  // Loops (b, h, i, e, c): the latent rank c is reduced.
  Value out = contract(oLat, map({d0, d1, d2, d4}), wv, map({d1, d3, d4}),
                       {dim(qn, 0), cst(heads), dim(qn, 2),
                        cst(op.getValueDim())});
  return finish(out);
}

MLAForm chosenForm(MLAAttentionOp op, MLAFormChoice choice) {
  switch (choice) {
  case MLAFormChoice::Expanded:
    return MLAForm::Expanded;
  case MLAFormChoice::Absorbed:
    return MLAForm::Absorbed;
  case MLAFormChoice::Auto:
    break;
  }
  return op.getFormOrDefault();
}

struct DecomposeMLAPass final
    : mnemo::impl::DecomposeMLAPassBase<DecomposeMLAPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<MLAAttentionOp> ops;
    getOperation()->walk([&](MLAAttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (MLAAttentionOp op : ops) {
      rewriter.setInsertionPoint(op);
      Value result =
          buildMLADecomposition(rewriter, op, chosenForm(op, form));
      rewriter.replaceOp(op, result);
    }
  }
};

} // namespace

Value mnemo::buildMLADecomposition(OpBuilder &b, MLAAttentionOp op,
                                   MLAForm form) {
  MLADecomposer decomposer(b, op);
  return form == MLAForm::Absorbed ? decomposer.absorbed()
                                   : decomposer.expanded();
}

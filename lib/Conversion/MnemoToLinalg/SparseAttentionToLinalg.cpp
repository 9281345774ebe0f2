//===- SparseAttentionToLinalg.cpp - DSA reference lowering -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The reference forms of the lightning indexer and of sparse attention.
//
// mnemo.lightning_indexer: the per-head dot products as one contraction
// [B, S, Hi, T], then the ReLU-weighted sum over the heads and the masks:
//
//   dot[b,s,h,t] = sum_d q[b,s,h,d] k[b,t,d]
//   score[b,s,t] = sum_h w[b,s,h] max(0, scale dot[b,s,h,t])   (or -inf)
//
// with t the innermost loop of both (the keys transposed for it).
//
// mnemo.sparse_attention: the score matrix [B, Hq, Sq, K] over the listed
// keys, each read where its index points (a gather inside the contraction,
// so the selected rows are never copied), a masked softmax, and the values
// gathered the same way:
//
//   s[b,h,i,j] = scale sum_d Q[b,h,i,d] K[b,h/G,idx[b,i,j],d]  (idx valid)
//   O[b,h,i,e] = sum_j softmax_j(s)[b,h,i,j] V[b,h/G,idx[b,i,j],e]
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "dialects/Mnemo/Utils/PagedCache.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include <limits>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct LightningIndexerLowering final : OpRewritePattern<LightningIndexerOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LightningIndexerOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value q = op.getQ(), k = op.getK(), w = op.getWeights();
    FloatType f32 = b.getF32Type();
    if (Value table = op.getTable()) {
      // Paged keys: gathered through the block table, [B, 1, T, Di], the
      // unit head dropped.
      Value gathered = gatherPages(b, loc, k, /*scales=*/Value(), table, f32);
      k = tensor::CollapseShapeOp::create(
          b, loc, gathered, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
    }
    SmallVector<OpFoldResult> qs = tensorSizes(b, loc, q),
                              ks = tensorSizes(b, loc, k);
    AffineExpr d0, d1, d2, d3, d4;
    bindDims(ctx, d0, d1, d2, d3, d4);

    // dot[b,s,h,t] = sum_d q[b,s,h,d] kT[b,d,t]   (loops b,s,h,d,t): the
    // keys transposed once, so that the innermost loop runs along t, over
    // contiguous keys and scores (a loop the CPU targets vectorize), not
    // along d, a reduction as short as the indexer's head dim.
    Value kT = linalg::TransposeOp::create(
                   b, loc, k,
                   tensor::EmptyOp::create(b, loc,
                                           SmallVector<OpFoldResult>{
                                               ks[0], ks[2], ks[1]},
                                           cast<RankedTensorType>(
                                               k.getType())
                                               .getElementType()),
                   ArrayRef<int64_t>{0, 2, 1})
                   ->getResult(0);
    Value dot = filledTensor(b, loc, {qs[0], qs[1], qs[2], ks[1]}, f32, 0.0);
    dot = linalg::GenericOp::create(
              b, loc, dot.getType(), ValueRange{q, kT}, dot,
              ArrayRef<AffineMap>{
                  AffineMap::get(5, 0, {d0, d1, d2, d3}, ctx),
                  AffineMap::get(5, 0, {d0, d3, d4}, ctx),
                  AffineMap::get(5, 0, {d0, d1, d2, d4}, ctx)},
              iterators(5, {3}),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                yieldMultiplyAdd(nb, nl, a[0], a[1], a[2], f32);
              })
              .getResult(0);

    // score[b,s,t] = sum_h w[b,s,h] max(0, scale dot)   (loops b,s,h,t:
    // t innermost again)
    double scale = op.getEffectiveScale();
    Value score = filledTensor(b, loc, {qs[0], qs[1], ks[1]}, f32, 0.0);
    score = linalg::GenericOp::create(
                b, loc, score.getType(), ValueRange{w, dot}, score,
                ArrayRef<AffineMap>{
                    AffineMap::get(4, 0, {d0, d1, d2}, ctx),
                    AffineMap::get(4, 0, {d0, d1, d2, d3}, ctx),
                    AffineMap::get(4, 0, {d0, d1, d3}, ctx)},
                iterators(4, {2}),
                [&](OpBuilder &nb, Location nl, ValueRange a) {
                  Value s = arith::MulFOp::create(
                      nb, nl, a[1], floatConst(nb, nl, f32, scale));
                  Value relu = arith::MaximumFOp::create(
                      nb, nl, s, floatConst(nb, nl, f32, 0.0));
                  Value t = arith::MulFOp::create(
                      nb, nl, castFloat(nb, nl, a[0], f32), relu);
                  linalg::YieldOp::create(
                      nb, nl,
                      arith::AddFOp::create(nb, nl, a[2], t).getResult());
                })
                .getResult(0);

    // The masks: future keys (causal) and keys past the sequence's length.
    Value positions = op.getPositions(), lengths = op.getLengths();
    bool causal = op.getCausal();
    if (causal || lengths) {
      SmallVector<Value> inputs;
      SmallVector<AffineMap> maps;
      if (causal && positions) {
        inputs.push_back(positions);
        maps.push_back(AffineMap::get(3, 0, {d0, d1}, ctx));
      }
      if (lengths) {
        inputs.push_back(lengths);
        maps.push_back(AffineMap::get(3, 0, {d0}, ctx));
      }
      maps.push_back(AffineMap::getMultiDimIdentityMap(3, ctx));
      bool hasPositions = causal && positions;
      score = linalg::GenericOp::create(
                  b, loc, score.getType(), inputs, score, maps, iterators(3),
                  [&](OpBuilder &nb, Location nl, ValueRange a) {
                    Type i64 = nb.getI64Type();
                    auto index = [&](unsigned d) {
                      return arith::IndexCastOp::create(
                          nb, nl, i64, linalg::IndexOp::create(nb, nl, d));
                    };
                    Value t = index(2);
                    Value masked = arith::ConstantOp::create(
                        nb, nl, nb.getBoolAttr(false));
                    unsigned next = 0;
                    if (causal) {
                      Value pos = hasPositions ? a[next++] : index(1);
                      masked = arith::CmpIOp::create(
                          nb, nl, arith::CmpIPredicate::sgt, t, pos);
                    }
                    if (lengths) {
                      Value past = arith::CmpIOp::create(
                          nb, nl, arith::CmpIPredicate::sge, t, a[next++]);
                      masked = arith::OrIOp::create(nb, nl, masked, past);
                    }
                    Value out = arith::SelectOp::create(
                        nb, nl, masked, floatConst(nb, nl, f32, kNegInf),
                        a.back());
                    linalg::YieldOp::create(nb, nl, out);
                  })
                  .getResult(0);
    }
    b.replaceOp(op, castToType(b, loc, score, op.getResult().getType()));
    return success();
  }
};

struct SparseAttentionLowering final : OpRewritePattern<SparseAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SparseAttentionOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue(),
          idx = op.getIndices();
    RankedTensorType resultType = op.getResult().getType();
    FloatType ct = computeType(resultType.getElementType());
    int64_t group = op.getGroupSize();
    SmallVector<OpFoldResult> qs = tensorSizes(b, loc, q),
                              is = tensorSizes(b, loc, idx),
                              vs = tensorSizes(b, loc, v);
    Value numKeys = tensor::DimOp::create(b, loc, k, 2);
    AffineExpr d0, d1, d2, d3, d4;
    bindDims(ctx, d0, d1, d2, d3, d4);
    AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    AffineMap row4 = projection(ctx, 4, {0, 1, 2});
    AffineMap row3 = AffineMap::getMultiDimIdentityMap(3, ctx);

    // The key index a listed entry points at (clamped into range so that
    // the read is safe) and whether the entry names a key.
    auto keyIndex = [&](OpBuilder &nb, Location nl, Value raw) {
      return clampedIndex(nb, nl, raw, numKeys);
    };
    auto headOf = [&](OpBuilder &nb, Location nl) -> Value {
      Value h = linalg::IndexOp::create(nb, nl, 1);
      if (group == 1)
        return h;
      return arith::DivUIOp::create(
          nb, nl, h, arith::ConstantIndexOp::create(nb, nl, group));
    };

    // out[b,h,i,n] = sum_r lhs[b,h,i,r] table[b,h/G,idx[b,i,.],.] over the
    // loops (b, h, i, n, r): the listed row is idx[b,i,n] with the reduction
    // r over its features (scores), or idx[b,i,r] with n its feature
    // (values).
    auto gatherContract = [&](Value lhs, Value table, bool rowIsN,
                              ArrayRef<OpFoldResult> sizes) {
      Value init = filledTensor(b, loc, sizes, ct, 0.0);
      AffineMap idxMap =
          AffineMap::get(5, 0, {d0, d2, rowIsN ? d3 : d4}, ctx);
      return linalg::GenericOp::create(
                 b, loc, init.getType(), ValueRange{lhs, idx}, init,
                 ArrayRef<AffineMap>{
                     AffineMap::get(5, 0, {d0, d1, d2, d4}, ctx), idxMap,
                     AffineMap::get(5, 0, {d0, d1, d2, d3}, ctx)},
                 iterators(5, {4}),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   Value row = keyIndex(nb, nl, a[1]).first;
                   Value feature =
                       linalg::IndexOp::create(nb, nl, rowIsN ? 4 : 3);
                   Value t = tensor::ExtractOp::create(
                       nb, nl, table,
                       ValueRange{linalg::IndexOp::create(nb, nl, 0),
                                  headOf(nb, nl), row, feature});
                   yieldMultiplyAdd(nb, nl, a[0], t, a[2], ct);
                 })
          .getResult(0);
    };

    // s[b,h,i,j] = sum_d Q[b,h,i,d] K[b,h/G,idx[b,i,j],d]
    SmallVector<OpFoldResult> scoreSizes = {qs[0], qs[1], qs[2], is[2]};
    Value scores = gatherContract(q, k, /*rowIsN=*/true, scoreSizes);
    // Scaled, -inf where the entry lists no key.
    double scale = op.getEffectiveScale();
    scores = linalg::GenericOp::create(
                 b, loc, scores.getType(), ValueRange{idx}, scores,
                 ArrayRef<AffineMap>{AffineMap::get(4, 0, {d0, d2, d3}, ctx),
                                     id4},
                 iterators(4),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   Value valid = keyIndex(nb, nl, a[0]).second;
                   Value s = arith::MulFOp::create(
                       nb, nl, a[1], floatConst(nb, nl, ct, scale));
                   linalg::YieldOp::create(
                       nb, nl,
                       arith::SelectOp::create(
                           nb, nl, valid, s, floatConst(nb, nl, ct, kNegInf))
                           .getResult());
                 })
                 .getResult(0);

    // m = max(sink, max_j s) (0 for a row without keys and sink, so that
    // exp gives 0).
    SmallVector<OpFoldResult> rowSizes = {qs[0], qs[1], qs[2]};
    Value sink = op.getSink();
    Value rowMax = sinkRowInit(b, loc, rowSizes, sink, ct, kNegInf, Value());
    rowMax = linalg::GenericOp::create(
                 b, loc, rowMax.getType(), scores, rowMax,
                 ArrayRef<AffineMap>{id4, row4}, iterators(4, {3}),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   linalg::YieldOp::create(
                       nb, nl,
                       arith::MaximumFOp::create(nb, nl, a[0], a[1])
                           .getResult());
                 })
                 .getResult(0);
    rowMax = linalg::GenericOp::create(
                 b, loc, rowMax.getType(), ValueRange{}, rowMax,
                 ArrayRef<AffineMap>{row3}, iterators(3),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   Value none = arith::CmpFOp::create(
                       nb, nl, arith::CmpFPredicate::OEQ, a[0],
                       floatConst(nb, nl, ct, kNegInf));
                   linalg::YieldOp::create(
                       nb, nl,
                       arith::SelectOp::create(nb, nl, none,
                                               floatConst(nb, nl, ct, 0.0),
                                               a[0])
                           .getResult());
                 })
                 .getResult(0);
    // p = exp(s - m), l = exp(sink - m) + sum_j p.
    Value probs = linalg::GenericOp::create(
                      b, loc, scores.getType(), ValueRange{scores, rowMax},
                      emptyTensor(b, loc, scoreSizes, ct),
                      ArrayRef<AffineMap>{id4, row4, id4}, iterators(4),
                      [&](OpBuilder &nb, Location nl, ValueRange a) {
                        Value d = arith::SubFOp::create(nb, nl, a[0], a[1]);
                        linalg::YieldOp::create(
                            nb, nl, math::ExpOp::create(nb, nl, d).getResult());
                      })
                      .getResult(0);
    Value rowSum = sinkRowInit(b, loc, rowSizes, sink, ct, 0.0, rowMax);
    rowSum = linalg::GenericOp::create(
                 b, loc, rowSum.getType(), probs, rowSum,
                 ArrayRef<AffineMap>{id4, row4}, iterators(4, {3}),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   linalg::YieldOp::create(
                       nb, nl,
                       arith::AddFOp::create(nb, nl, a[1], a[0]).getResult());
                 })
                 .getResult(0);

    // acc[b,h,i,e] = sum_j p[b,h,i,j] V[b,h/G,idx[b,i,j],e]
    SmallVector<OpFoldResult> outSizes = {qs[0], qs[1], qs[2], vs[3]};
    Value acc = gatherContract(probs, v, /*rowIsN=*/false, outSizes);

    // O = acc / l, 0 for a row without keys (acc is 0 there with a sink).
    Type elem = resultType.getElementType();
    Value out = linalg::GenericOp::create(
                    b, loc,
                    RankedTensorType::get(
                        cast<RankedTensorType>(acc.getType()).getShape(),
                        elem),
                    ValueRange{acc, rowSum},
                    emptyTensor(b, loc, outSizes, elem),
                    ArrayRef<AffineMap>{id4, row4, id4}, iterators(4),
                    [&](OpBuilder &nb, Location nl, ValueRange a) {
                      Value zero = floatConst(nb, nl, ct, 0.0);
                      Value div = arith::DivFOp::create(nb, nl, a[0], a[1]);
                      Value none = arith::CmpFOp::create(
                          nb, nl, arith::CmpFPredicate::OEQ, a[1], zero);
                      Value r = arith::SelectOp::create(nb, nl, none, zero, div);
                      linalg::YieldOp::create(nb, nl,
                                              castFloat(nb, nl, r, elem));
                    })
                    .getResult(0);
    b.replaceOp(op, castToType(b, loc, out, resultType));
    return success();
  }
};

} // namespace

void mlir::mnemo::populateSparseAttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LightningIndexerLowering, SparseAttentionLowering>(
      patterns.getContext());
}

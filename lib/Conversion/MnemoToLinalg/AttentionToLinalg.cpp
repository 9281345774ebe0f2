//===- AttentionToLinalg.cpp - mnemo.attention reference lowering -*- C++ -*-=//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers mnemo.attention to the textbook computation on the full score
// matrix [B, Hq, Sq, Skv]:
//
//   s = scale * Q K^T ; softcap ; + mask ; causal/window → -inf
//   m = max(s, sink) ; p = exp(s - m) ; l = sum(p) + exp(sink - m)
//   O = (p V) / l                 (rows with l = 0 yield 0)
//
// GQA reads key/value head h / G for query head h through a floordiv in the
// indexing maps, so K and V are never replicated.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include <limits>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct AttentionLowering final : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    RankedTensorType resultType = op.getResult().getType();
    FloatType ct = computeType(resultType.getElementType());
    int64_t group = op.getGroupSize();

    SmallVector<OpFoldResult> qSizes = tensorSizes(b, loc, q);
    SmallVector<OpFoldResult> kSizes = tensorSizes(b, loc, k);
    SmallVector<OpFoldResult> vSizes = tensorSizes(b, loc, v);
    // Loops (b, h, i, j) over the score matrix, rows (b, h, i).
    SmallVector<OpFoldResult> scoreSizes = {qSizes[0], qSizes[1], qSizes[2],
                                            kSizes[2]};
    SmallVector<OpFoldResult> rowSizes = {qSizes[0], qSizes[1], qSizes[2]};
    AffineExpr d0, d1, d2, d3, d4;
    bindDims(ctx, d0, d1, d2, d3, d4);
    AffineMap scoreMap4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    AffineMap rowMap4 = projection(ctx, 4, {0, 1, 2});
    AffineMap rowMap3 = AffineMap::getMultiDimIdentityMap(3, ctx);

    // s[b,h,i,j] = sum_d Q[b,h,i,d] * K[b,h/G,j,d]   (loops b,h,i,j,d)
    Value scores = filledTensor(b, loc, scoreSizes, ct, 0.0);
    scores =
        linalg::GenericOp::create(
            b, loc, scores.getType(), ValueRange{q, k}, scores,
            ArrayRef<AffineMap>{
                AffineMap::get(5, 0, {d0, d1, d2, d4}, ctx),
                AffineMap::get(5, 0, {d0, d1.floorDiv(group), d3, d4}, ctx),
                AffineMap::get(5, 0, {d0, d1, d2, d3}, ctx)},
            iterators(5, {4}),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value prod = arith::MulFOp::create(
                  nb, nl, castFloat(nb, nl, args[0], ct),
                  castFloat(nb, nl, args[1], ct));
              Value sum = arith::AddFOp::create(nb, nl, args[2], prod);
              linalg::YieldOp::create(nb, nl, sum);
            })
            .getResult(0);

    scores = buildScoreTransform(b, loc, op, scores, ct);

    // m[b,h,i] = max(sink[h], max_j s[b,h,i,j])
    Value sink = op.getSink();
    Value rowMax = sinkRowInit(b, loc, rowSizes, sink, ct, kNegInf,
                               /*rowMax=*/Value());
    rowMax = linalg::GenericOp::create(
                 b, loc, rowMax.getType(), scores, rowMax,
                 ArrayRef<AffineMap>{scoreMap4, rowMap4}, iterators(4, {3}),
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   linalg::YieldOp::create(
                       nb, nl,
                       arith::MaximumFOp::create(nb, nl, args[0], args[1])
                           .getResult());
                 })
                 .getResult(0);
    // A fully masked row has m = -inf; subtract 0 instead so exp gives 0.
    rowMax = linalg::GenericOp::create(
                 b, loc, rowMax.getType(), ValueRange{}, rowMax,
                 ArrayRef<AffineMap>{rowMap3}, iterators(3),
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   Value negInf = floatConst(nb, nl, ct, kNegInf);
                   Value isNegInf = arith::CmpFOp::create(
                       nb, nl, arith::CmpFPredicate::OEQ, args[0], negInf);
                   linalg::YieldOp::create(
                       nb, nl,
                       arith::SelectOp::create(nb, nl, isNegInf,
                                               floatConst(nb, nl, ct, 0.0),
                                               args[0])
                           .getResult());
                 })
                 .getResult(0);

    // p = exp(s - m)
    Value probs = linalg::GenericOp::create(
                b, loc, scores.getType(), ValueRange{scores, rowMax},
                emptyTensor(b, loc, scoreSizes, ct),
                ArrayRef<AffineMap>{scoreMap4, rowMap4, scoreMap4},
                iterators(4),
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  Value diff = arith::SubFOp::create(nb, nl, args[0], args[1]);
                  linalg::YieldOp::create(
                      nb, nl, math::ExpOp::create(nb, nl, diff).getResult());
                })
                .getResult(0);

    // l[b,h,i] = exp(sink[h] - m) + sum_j p
    Value rowSum = sinkRowInit(b, loc, rowSizes, sink, ct, 0.0, rowMax);
    rowSum = linalg::GenericOp::create(
                 b, loc, rowSum.getType(), probs, rowSum,
                 ArrayRef<AffineMap>{scoreMap4, rowMap4}, iterators(4, {3}),
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   linalg::YieldOp::create(
                       nb, nl,
                       arith::AddFOp::create(nb, nl, args[1], args[0])
                           .getResult());
                 })
                 .getResult(0);

    // acc[b,h,i,e] = sum_j p[b,h,i,j] * V[b,h/G,j,e]   (loops b,h,i,e,j)
    SmallVector<OpFoldResult> outSizes = {qSizes[0], qSizes[1], qSizes[2],
                                          vSizes[3]};
    Value acc = filledTensor(b, loc, outSizes, ct, 0.0);
    acc = linalg::GenericOp::create(
              b, loc, acc.getType(), ValueRange{probs, v}, acc,
              ArrayRef<AffineMap>{
                  AffineMap::get(5, 0, {d0, d1, d2, d4}, ctx),
                  AffineMap::get(5, 0, {d0, d1.floorDiv(group), d4, d3}, ctx),
                  AffineMap::get(5, 0, {d0, d1, d2, d3}, ctx)},
              iterators(5, {4}),
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value prod = arith::MulFOp::create(
                    nb, nl, args[0], castFloat(nb, nl, args[1], ct));
                linalg::YieldOp::create(
                    nb, nl,
                    arith::AddFOp::create(nb, nl, args[2], prod).getResult());
              })
              .getResult(0);

    // O = acc / l, 0 where l = 0 (fully masked row without a sink).
    Type elemType = resultType.getElementType();
    Value outInit = emptyTensor(b, loc, outSizes, elemType);
    Value out = linalg::GenericOp::create(
                    b, loc, outInit.getType(), ValueRange{acc, rowSum},
                    outInit,
                    ArrayRef<AffineMap>{scoreMap4, rowMap4, scoreMap4},
                    iterators(4),
                    [&](OpBuilder &nb, Location nl, ValueRange args) {
                      Value zero = floatConst(nb, nl, ct, 0.0);
                      Value div = arith::DivFOp::create(nb, nl, args[0], args[1]);
                      Value empty = arith::CmpFOp::create(
                          nb, nl, arith::CmpFPredicate::OEQ, args[1], zero);
                      Value r = arith::SelectOp::create(nb, nl, empty, zero, div);
                      linalg::YieldOp::create(nb, nl,
                                              castFloat(nb, nl, r, elemType));
                    })
                    .getResult(0);
    b.replaceOp(op, castToType(b, loc, out, resultType));
    return success();
  }

private:
  /// Scale, softcap, additive mask and the causal/window masks, applied
  /// elementwise to the raw scores.
  static Value buildScoreTransform(OpBuilder &b, Location loc, AttentionOp op,
                                   Value scores, FloatType ct) {
    MLIRContext *ctx = op.getContext();
    AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    if (Value mask = op.getMask()) {
      inputs.push_back(mask);
      maps.push_back(
          broadcastMap(ctx, 4, cast<RankedTensorType>(mask.getType())));
    }
    maps.push_back(id4);
    double scale = op.getEffectiveScale();
    std::optional<double> softcap = op.getSoftcapValue();
    std::optional<int64_t> window = op.getWindowSize();
    bool causal = op.getCausal();
    Value offset = op.getQOffset();
    return linalg::GenericOp::create(
               b, loc, scores.getType(), inputs, scores, maps, iterators(4),
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value s = args.back();
                 s = arith::MulFOp::create(nb, nl, s,
                                           floatConst(nb, nl, ct, scale));
                 if (softcap) {
                   Value cap = floatConst(nb, nl, ct, *softcap);
                   s = arith::DivFOp::create(nb, nl, s, cap);
                   s = math::TanhOp::create(nb, nl, s);
                   s = arith::MulFOp::create(nb, nl, s, cap);
                 }
                 if (op.getMask())
                   s = arith::AddFOp::create(nb, nl, s,
                                             castFloat(nb, nl, args[0], ct));
                 if (causal || window) {
                   // Absolute query position i + q_offset versus key j.
                   Value qPos = linalg::IndexOp::create(nb, nl, 2);
                   if (offset)
                     qPos = arith::AddIOp::create(nb, nl, qPos, offset);
                   Value kPos = linalg::IndexOp::create(nb, nl, 3);
                   Value hidden;
                   if (causal)
                     hidden = arith::CmpIOp::create(
                         nb, nl, arith::CmpIPredicate::sgt, kPos, qPos);
                   if (window) {
                     Value dist = arith::SubIOp::create(nb, nl, qPos, kPos);
                     Value w = arith::ConstantIndexOp::create(nb, nl, *window);
                     Value outside = arith::CmpIOp::create(
                         nb, nl, arith::CmpIPredicate::sge, dist, w);
                     hidden = hidden ? arith::OrIOp::create(nb, nl, hidden,
                                                            outside)
                                     : outside;
                   }
                   s = arith::SelectOp::create(
                       nb, nl, hidden, floatConst(nb, nl, ct, kNegInf), s);
                 }
                 linalg::YieldOp::create(nb, nl, s);
               })
        .getResult(0);
  }
};

} // namespace

void mlir::mnemo::populateAttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AttentionLowering>(patterns.getContext());
}

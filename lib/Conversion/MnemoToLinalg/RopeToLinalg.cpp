//===- RopeToLinalg.cpp - mnemo.rope reference lowering ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers mnemo.rope to one linalg.generic over the output. Each element reads
// its rotation partner with tensor.extract and computes its angle from the
// position and a constant inverse-frequency table (computed on the host from
// the scaling attribute); dynamic-NTK scaling derives the table in the IR
// from the largest position instead.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/IR/RopeFrequencies.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// inv_freq as an f32 tensor<r/2> computed on the host.
Value constantInverseFrequencies(OpBuilder &b, Location loc, RopeOp op) {
  int64_t r = op.getRotaryDimOrDefault();
  SmallVector<double> freqs = computeRopeInverseFrequencies(
      op.getTheta().convertToDouble(), r, op.getScalingOrDefault());
  SmallVector<float> values(freqs.begin(), freqs.end());
  auto type = RankedTensorType::get({r / 2}, b.getF32Type());
  return arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, ArrayRef<float>(values)));
}

/// Dynamic NTK: theta' = theta * (f * seq / orig - f + 1)^(r/(r-2)) with
/// seq = max(max(positions) + 1, orig), then inv_freq[k] = theta'^(-2k/r).
Value dynamicInverseFrequencies(OpBuilder &b, Location loc, RopeOp op) {
  MLIRContext *ctx = op.getContext();
  RopeScalingAttr s = op.getScalingOrDefault();
  int64_t r = op.getRotaryDimOrDefault();
  Value positions = op.getPositions();
  auto posType = cast<RankedTensorType>(positions.getType());
  Type i64 = b.getI64Type(), f64 = b.getF64Type();

  // max over all positions, as i64.
  Value init = arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0));
  Value maxInit = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, i64), init);
  unsigned rank = posType.getRank();
  SmallVector<unsigned> all;
  for (unsigned i = 0; i < rank; ++i)
    all.push_back(i);
  Value maxPos =
      linalg::GenericOp::create(
          b, loc, maxInit.getType(), positions, maxInit,
          ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                              AffineMap::get(rank, 0, {}, ctx)},
          iterators(rank, all),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value p = args[0];
            if (p.getType() != i64)
              p = arith::ExtSIOp::create(nb, nl, i64, p);
            linalg::YieldOp::create(
                nb, nl, arith::MaxSIOp::create(nb, nl, p, args[1]).getResult());
          })
          .getResult(0);
  Value maxScalar = tensor::ExtractOp::create(b, loc, maxPos, ValueRange{});
  Value one = arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
  Value orig = arith::ConstantOp::create(
      b, loc, i64, b.getI64IntegerAttr(s.getOriginalMaxPosition()));
  Value seq = arith::MaxSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, maxScalar, one), orig);
  Value seqF = arith::SIToFPOp::create(b, loc, f64, seq);
  double factor = s.factor();
  Value ratio = arith::MulFOp::create(
      b, loc, seqF, floatConst(b, loc, f64, factor / s.getOriginalMaxPosition()));
  ratio = arith::SubFOp::create(b, loc, ratio,
                                floatConst(b, loc, f64, factor - 1.0));
  Value base = math::PowFOp::create(
      b, loc, ratio, floatConst(b, loc, f64, double(r) / double(r - 2)));
  base = arith::MulFOp::create(
      b, loc, base, floatConst(b, loc, f64, op.getTheta().convertToDouble()));

  Value empty =
      emptyTensor(b, loc, {b.getIndexAttr(r / 2)}, b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, empty.getType(), ValueRange{}, empty,
             ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx)},
             iterators(1),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               Value k = linalg::IndexOp::create(nb, nl, 0);
               Value kf = arith::SIToFPOp::create(
                   nb, nl, f64, arith::IndexCastOp::create(nb, nl, i64, k));
               Value expo = arith::MulFOp::create(
                   nb, nl, kf, floatConst(nb, nl, f64, -2.0 / double(r)));
               Value f = math::PowFOp::create(nb, nl, base, expo);
               linalg::YieldOp::create(
                   nb, nl, castFloat(nb, nl, f, nb.getF32Type()));
             })
      .getResult(0);
}

struct RopeLowering final : OpRewritePattern<RopeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RopeOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value x = op.getInput();
    auto xType = cast<RankedTensorType>(x.getType());
    auto posType = cast<RankedTensorType>(op.getPositions().getType());
    Type elem = xType.getElementType();
    FloatType ct = computeType(elem);
    Type f32 = b.getF32Type();
    int64_t r = op.getRotaryDimOrDefault();
    RopeScalingAttr scaling = op.getScalingOrDefault();
    double attentionFactor = scaling.getEffectiveAttentionFactor();
    bool interleaved = op.getInterleaved();

    Value invFreq = scaling.getKind() == RopeScalingKind::Dynamic
                        ? dynamicInverseFrequencies(b, loc, op)
                        : constantInverseFrequencies(b, loc, op);

    // positions: [B,S] / [1,S] / [S] indexed by loops (b, h, s, d).
    AffineExpr zero = getAffineConstantExpr(0, ctx);
    AffineExpr bDim = getAffineDimExpr(0, ctx), sDim = getAffineDimExpr(2, ctx);
    AffineMap posMap =
        posType.getRank() == 1
            ? AffineMap::get(4, 0, {sDim}, ctx)
            : AffineMap::get(
                  4, 0, {posType.getDimSize(0) == 1 ? zero : bDim, sDim}, ctx);
    AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    Value init = emptyTensor(b, loc, tensorSizes(b, loc, x), elem);

    Value result =
        linalg::GenericOp::create(
            b, loc, init.getType(), ValueRange{x, op.getPositions()}, init,
            ArrayRef<AffineMap>{id4, posMap, id4}, iterators(4),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              auto cIdx = [&](int64_t v) {
                return arith::ConstantIndexOp::create(nb, nl, v).getResult();
              };
              Value d = linalg::IndexOp::create(nb, nl, 3);
              Value rotated = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::slt, d, cIdx(r));
              // Pair index k, partner feature and the sign of the partner.
              Value k, partner, negate;
              if (interleaved) {
                k = arith::DivUIOp::create(nb, nl, d, cIdx(2));
                Value odd = arith::RemUIOp::create(nb, nl, d, cIdx(2));
                negate = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                               odd, cIdx(0));
                partner = arith::SelectOp::create(
                    nb, nl, negate, arith::AddIOp::create(nb, nl, d, cIdx(1)),
                    arith::SubIOp::create(nb, nl, d, cIdx(1)));
              } else {
                Value half = cIdx(r / 2);
                negate = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                               d, half);
                k = arith::SelectOp::create(
                    nb, nl, negate, d, arith::SubIOp::create(nb, nl, d, half));
                partner = arith::SelectOp::create(
                    nb, nl, negate, arith::AddIOp::create(nb, nl, d, half),
                    arith::SubIOp::create(nb, nl, d, half));
              }
              // Pass-through features read valid indices and are discarded.
              k = arith::SelectOp::create(nb, nl, rotated, k, cIdx(0));
              partner = arith::SelectOp::create(nb, nl, rotated, partner, d);

              Value pos = arith::SIToFPOp::create(nb, nl, f32, args[1]);
              Value freq =
                  tensor::ExtractOp::create(nb, nl, invFreq, ValueRange{k});
              Value angle = arith::MulFOp::create(nb, nl, pos, freq);
              Value cosv = math::CosOp::create(nb, nl, angle);
              Value sinv = math::SinOp::create(nb, nl, angle);
              if (attentionFactor != 1.0) {
                Value af = floatConst(nb, nl, f32, attentionFactor);
                cosv = arith::MulFOp::create(nb, nl, cosv, af);
                sinv = arith::MulFOp::create(nb, nl, sinv, af);
              }
              cosv = castFloat(nb, nl, cosv, ct);
              sinv = castFloat(nb, nl, sinv, ct);

              Value idx[4] = {linalg::IndexOp::create(nb, nl, 0),
                              linalg::IndexOp::create(nb, nl, 1),
                              linalg::IndexOp::create(nb, nl, 2), partner};
              Value self = castFloat(nb, nl, args[0], ct);
              Value other = castFloat(
                  nb, nl, tensor::ExtractOp::create(nb, nl, x, idx), ct);
              Value signedOther = arith::SelectOp::create(
                  nb, nl, negate, arith::NegFOp::create(nb, nl, other), other);
              Value y = arith::AddFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, self, cosv),
                  arith::MulFOp::create(nb, nl, signedOther, sinv));
              y = arith::SelectOp::create(nb, nl, rotated, y, self);
              linalg::YieldOp::create(nb, nl, castFloat(nb, nl, y, elem));
            })
            .getResult(0);
    b.replaceOp(op, castToType(b, loc, result, xType));
    return success();
  }
};

} // namespace

void mlir::mnemo::populateRopeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RopeLowering>(patterns.getContext());
}

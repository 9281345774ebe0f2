//===- RopeToLinalg.cpp - mnemo.rope reference lowering ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers mnemo.rope and mnemo.rope_tables to one linalg.generic over the
// output. Each element reads its rotation partner with tensor.extract. For
// mnemo.rope it computes its angle from the position and a constant
// inverse-frequency table (computed on the host from the scaling attribute;
// dynamic-NTK scaling derives the table in the IR from the largest position
// of each row instead); mnemo.rope_tables reads cos and sin from its
// tables. With `tables` (convert-mnemo-to-linalg's rope-tables, on for the
// CPU targets), mnemo.rope becomes its own tables and a mnemo.rope_tables:
// cos and sin once per position and feature rather than once per element
// of every head.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/IR/RopeFrequencies.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// Whether `op`'s positions have a batch of their own ([B, S] with B not
/// 1), by which dynamic-NTK frequencies differ per row.
bool rowsOwnFrequencies(RopeOp op) {
  auto t = cast<RankedTensorType>(op.getPositions().getType());
  return t.getRank() == 2 && t.getDimSize(0) != 1;
}

/// inv_freq as an f32 tensor<1 x r/2> computed on the host.
Value constantInverseFrequencies(OpBuilder &b, Location loc, RopeOp op) {
  int64_t r = op.getRotaryDimOrDefault();
  SmallVector<double> freqs = computeRopeInverseFrequencies(
      op.getTheta().convertToDouble(), r, op.getScalingOrDefault());
  SmallVector<float> values(freqs.begin(), freqs.end());
  auto type = RankedTensorType::get({1, r / 2}, b.getF32Type());
  return arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, ArrayRef<float>(values)));
}

/// Dynamic NTK: theta' = theta * (f * seq / orig - f + 1)^(r/(r-2)) with
/// seq = max(max(positions) + 1, orig), then inv_freq[k] = theta'^(-2k/r),
/// evaluated in f32 as exp(-(2k/r) (ln theta + r/(r-2) ln ratio)) with
/// ln theta a constant: no f64 pow, which GPU targets have only through
/// libdevice. An angle pos * inv_freq[k] is then off by at most about
/// 2e-8 * pos, below the f32 rounding of the angle itself. The maximum is
/// taken per row of [B, S] positions (each sequence its own length, which
/// a batch of ragged sequences needs), over all of [1, S] or [S]: an f32
/// tensor<P x r/2>, P the rows (or 1), read inside the table's generic, so
/// GPU targets keep both in kernels.
Value dynamicInverseFrequencies(OpBuilder &b, Location loc, RopeOp op) {
  MLIRContext *ctx = op.getContext();
  RopeScalingAttr s = op.getScalingOrDefault();
  int64_t r = op.getRotaryDimOrDefault();
  Value positions = op.getPositions();
  auto posType = cast<RankedTensorType>(positions.getType());
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  bool perRow = rowsOwnFrequencies(op);
  OpFoldResult rows =
      perRow ? tensor::getMixedSize(b, loc, positions, 0) : b.getIndexAttr(1);

  // The largest position of each row, as i64, in a tensor<P x i64>: the
  // loops are (row, positions' dims), the row dim parallel.
  Value zero = arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0));
  Value maxInit =
      linalg::FillOp::create(b, loc, zero, emptyTensor(b, loc, {rows}, i64))
          .getResult(0);
  unsigned rank = posType.getRank();
  SmallVector<unsigned> reduced;
  SmallVector<AffineExpr> posDims;
  unsigned loops = perRow ? rank : rank + 1;
  for (unsigned i = perRow ? 0 : 1; i < loops; ++i)
    posDims.push_back(getAffineDimExpr(i, ctx));
  for (unsigned i = 1; i < loops; ++i)
    reduced.push_back(i);
  AffineMap rowMap = AffineMap::get(loops, 0, {getAffineDimExpr(0, ctx)}, ctx);
  Value maxPos =
      linalg::GenericOp::create(
          b, loc, maxInit.getType(), positions, maxInit,
          ArrayRef<AffineMap>{AffineMap::get(loops, 0, posDims, ctx), rowMap},
          iterators(loops, reduced),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value p = args[0];
            if (p.getType() != i64)
              p = arith::ExtSIOp::create(nb, nl, i64, p);
            linalg::YieldOp::create(
                nb, nl, arith::MaxSIOp::create(nb, nl, p, args[1]).getResult());
          })
          .getResult(0);

  double factor = s.factor();
  int64_t orig = s.getOriginalMaxPosition();
  double logTheta = std::log(op.getTheta().convertToDouble());
  Value empty = emptyTensor(b, loc, {rows, b.getIndexAttr(r / 2)}, f32);
  return linalg::GenericOp::create(
             b, loc, empty.getType(), ValueRange{maxPos}, empty,
             ArrayRef<AffineMap>{
                 AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx),
                 AffineMap::getMultiDimIdentityMap(2, ctx)},
             iterators(2),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               auto c = [&](double v) { return floatConst(nb, nl, f32, v); };
               Value seq = arith::MaxSIOp::create(
                   nb, nl,
                   arith::AddIOp::create(
                       nb, nl, args[0],
                       arith::ConstantOp::create(nb, nl, i64,
                                                 nb.getI64IntegerAttr(1))),
                   arith::ConstantOp::create(nb, nl, i64,
                                             nb.getI64IntegerAttr(orig)));
               Value ratio = arith::SubFOp::create(
                   nb, nl,
                   arith::MulFOp::create(
                       nb, nl, arith::SIToFPOp::create(nb, nl, f32, seq),
                       c(factor / double(orig))),
                   c(factor - 1.0));
               // ln theta' = ln theta + r/(r-2) ln ratio.
               Value logBase = arith::AddFOp::create(
                   nb, nl, c(logTheta),
                   arith::MulFOp::create(nb, nl,
                                         math::LogOp::create(nb, nl, ratio),
                                         c(double(r) / double(r - 2))));
               Value k = linalg::IndexOp::create(nb, nl, 1);
               Value kf = arith::SIToFPOp::create(
                   nb, nl, f32, arith::IndexCastOp::create(nb, nl, i64, k));
               Value expo = arith::MulFOp::create(
                   nb, nl, arith::MulFOp::create(nb, nl, kf, c(-2.0 / double(r))),
                   logBase);
               linalg::YieldOp::create(
                   nb, nl, math::ExpOp::create(nb, nl, expo).getResult());
             })
      .getResult(0);
}

/// Where feature `d` of a rope of width `r` finds its rotation partner.
struct RopePairing {
  Value rotated; // d < r
  Value k;       // frequency index (0 for pass-through features)
  Value partner; // the feature paired with d (d itself when passing through)
  Value negate;  // whether the partner enters negated
};

RopePairing ropePairing(OpBuilder &nb, Location nl, Value d, int64_t r,
                        bool interleaved) {
  auto cIdx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(nb, nl, v).getResult();
  };
  RopePairing p;
  p.rotated =
      arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, d, cIdx(r));
  if (interleaved) {
    p.k = arith::DivUIOp::create(nb, nl, d, cIdx(2));
    Value odd = arith::RemUIOp::create(nb, nl, d, cIdx(2));
    p.negate =
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, odd, cIdx(0));
    p.partner = arith::SelectOp::create(
        nb, nl, p.negate, arith::AddIOp::create(nb, nl, d, cIdx(1)),
        arith::SubIOp::create(nb, nl, d, cIdx(1)));
  } else {
    Value half = cIdx(r / 2);
    p.negate =
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, d, half);
    p.k = arith::SelectOp::create(nb, nl, p.negate, d,
                                  arith::SubIOp::create(nb, nl, d, half));
    p.partner = arith::SelectOp::create(
        nb, nl, p.negate, arith::AddIOp::create(nb, nl, d, half),
        arith::SubIOp::create(nb, nl, d, half));
  }
  // Pass-through features read valid indices and are discarded.
  p.k = arith::SelectOp::create(nb, nl, p.rotated, p.k, cIdx(0));
  p.partner = arith::SelectOp::create(nb, nl, p.rotated, p.partner, d);
  return p;
}

/// `self * cos + (negate ? -other : other) * sin` in the compute type.
Value rotateWithPartner(OpBuilder &nb, Location nl, Value negate, Value self,
                        Value other, Value cosv, Value sinv) {
  Value signedOther = arith::SelectOp::create(
      nb, nl, negate, arith::NegFOp::create(nb, nl, other), other);
  return arith::AddFOp::create(
      nb, nl, arith::MulFOp::create(nb, nl, self, cosv),
      arith::MulFOp::create(nb, nl, signedOther, sinv));
}

/// rotateWithPartner, or `self` for a pass-through feature, cast back to
/// `elem`.
Value rotateFeature(OpBuilder &nb, Location nl, const RopePairing &pair,
                    Value self, Value other, Value cosv, Value sinv,
                    Type elem) {
  Value y = rotateWithPartner(nb, nl, pair.negate, self, other, cosv, sinv);
  y = arith::SelectOp::create(nb, nl, pair.rotated, y, self);
  return castFloat(nb, nl, y, elem);
}

/// cos and sin of angle `pos * inv_freq[row, k]` (f32), times the
/// attention factor: what every rope lowering evaluates, in this order.
/// `row` is the positions' row (the loop's dim 0); a table of one row
/// serves them all. With `computeIn`, both are cast to that type.
std::pair<Value, Value> angleCosSin(OpBuilder &nb, Location nl, Value pos,
                                    Value invFreq, Value k,
                                    double attentionFactor,
                                    Type computeIn = {}) {
  Type f32 = nb.getF32Type();
  Value posF = arith::SIToFPOp::create(nb, nl, f32, pos);
  Value row =
      cast<RankedTensorType>(invFreq.getType()).getDimSize(0) == 1
          ? arith::ConstantIndexOp::create(nb, nl, 0).getResult()
          : linalg::IndexOp::create(nb, nl, 0).getResult();
  Value freq = tensor::ExtractOp::create(nb, nl, invFreq, ValueRange{row, k});
  Value angle = arith::MulFOp::create(nb, nl, posF, freq);
  Value cosv = math::CosOp::create(nb, nl, angle);
  Value sinv = math::SinOp::create(nb, nl, angle);
  if (attentionFactor != 1.0) {
    Value af = floatConst(nb, nl, f32, attentionFactor);
    cosv = arith::MulFOp::create(nb, nl, cosv, af);
    sinv = arith::MulFOp::create(nb, nl, sinv, af);
  }
  if (computeIn)
    return {castFloat(nb, nl, cosv, computeIn),
            castFloat(nb, nl, sinv, computeIn)};
  return {cosv, sinv};
}

/// The cos and sin tables of `op`'s angles, f32 [P, S, r] (or [S, r] for
/// positions [S]) with P the positions' batch (or 1): each feature d of the
/// rotary width gets the angle of its frequency, as mnemo.rope_tables reads
/// them.
std::pair<Value, Value> ropeTables(OpBuilder &b, Location loc, RopeOp op,
                                   Value invFreq) {
  MLIRContext *ctx = op.getContext();
  Value positions = op.getPositions();
  int64_t rank = cast<RankedTensorType>(positions.getType()).getRank();
  int64_t r = op.getRotaryDimOrDefault();
  bool interleaved = op.getInterleaved();
  double attentionFactor =
      op.getScalingOrDefault().getEffectiveAttentionFactor();
  SmallVector<OpFoldResult> sizes = tensorSizes(b, loc, positions);
  sizes.push_back(b.getIndexAttr(r));
  Value empty = emptyTensor(b, loc, sizes, b.getF32Type());
  SmallVector<AffineExpr> posDims;
  for (int64_t i = 0; i < rank; ++i)
    posDims.push_back(getAffineDimExpr(i, ctx));
  AffineMap posMap = AffineMap::get(rank + 1, 0, posDims, ctx);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank + 1, ctx);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{empty.getType(), empty.getType()}, positions,
      ValueRange{empty, empty}, ArrayRef<AffineMap>{posMap, id, id},
      iterators(rank + 1), [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value d = linalg::IndexOp::create(nb, nl, rank);
        RopePairing pair = ropePairing(nb, nl, d, r, interleaved);
        auto [cosv, sinv] =
            angleCosSin(nb, nl, args[0], invFreq, pair.k, attentionFactor);
        linalg::YieldOp::create(nb, nl, ValueRange{cosv, sinv});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

/// The positions' map in loops (b, h, s, ...) of `loops` dims: [B, S],
/// [1, S] (broadcast over the batch) or [S].
AffineMap positionsMap(RankedTensorType posType, unsigned loops) {
  MLIRContext *ctx = posType.getContext();
  AffineExpr sDim = getAffineDimExpr(2, ctx);
  if (posType.getRank() == 1)
    return AffineMap::get(loops, 0, {sDim}, ctx);
  AffineExpr row = posType.getDimSize(0) == 1 ? getAffineConstantExpr(0, ctx)
                                              : getAffineDimExpr(0, ctx);
  return AffineMap::get(loops, 0, {row, sDim}, ctx);
}

/// A generic over `input` ([B, H, S, ...]) and `op`'s positions, yielding
/// `body(x, position)` for each element.
Value positionalGeneric(
    OpBuilder &b, RopeOp op, Value input,
    function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(input.getType());
  unsigned loops = type.getRank();
  AffineMap posMap =
      positionsMap(cast<RankedTensorType>(op.getPositions().getType()), loops);
  AffineMap id = AffineMap::getMultiDimIdentityMap(loops, op.getContext());
  Value init =
      emptyTensor(b, loc, tensorSizes(b, loc, input), type.getElementType());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{input, op.getPositions()}, init,
             ArrayRef<AffineMap>{id, posMap, id}, iterators(loops),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, args[0], args[1]));
             })
      .getResult(0);
}

/// A rotate-half rope over every feature (r = D): x viewed as
/// [B, H, S, 2, r/2], the loops (b, h, s, j, k), each element rotated with
/// its partner in the other half (j' = 1 - j) at the same k. The innermost
/// loop then runs along k over contiguous features, frequencies and the
/// partners alike, with no index arithmetic on it: a loop the GPU targets
/// move several elements a thread in (mnemo-gpu-vectorize-elements) and the
/// CPU targets vectorize. The same arithmetic as the generic form.
Value rotateHalves(OpBuilder &b, RopeOp op, Value invFreq) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  auto xType = cast<RankedTensorType>(x.getType());
  Type elem = xType.getElementType();
  FloatType ct = computeType(elem);
  int64_t half = op.getRotaryDimOrDefault() / 2;
  double attentionFactor =
      op.getScalingOrDefault().getEffectiveAttentionFactor();
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2}, {3, 4}};
  SmallVector<int64_t> shape(xType.getShape().drop_back());
  shape.append({2, half});
  Value halves = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, elem), x, groups);

  Value rotated = positionalGeneric(
      b, op, halves,
      [&](OpBuilder &nb, Location nl, Value x, Value pos) -> Value {
        Value j = linalg::IndexOp::create(nb, nl, 3);
        Value k = linalg::IndexOp::create(nb, nl, 4);
        Value one = arith::ConstantIndexOp::create(nb, nl, 1);
        auto [cosv, sinv] =
            angleCosSin(nb, nl, pos, invFreq, k, attentionFactor, ct);
        Value idx[5] = {linalg::IndexOp::create(nb, nl, 0),
                        linalg::IndexOp::create(nb, nl, 1),
                        linalg::IndexOp::create(nb, nl, 2),
                        arith::SubIOp::create(nb, nl, one, j), k};
        Value self = castFloat(nb, nl, x, ct);
        Value other = castFloat(
            nb, nl, tensor::ExtractOp::create(nb, nl, halves, idx), ct);
        // The first half takes its partner negated.
        Value first =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, j,
                                  arith::ConstantIndexOp::create(nb, nl, 0));
        return castFloat(
            nb, nl, rotateWithPartner(nb, nl, first, self, other, cosv, sinv),
            elem);
      });
  Value result =
      tensor::CollapseShapeOp::create(b, loc, rotated, groups).getResult();
  return castToType(b, loc, result, xType);
}

struct RopeLowering final : OpRewritePattern<RopeOp> {
  RopeLowering(MLIRContext *ctx, bool tables)
      : OpRewritePattern(ctx), tables(tables) {}

  LogicalResult matchAndRewrite(RopeOp op, PatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto xType = cast<RankedTensorType>(x.getType());
    Type elem = xType.getElementType();
    FloatType ct = computeType(elem);
    int64_t r = op.getRotaryDimOrDefault();
    RopeScalingAttr scaling = op.getScalingOrDefault();
    double attentionFactor = scaling.getEffectiveAttentionFactor();
    bool interleaved = op.getInterleaved();

    Value invFreq = scaling.getKind() == RopeScalingKind::Dynamic
                        ? dynamicInverseFrequencies(b, loc, op)
                        : constantInverseFrequencies(b, loc, op);
    if (tables) {
      auto [cos, sin] = ropeTables(b, loc, op, invFreq);
      b.replaceOpWithNewOp<RopeTablesOp>(op, xType, x, cos, sin,
                                         op.getInterleavedAttr());
      return success();
    }

    if (!interleaved && !xType.isDynamicDim(3) && xType.getDimSize(3) == r) {
      b.replaceOp(op, rotateHalves(b, op, invFreq));
      return success();
    }

    Value result =
        positionalGeneric(
            b, op, x,
            [&](OpBuilder &nb, Location nl, Value xv, Value pos) -> Value {
              Value d = linalg::IndexOp::create(nb, nl, 3);
              RopePairing pair = ropePairing(nb, nl, d, r, interleaved);
              Value k = pair.k, partner = pair.partner;

              auto [cosv, sinv] =
                  angleCosSin(nb, nl, pos, invFreq, k, attentionFactor, ct);

              Value idx[4] = {linalg::IndexOp::create(nb, nl, 0),
                              linalg::IndexOp::create(nb, nl, 1),
                              linalg::IndexOp::create(nb, nl, 2), partner};
              Value self = castFloat(nb, nl, xv, ct);
              Value other = castFloat(
                  nb, nl, tensor::ExtractOp::create(nb, nl, x, idx), ct);
              return rotateFeature(nb, nl, pair, self, other, cosv, sinv, elem);
            });
    b.replaceOp(op, castToType(b, loc, result, xType));
    return success();
  }

private:
  bool tables;
};

/// mnemo.rope_tables: the same generic, reading cos/sin from the tables at
/// (batch or 0, s, d) instead of computing them.
struct RopeTablesLowering final : OpRewritePattern<RopeTablesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RopeTablesOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto xType = cast<RankedTensorType>(x.getType());
    auto tType = cast<RankedTensorType>(op.getCos().getType());
    Type elem = xType.getElementType();
    FloatType ct = computeType(elem);
    int64_t r = op.getRotaryDim();
    bool interleaved = op.getInterleaved();
    bool batched = tType.getRank() == 3 && tType.getDimSize(0) != 1;
    Value init = emptyTensor(b, loc, tensorSizes(b, loc, x), elem);
    AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, op.getContext());

    Value result =
        linalg::GenericOp::create(
            b, loc, init.getType(), ValueRange{x}, init,
            ArrayRef<AffineMap>{id4, id4}, iterators(4),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value d = linalg::IndexOp::create(nb, nl, 3);
              RopePairing pair = ropePairing(nb, nl, d, r, interleaved);
              Value bi = linalg::IndexOp::create(nb, nl, 0);
              Value si = linalg::IndexOp::create(nb, nl, 2);
              // Pass-through features read column 0 of the tables.
              Value col = arith::SelectOp::create(
                  nb, nl, pair.rotated, d,
                  arith::ConstantIndexOp::create(nb, nl, 0));
              SmallVector<Value> at;
              if (tType.getRank() == 3)
                at.push_back(batched
                                 ? bi
                                 : arith::ConstantIndexOp::create(nb, nl, 0)
                                       .getResult());
              at.append({si, col});
              Value cosv = castFloat(
                  nb, nl, tensor::ExtractOp::create(nb, nl, op.getCos(), at),
                  ct);
              Value sinv = castFloat(
                  nb, nl, tensor::ExtractOp::create(nb, nl, op.getSin(), at),
                  ct);
              Value idx[4] = {bi, linalg::IndexOp::create(nb, nl, 1), si,
                              pair.partner};
              Value self = castFloat(nb, nl, args[0], ct);
              Value other = castFloat(
                  nb, nl, tensor::ExtractOp::create(nb, nl, x, idx), ct);
              linalg::YieldOp::create(
                  nb, nl,
                  rotateFeature(nb, nl, pair, self, other, cosv, sinv, elem));
            })
            .getResult(0);
    b.replaceOp(op, castToType(b, loc, result, xType));
    return success();
  }
};

} // namespace

void mlir::mnemo::populateRopeToLinalgPatterns(RewritePatternSet &patterns,
                                               bool tables) {
  patterns.add<RopeLowering>(patterns.getContext(), tables);
  patterns.add<RopeTablesLowering>(patterns.getContext());
}

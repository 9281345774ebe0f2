//===- ExpertsToLinalg.cpp - mnemo.experts reference lowering ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.experts as contractions over each token's selected experts only:
// the expert's weight rows are read where the contraction uses them
// (tensor.extract at the index the token's router chose), so the work is
// K / E of the dense mixture and no expert weight is copied:
//
//   g[b,s,j,i] = sum_h x[b,s,h] gate[e,i,h]     e = indices[b,s,j]
//   u[b,s,j,i] = sum_h x[b,s,h] up[e,i,h]
//   out[b,s,o] = sum_j sum_i weights[b,s,j] swiglu(g, u)[b,s,j,i] down[e,o,i]
//
// With `alongOutputs` (the CPU targets) and constant weights, each
// expert's matrices are transposed at compile time ([E, H, I] and
// [E, I, O]) and the output feature becomes the innermost loop: a row of
// the transposed weight scaled and added to a row of the result, its steps
// independent, where the inner loop had been a dot product whose every
// step waited for the one before (the sum lives in memory). Each result still
// sums its products in the same order (h, or j then i, ascending), so the
// values are the same. (The loops stay scalar: the expert's index is read
// inside them, and LLVM cannot tell that read from the result's stores.)
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

#include <cstring>
#include <vector>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// `w` [E, R, C] with each expert's matrix transposed ([E, C, R]), when it
/// is a dense constant of byte-sized elements; else null.
Value transposedExperts(OpBuilder &b, Location loc, Value w) {
  auto constant = w.getDefiningOp<arith::ConstantOp>();
  auto value = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  if (!value || value.getType().getRank() != 3 ||
      value.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return {};
  auto type = cast<RankedTensorType>(value.getType());
  int64_t e = type.getDimSize(0), r = type.getDimSize(1),
          c = type.getDimSize(2);
  auto transposed = RankedTensorType::get({e, c, r}, type.getElementType());
  if (value.isSplat())
    return arith::ConstantOp::create(b, loc, value.reshape(transposed));
  size_t bytes = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> raw = value.getRawData();
  std::vector<char> out(raw.size());
  for (int64_t x = 0; x < e; ++x)
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j)
        std::memcpy(&out[((x * c + j) * r + i) * bytes],
                    &raw[((x * r + i) * c + j) * bytes], bytes);
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::getFromRawBuffer(transposed, out));
}

struct ExpertsLowering final : OpRewritePattern<ExpertsOp> {
  ExpertsLowering(MLIRContext *ctx, bool alongOutputs)
      : OpRewritePattern(ctx), alongOutputs(alongOutputs) {}

  LogicalResult matchAndRewrite(ExpertsOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value x = op.getInput(), idx = op.getIndices();
    RankedTensorType resultType = op.getResult().getType();
    FloatType ct = computeType(resultType.getElementType());
    int64_t experts = op.getGate().getType().getDimSize(0);
    SmallVector<OpFoldResult> xs = tensorSizes(b, loc, x),
                              is = tensorSizes(b, loc, idx);
    OpFoldResult inter = b.getIndexAttr(op.getGate().getType().getDimSize(1));
    AffineExpr d0, d1, d2, d3, d4;
    bindDims(ctx, d0, d1, d2, d3, d4);
    auto map = [&](ArrayRef<AffineExpr> e) {
      return AffineMap::get(5, 0, e, ctx);
    };

    // The expert an index names (clamped into range so that the read is
    // safe) and whether it names one.
    auto expert = [&](OpBuilder &nb, Location nl, Value raw) {
      return clampedIndex(nb, nl, raw,
                          arith::ConstantIndexOp::create(nb, nl, experts));
    };

    // Each weight transposed where it can be (the three are independent).
    Value gateT, upT, downT;
    if (alongOutputs) {
      gateT = transposedExperts(b, loc, op.getGate());
      upT = transposedExperts(b, loc, op.getUp());
      downT = transposedExperts(b, loc, op.getDown());
    }
    bool transposed = static_cast<bool>(downT);

    // [B, S, K, I] = x against the selected experts' rows of `w` (loops b,
    // s, j, i, h), or along the rows of `wT`, w transposed (b, s, j, h, i):
    // either way the weight is read at (e, loop 3, loop 4).
    auto project = [&](Value w, Value wT) {
      Value init = filledTensor(b, loc, {xs[0], xs[1], is[2], inter}, ct, 0.0);
      AffineExpr ei = wT ? d4 : d3, eh = wT ? d3 : d4;
      Value read = wT ? wT : w;
      return linalg::GenericOp::create(
                 b, loc, init.getType(), ValueRange{x, idx}, init,
                 ArrayRef<AffineMap>{map({d0, d1, eh}), map({d0, d1, d2}),
                                     map({d0, d1, d2, ei})},
                 iterators(5, {wT ? 3u : 4u}),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   Value e = expert(nb, nl, a[1]).first;
                   Value wv = tensor::ExtractOp::create(
                       nb, nl, read,
                       ValueRange{e, linalg::IndexOp::create(nb, nl, 3),
                                  linalg::IndexOp::create(nb, nl, 4)});
                   yieldMultiplyAdd(nb, nl, a[0], wv, a[2], ct);
                 })
          .getResult(0);
    };
    Value act = SwiGluOp::create(b, loc, project(op.getGate(), gateT),
                                 project(op.getUp(), upT), op.getLimitAttr());

    // out[b,s,o] = sum_j sum_i w[b,s,j] act[b,s,j,i] down[e,o,i]
    //   (loops b, s, o, j, i; transposed: b, s, j, i, o over downT[e,i,o])
    Value down = transposed ? downT : op.getDown();
    Value out = filledTensor(b, loc, {xs[0], xs[1], xs[2]}, ct, 0.0);
    // The loops of o, j and i in the loop nest.
    unsigned lo = transposed ? 4 : 2, lj = transposed ? 2 : 3,
             li = transposed ? 3 : 4;
    AffineExpr eo = getAffineDimExpr(lo, ctx), ej = getAffineDimExpr(lj, ctx),
               ei = getAffineDimExpr(li, ctx);
    out = linalg::GenericOp::create(
              b, loc, out.getType(), ValueRange{act, idx, op.getWeights()},
              out,
              ArrayRef<AffineMap>{map({d0, d1, ej, ei}), map({d0, d1, ej}),
                                  map({d0, d1, ej}), map({d0, d1, eo})},
              iterators(5, {lj, li}),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                auto [e, valid] = expert(nb, nl, a[1]);
                Value o = linalg::IndexOp::create(nb, nl, lo);
                Value i = linalg::IndexOp::create(nb, nl, li);
                SmallVector<Value> at = transposed
                                            ? SmallVector<Value>{e, i, o}
                                            : SmallVector<Value>{e, o, i};
                Value dv = tensor::ExtractOp::create(nb, nl, down, at);
                Value p = arith::MulFOp::create(
                    nb, nl, arith::MulFOp::create(nb, nl, a[2], a[0]),
                    castFloat(nb, nl, dv, ct));
                p = arith::SelectOp::create(nb, nl, valid, p,
                                            floatConst(nb, nl, ct, 0.0));
                linalg::YieldOp::create(
                    nb, nl, arith::AddFOp::create(nb, nl, a[3], p).getResult());
              })
              .getResult(0);
    b.replaceOp(op, castToType(b, loc,
                               castElements(b, loc, out,
                                            resultType.getElementType()),
                               resultType));
    return success();
  }

private:
  bool alongOutputs;
};

} // namespace

void mlir::mnemo::populateExpertsToLinalgPatterns(RewritePatternSet &patterns,
                                                  bool alongOutputs) {
  patterns.add<ExpertsLowering>(patterns.getContext(), alongOutputs);
}

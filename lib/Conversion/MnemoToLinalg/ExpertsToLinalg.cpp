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
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

struct ExpertsLowering final : OpRewritePattern<ExpertsOp> {
  using OpRewritePattern::OpRewritePattern;

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

    // [B, S, K, I] = x against the selected experts' rows of `w`.
    auto project = [&](Value w) {
      Value init = filledTensor(b, loc, {xs[0], xs[1], is[2], inter}, ct, 0.0);
      return linalg::GenericOp::create(
                 b, loc, init.getType(), ValueRange{x, idx}, init,
                 ArrayRef<AffineMap>{map({d0, d1, d4}), map({d0, d1, d2}),
                                     map({d0, d1, d2, d3})},
                 iterators(5, {4}),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   Value e = expert(nb, nl, a[1]).first;
                   Value wv = tensor::ExtractOp::create(
                       nb, nl, w,
                       ValueRange{e, linalg::IndexOp::create(nb, nl, 3),
                                  linalg::IndexOp::create(nb, nl, 4)});
                   yieldMultiplyAdd(nb, nl, a[0], wv, a[2], ct);
                 })
          .getResult(0);
    };
    Value act = SwiGluOp::create(b, loc, project(op.getGate()),
                                 project(op.getUp()), op.getLimitAttr());

    // out[b,s,o] = sum_j sum_i w[b,s,j] act[b,s,j,i] down[e,o,i]
    //   (loops b, s, o, j, i)
    Value down = op.getDown();
    Value out = filledTensor(b, loc, {xs[0], xs[1], xs[2]}, ct, 0.0);
    out = linalg::GenericOp::create(
              b, loc, out.getType(), ValueRange{act, idx, op.getWeights()},
              out,
              ArrayRef<AffineMap>{map({d0, d1, d3, d4}), map({d0, d1, d3}),
                                  map({d0, d1, d3}), map({d0, d1, d2})},
              iterators(5, {3, 4}),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                auto [e, valid] = expert(nb, nl, a[1]);
                Value dv = tensor::ExtractOp::create(
                    nb, nl, down,
                    ValueRange{e, linalg::IndexOp::create(nb, nl, 2),
                               linalg::IndexOp::create(nb, nl, 4)});
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

};

} // namespace

void mlir::mnemo::populateExpertsToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ExpertsLowering>(patterns.getContext());
}

//===- ApproximateMath.cpp - polynomial math for kernels -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::mnemo {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "mnemo/Conversion/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {
/// math.powf(a, b) as C's powf defines it, in exp and log of |a|: upstream's
/// expansion computes exp(b * log(a)), NaN for every negative base, so that
/// an RMSNorm's x^2 whose exponent the simplification cannot see (a
/// broadcast constant tensor of a TorchScript export) came out NaN. Here
///   pow(a, b) = 1                            where b == 0 or a == 1,
///             = s * exp(b * log(|a|))        otherwise, with
///   s = -1 for a < 0 and b an odd integer, NaN for a < 0 and b not an
///   integer, else 1
/// (a = 0 gives exp(-inf * b): 0 for b > 0, inf for b < 0).
struct ExpandPowf final : OpRewritePattern<math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::PowFOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    unsigned width = getElementTypeOrSelf(type).getIntOrFloatBitWidth();
    if (width > 32)
      return rewriter.notifyMatchFailure(op, "wider than f32");
    if (width < 32) {
      // A narrower float computes in f32 (that powf expanded in turn).
      Type f32 = b.getF32Type();
      if (auto shaped = dyn_cast<ShapedType>(type))
        f32 = shaped.clone(f32);
      Value wide =
          math::PowFOp::create(b, arith::ExtFOp::create(b, f32, op.getLhs()),
                               arith::ExtFOp::create(b, f32, op.getRhs()));
      rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, type, wide);
      return success();
    }
    auto constant = [&](double v) -> Value {
      Attribute attr = b.getFloatAttr(getElementTypeOrSelf(type), v);
      if (auto shaped = dyn_cast<ShapedType>(type))
        attr = DenseElementsAttr::get(shaped, attr);
      return arith::ConstantOp::create(b, cast<TypedAttr>(attr));
    };
    auto cmp = [&](arith::CmpFPredicate pred, Value x, Value y) {
      return arith::CmpFOp::create(b, pred, x, y);
    };
    Value a = op.getLhs(), e = op.getRhs();
    Value magnitude = math::ExpOp::create(
        b, arith::MulFOp::create(
               b, e, math::LogOp::create(b, math::AbsFOp::create(b, a))));
    Value integral =
        cmp(arith::CmpFPredicate::OEQ, math::FloorOp::create(b, e), e);
    // (Odd: b / 2 not integral; no frem, which NVPTX expands.)
    Value half = arith::MulFOp::create(b, e, constant(0.5));
    Value odd = arith::AndIOp::create(
        b, integral,
        cmp(arith::CmpFPredicate::ONE, math::FloorOp::create(b, half), half));
    Value negative = cmp(arith::CmpFPredicate::OLT, a, constant(0.0));
    Value signed_ = arith::SelectOp::create(
        b, odd, arith::NegFOp::create(b, magnitude), magnitude);
    Value ofNegative =
        arith::SelectOp::create(b, integral, signed_, constant(std::nan("")));
    Value general = arith::SelectOp::create(b, negative, ofNegative, magnitude);
    Value one = arith::OrIOp::create(
        b, cmp(arith::CmpFPredicate::OEQ, e, constant(0.0)),
        cmp(arith::CmpFPredicate::OEQ, a, constant(1.0)));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, one, constant(1.0),
                                                 general);
    return success();
  }
};

struct ApproximateMathPass final
    : mnemo::impl::ApproximateMathPassBase<ApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    if (expandPow) {
      // Constant exponents MLIR knows first (2: x * x, 0.5: sqrt, ...),
      // then every other powf.
      RewritePatternSet simplify(&getContext());
      populateMathAlgebraicSimplificationPatterns(simplify);
      if (failed(applyPatternsGreedily(getOperation(), std::move(simplify))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (expandPow)
      patterns.add<ExpandPowf>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    SmallVector<Operation *> kept;
    if (keepFastTanh)
      getOperation()->walk([&](math::TanhOp op) {
        if (op.getType().isF32() &&
            bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn))
          kept.push_back(op);
      });
    if (kept.empty()) {
      if (failed(applyPatternsGreedily(getOperation(), frozen)))
        signalPassFailure();
      return;
    }
    // Every other op, and what the approximations create.
    llvm::SmallPtrSet<Operation *, 16> skip(kept.begin(), kept.end());
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (!skip.contains(op))
        ops.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(ops, frozen, config)))
      signalPassFailure();
  }
};
} // namespace

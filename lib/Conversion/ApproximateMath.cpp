//===- ApproximateMath.cpp - polynomial math for kernels -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "mnemo/Conversion/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {
struct ApproximateMathPass final
    : mnemo::impl::ApproximateMathPassBase<ApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (expandPow) {
      populateMathAlgebraicSimplificationPatterns(patterns);
      math::populateExpansionPatterns(patterns, {"powf"});
    }
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

//===- FoldUnitTransposes.cpp - transposes that move unit dims --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A linalg.transpose that moves only dims of size 1 keeps every element
// where it is: a decode step's [B, 1, H, D] heads swapped to [B, H, 1, D]
// (and back) are the same bytes. As a transpose it is a copy (on the GPU a
// kernel of its own, four a layer of a decode step); as
//   tensor.collapse_shape (drop the unit dims) + tensor.expand_shape
// it is a view. The dims not statically 1 must keep their order; a dynamic
// dim counts as one that is not 1.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_FOLDUNITTRANSPOSESPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// The groups that collapse `shape` onto its dims that are not 1, each
/// unit dim with the dim before it (leading ones with the first); none
/// when every dim is 1.
SmallVector<ReassociationIndices> unitGroups(ArrayRef<int64_t> shape) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices leading;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (shape[i] != 1) {
      groups.emplace_back(leading);
      leading.clear();
      groups.back().push_back(i);
    } else if (groups.empty()) {
      leading.push_back(i);
    } else {
      groups.back().push_back(i);
    }
  }
  return groups;
}

struct TransposeOfUnitDims final : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto out = dyn_cast<RankedTensorType>(op.getInit().getType());
    if (!in || !out || op->getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "not on tensors");
    // The dims that are not 1, in the order the result holds them, must
    // be in the order of the input.
    int64_t last = -1;
    for (int64_t source : op.getPermutation()) {
      if (in.getDimSize(source) == 1)
        continue;
      if (source < last)
        return rewriter.notifyMatchFailure(op, "moves a dim that is not 1");
      last = source;
    }
    SmallVector<ReassociationIndices> collapse = unitGroups(in.getShape());
    SmallVector<ReassociationIndices> expand = unitGroups(out.getShape());
    if (collapse.empty() || collapse.size() != expand.size())
      return rewriter.notifyMatchFailure(op, "every dim is 1");
    Location loc = op.getLoc();
    Value flat = tensor::CollapseShapeOp::create(rewriter, loc,
                                                 op.getInput(), collapse);
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, op.getInit());
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, out, flat, expand,
                                                       sizes);
    return success();
  }
};

struct FoldUnitTransposesPass final
    : mnemo::impl::FoldUnitTransposesPassBase<FoldUnitTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TransposeOfUnitDims>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation()->emitError("mnemo-fold-unit-transposes did not converge");
      return signalPassFailure();
    }
  }
};

} // namespace

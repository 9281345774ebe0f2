//===- GenerateConcats.cpp - a concat of a generated tensor, generated ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The importers write a concatenation as insert_slices into an empty tensor:
//
//   %a = tensor.insert_slice %gen into %empty[0, .., 0] [.., n, ..]
//   %c = tensor.insert_slice %new into %a[0, .., o, .., 0] [.., m, ..]
//
// When %gen is computed from its indices alone (builders::indexGenerated)
// and %new has a static, non-zero extent m along the dim, %c becomes such a
// generic too:
//
//   %c[.., t, ..] = t < o ? gen(.., min(t, o - 1), ..)
//                         : %new[.., t - o, ..]
//
// with the generator's body inlined and both sides read at clamped indices
// (%new at 0 below o) and one selected, so the element is branch-free and
// vectorizes. A consumer that computes generated operands where it loads
// them (the attention tiling) then reads the pages of a paged cache and a
// decode step's new token without the contiguous copy.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Transforms/Passes.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_GENERATECONCATSPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

struct GenerateConcat final : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::InsertSliceOp outer,
                                PatternRewriter &rewriter) const override {
    std::optional<TwoPartConcat> concat = matchTwoPartConcat(outer);
    if (!concat)
      return rewriter.notifyMatchFailure(outer, "not a concat along one dim");
    linalg::GenericOp gen = indexGenerated(concat->first);
    if (!gen)
      return rewriter.notifyMatchFailure(outer, "no generated first part");
    RankedTensorType type = outer.getResultType();
    int64_t rank = type.getRank(), axis = concat->axis;
    // The appended part is read at a clamped index below the split: it
    // must not be empty (a decode step's one new token, say), which its
    // type says, or that of a tensor.cast's source that knows more.
    Value newPart = throughCasts(concat->second);
    if (cast<RankedTensorType>(newPart.getType()).getDimSize(axis) < 1)
      return rewriter.notifyMatchFailure(outer, "appended part may be empty");

    Location loc = outer.getLoc();
    Value split =
        getValueOrCreateConstantIndexOp(rewriter, loc, concat->split);
    Value init = tensor::EmptyOp::create(
        rewriter, loc, tensorSizes(rewriter, loc, outer.getDest()),
        type.getElementType());
    Block *genBody = gen.getBody();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{
            AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext())},
        iterators(rank), [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < rank; ++d)
            indices.push_back(linalg::IndexOp::create(b, l, d));
          Value t = indices[axis];
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value one = arith::ConstantIndexOp::create(b, l, 1);
          Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                              t, split);
          // The generator at t clamped into [0, o - 1] (generators compute
          // any index in their space: their reads are clamped in their
          // bodies, as the attention tiling's tileOf assumes too).
          Value last = arith::MaxSIOp::create(
              b, l, arith::SubIOp::create(b, l, split, one), zero);
          IRMapping map;
          for (Operation &op : genBody->without_terminator()) {
            if (auto index = dyn_cast<linalg::IndexOp>(op)) {
              Value at = indices[index.getDim()];
              if (int64_t(index.getDim()) == axis)
                at = arith::MinUIOp::create(b, l, t, last);
              map.map(index.getResult(), at);
              continue;
            }
            b.clone(op, map);
          }
          Value generated =
              map.lookupOrDefault(genBody->getTerminator()->getOperand(0));
          // The appended part at t - o, or at 0 (never empty) below o.
          SmallVector<Value> at(indices);
          at[axis] = arith::SelectOp::create(
              b, l, first, zero, arith::SubIOp::create(b, l, t, split));
          Value appended = tensor::ExtractOp::create(b, l, newPart, at);
          linalg::YieldOp::create(
              b, l, arith::SelectOp::create(b, l, first, generated, appended)
                        .getResult());
        });
    rewriter.replaceOp(outer, generic.getResult(0));
    return success();
  }
};

struct GenerateConcatsPass final
    : mnemo::impl::GenerateConcatsPassBase<GenerateConcatsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<GenerateConcat>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

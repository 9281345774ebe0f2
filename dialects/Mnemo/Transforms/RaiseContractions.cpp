//===- RaiseContractions.cpp - matrix products to mnemo.linear --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An imported MatMul / Gemm is a linalg contraction
//
//   C[b..., m, n] = sum_k A[b..., m, k] * B(k, n),   C zero-initialized,
//
// with B a matrix shared by every batch (a projection's weight, constant or
// not). That is exactly `mnemo.linear %A, %B layout(in_out)` (or
// `layout(out_in)` when B is read as [n, k]), and as a mnemo.linear it
// takes the targets' GEMM kernels instead of the generic loop nest. A
// product accumulated into a C that is not zero (an attention tile's PV,
// added to the rescaled accumulator) becomes the linear plus C.
//
// Per-head weights that every row shares (the expanded MLA's keys and
// values, up-projected from the latent by each head's W_uk and W_uv:
// C[b, h, s, n] = sum_k A[b, s, k] * B[h, n, k])
// are one matrix too: B's head dims and n stacked as the output rows of a
// `layout(out_in)` linear, whose [rows..., h, n] result is transposed into
// C's order.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_RAISECONTRACTIONSPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;

namespace {

/// Whether `block` yields `c + a * b` (in either operand order) of its
/// arguments (a, b, c).
bool isMultiplyAccumulate(Block &block) {
  auto yield = cast<linalg::YieldOp>(block.getTerminator());
  if (yield.getNumOperands() != 1 || block.getOperations().size() != 3)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value a = block.getArgument(0), b = block.getArgument(1),
        c = block.getArgument(2);
  for (auto [acc, prod] : {std::pair(add.getLhs(), add.getRhs()),
                           std::pair(add.getRhs(), add.getLhs())}) {
    auto mul = prod.getDefiningOp<arith::MulFOp>();
    if (acc == c && mul &&
        ((mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a)))
      return true;
  }
  return false;
}

/// Whether `v` is a tensor of zeros (a fill or a splat constant).
bool isZeros(Value v) {
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  return matchPattern(v, m_AnyZeroFloat());
}

/// A two-operand float contraction `C += A * B` over one reduction loop,
/// on ranked tensors (a mismatch is reported to the rewriter).
struct Contraction {
  Value a, w, init;
  RankedTensorType at, wt, ct;
};

FailureOr<Contraction> matchContraction(linalg::GenericOp op,
                                        PatternRewriter &rewriter) {
  auto fail = [&] {
    return rewriter.notifyMatchFailure(op, "not a two-operand sum of "
                                           "products");
  };
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || !op.hasPureTensorSemantics() ||
      !isMultiplyAccumulate(*op.getBlock()))
    return fail();
  Contraction c{op.getDpsInputs()[0], op.getDpsInputs()[1],
                op.getDpsInits()[0], {}, {}, {}};
  c.at = dyn_cast<RankedTensorType>(c.a.getType());
  c.wt = dyn_cast<RankedTensorType>(c.w.getType());
  c.ct = dyn_cast<RankedTensorType>(c.init.getType());
  if (!c.at || !c.wt || !c.ct || !isa<FloatType>(c.ct.getElementType()) ||
      c.at.getElementType() != c.ct.getElementType() ||
      !isa<FloatType>(c.wt.getElementType()))
    return fail();
  return c;
}

/// Replaces the contraction `op` by `product`, plus its C when C is not
/// zeros (an online-softmax accumulator): the sum is written over C, in
/// place as the contraction was (a loop's accumulator stays one buffer).
void replaceByProduct(PatternRewriter &rewriter, linalg::GenericOp op,
                      Value product, Value init) {
  if (!isZeros(init))
    product = linalg::AddOp::create(rewriter, op.getLoc(),
                                    ValueRange{product, init}, ValueRange{init})
                  ->getResult(0);
  rewriter.replaceOp(op, product);
}

struct RaiseMatMul final : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<Contraction> c = matchContraction(op, rewriter);
    if (failed(c))
      return failure();
    auto [a, w, init, at, wt, ct] = *c;
    if (wt.getRank() < 2 || ct.getRank() < 2 || at.getRank() != ct.getRank())
      return rewriter.notifyMatchFailure(op, "not a batch of rows times a "
                                             "matrix");
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    unsigned k = reductions.front();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    // C's map names the loops: batch..., m, n.
    AffineMap out = maps[2];
    if (!out.isProjectedPermutation() ||
        out.getNumResults() != op.getNumLoops() - 1)
      return rewriter.notifyMatchFailure(op, "the result is not indexed by "
                                             "the parallel loops");
    int64_t rank = ct.getRank();
    AffineExpr dk = rewriter.getAffineDimExpr(k);
    AffineExpr dn = out.getResult(rank - 1);
    SmallVector<AffineExpr> aExprs(out.getResults().drop_back());
    aExprs.push_back(dk);
    if (maps[0] != AffineMap::get(op.getNumLoops(), 0, aExprs, getContext()))
      return rewriter.notifyMatchFailure(op, "A is not [batch..., m, k]");
    // B's leading dims (a K or V block of an attention tile) have one
    // element each, whatever they are indexed by: B is one matrix.
    if (!wt.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "B's shape is dynamic");
    int64_t lead = wt.getRank() - 2;
    for (int64_t i = 0; i < lead; ++i)
      if (wt.getDimSize(i) != 1)
        return rewriter.notifyMatchFailure(op, "B is batched");
    ArrayRef<AffineExpr> bExprs = maps[1].getResults().drop_front(lead);
    WeightLayout layout;
    if (bExprs == ArrayRef<AffineExpr>{dk, dn})
      layout = WeightLayout::InOut;
    else if (bExprs == ArrayRef<AffineExpr>{dn, dk})
      layout = WeightLayout::OutIn;
    else
      return rewriter.notifyMatchFailure(op, "B is not [k, n] or [n, k]");
    if (lead > 0) {
      ReassociationIndices first;
      for (int64_t i = 0; i <= lead; ++i)
        first.push_back(i);
      w = tensor::CollapseShapeOp::create(
          rewriter, op.getLoc(), w,
          ArrayRef<ReassociationIndices>{first, {lead + 1}});
    }
    Value product = LinearOp::create(rewriter, op.getLoc(),
                                     op.getResultTypes()[0], a, w, Value(),
                                     layout);
    replaceByProduct(rewriter, op, product, init);
    return success();
  }
};

/// C[a..., h..., n] (any order) = sum_k A[a..., k] * B[h..., n, k], with
/// B static: the h dims index B and C only. One linear over B as
/// [h... * n, k], then C's order.
struct RaiseHeadMatMul final : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<Contraction> c = matchContraction(op, rewriter);
    if (failed(c))
      return failure();
    auto [a, w, init, at, wt, ct] = *c;
    if (at.getRank() < 2 || wt.getRank() < 3 || !wt.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not rows times per-head "
                                             "matrices");
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    unsigned k = reductions.front();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto dimsOf = [](AffineMap map) -> std::optional<SmallVector<unsigned>> {
      if (!map.isProjectedPermutation())
        return std::nullopt;
      SmallVector<unsigned> dims;
      for (AffineExpr e : map.getResults())
        dims.push_back(cast<AffineDimExpr>(e).getPosition());
      return dims;
    };
    auto aDims = dimsOf(maps[0]), bDims = dimsOf(maps[1]),
         cDims = dimsOf(maps[2]);
    if (!aDims || !bDims || !cDims || cDims->size() != op.getNumLoops() - 1 ||
        aDims->back() != k || bDims->back() != k)
      return rewriter.notifyMatchFailure(op, "operands are not indexed by "
                                             "the loops, k last");
    // B is [h..., n, k]: its dims other than n and k, and n, are none of
    // A's; A's other dims are C's rows.
    ArrayRef<unsigned> rows = ArrayRef(*aDims).drop_back();
    ArrayRef<unsigned> stacked = ArrayRef(*bDims).drop_back();
    for (unsigned d : stacked)
      if (llvm::is_contained(rows, d))
        return rewriter.notifyMatchFailure(op, "B shares a dim with A");
    if (rows.size() + stacked.size() != cDims->size())
      return rewriter.notifyMatchFailure(op, "C is not A's rows by B's");
    Location loc = op.getLoc();
    int64_t hn = 1;
    for (int64_t size : wt.getShape().drop_back())
      hn *= size;
    ReassociationIndices heads;
    for (int64_t i = 0; i + 1 < wt.getRank(); ++i)
      heads.push_back(i);
    Value stackedW = tensor::CollapseShapeOp::create(
        rewriter, loc, w,
        ArrayRef<ReassociationIndices>{heads, {wt.getRank() - 1}});
    SmallVector<int64_t> flatShape(at.getShape().drop_back());
    flatShape.push_back(hn);
    Value flat = LinearOp::create(
        rewriter, loc, RankedTensorType::get(flatShape, ct.getElementType()),
        a, stackedW, Value(), WeightLayout::OutIn);
    // [rows..., h... * n] -> [rows..., h..., n], then C's order.
    SmallVector<int64_t> shape(at.getShape().drop_back());
    llvm::append_range(shape, wt.getShape().drop_back());
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i + 1 < at.getRank(); ++i)
      groups.push_back({i});
    ReassociationIndices last;
    for (int64_t i = 0; i + 1 < wt.getRank(); ++i)
      last.push_back(at.getRank() - 1 + i);
    groups.push_back(last);
    Value product = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, ct.getElementType()),
        flat, groups);
    SmallVector<unsigned> order(rows);
    llvm::append_range(order, stacked);
    SmallVector<int64_t> perm;
    for (unsigned d : *cDims)
      perm.push_back(llvm::find(order, d) - order.begin());
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(rewriter, loc, init);
      Value empty = tensor::EmptyOp::create(rewriter, loc, sizes,
                                            ct.getElementType());
      product = linalg::TransposeOp::create(rewriter, loc, product, empty, perm)
                    ->getResult(0);
    }
    replaceByProduct(rewriter, op, product, init);
    return success();
  }
};

struct RaiseContractionsPass final
    : mnemo::impl::RaiseContractionsPassBase<RaiseContractionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseMatMul, RaiseHeadMatMul>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

//===- VectorizeTileOps.cpp - row vectors for a kernel tile's ops -*- C++ -*-=//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Inside a kernel tile (an attention tile: scale and mask, row maximum,
// exp, rescale, row sum) the elementwise and row-reduction ops have static
// shapes. Each becomes a loop over its rows whose body works on one whole
// row as a vector:
//
//   linalg.generic [1, 2, 32, 64] (max over the last dim)
//     -> scf.for i0, i1, i2                        one row at a time
//          vector.transfer_read  [64]               straight loads
//          vector.multi_reduction <maximumf> [64]   -> scalar
//
// Sums and products over a row may combine its lanes in any order
// (reassoc), as a tree of vector ops. A decode step's K/V tile gathered
// from the pages is such an op too when each row reads its page once and
// the row's features contiguously (one vector load each).
//
// MLIR's vectorizer does the rows (linalg::vectorize); what this pass
// decides is which ops and how they are cut. LLVM would otherwise
// vectorize the generic loops itself, across the wrong dim in places
// (gathers and scatters), with a scalar remainder each, and spend much of
// a model's compile time doing it.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_VECTORIZETILEOPSPASS
#include "mnemo/Target/CPU/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// Whether `v`, computed in `body`, depends on the innermost loop's index
/// (`linalg.index last`).
bool dependsOnIndex(Value v, Block *body, unsigned last) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != body)
    return false;
  if (auto index = dyn_cast<linalg::IndexOp>(def))
    return index.getDim() == last;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOnIndex(operand, body, last);
  });
}

/// Whether every tensor.extract in `op`'s body reads one element per row
/// (no index depends on the innermost loop: a block table's entry) or
/// reads along the innermost loop (its last index is that loop's index
/// itself and no other index depends on it: a page's row), so that a
/// row's reads are scalars and contiguous loads.
bool readsRowsContiguously(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  unsigned last = op.getNumLoops() - 1;
  bool contiguous = true;
  op->walk([&](tensor::ExtractOp extract) {
    ValueRange indices = extract.getIndices();
    if (extract->getBlock() != body || indices.empty()) {
      contiguous = false;
      return;
    }
    for (Value i : indices.drop_back())
      if (dependsOnIndex(i, body, last))
        contiguous = false;
    auto index = indices.back().getDefiningOp<linalg::IndexOp>();
    if (!(index && index.getDim() == last) &&
        dependsOnIndex(indices.back(), body, last))
      contiguous = false;
  });
  return contiguous;
}

/// A static op inside a loop whose innermost loop runs along every
/// operand's innermost dim (or is absent from it: a broadcast or a row
/// reduction), and whose only reductions are that loop.
bool isRowOp(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp, linalg::FillOp>(op) ||
      !op.hasPureTensorSemantics() ||
      !op->getParentOfType<LoopLikeOpInterface>())
    return false;
  unsigned numLoops = op.getNumLoops();
  if (numLoops == 0 || op.hasDynamicShape())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.back() < 2)
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d + 1 < numLoops; ++d)
    if (iterators[d] != utils::IteratorType::parallel)
      return false;
  // Gathers (tensor.extract at computed indices) stay scalar loops, but
  // for those that read whole rows (a key tile gathered from its pages).
  if (!readsRowsContiguously(op))
    return false;
  AffineExpr last = getAffineDimExpr(numLoops - 1, op->getContext());
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (!map.isProjectedPermutation())
      return false;
    std::optional<unsigned> at = map.getResultPosition(last);
    if (at && *at + 1 != map.getNumResults())
      return false;
  }
  return succeeded(linalg::vectorizeOpPrecondition(
      op, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
      /*vectorizeNDExtract=*/true));
}

struct VectorizeTileOpsPass final
    : mnemo::impl::VectorizeTileOpsPassBase<VectorizeTileOpsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isRowOp(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    llvm::SmallPtrSet<Operation *, 8> earlier;
    getOperation()->walk(
        [&](vector::ReductionOp op) { earlier.insert(op.getOperation()); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      // Rows: every loop but the innermost cut to 1.
      SmallVector<OpFoldResult> sizes(op.getNumLoops(),
                                      rewriter.getIndexAttr(1));
      sizes.back() = rewriter.getIndexAttr(0);
      scf::SCFTilingOptions options;
      options.setTileSizes(sizes);
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled)) {
        op.emitError("cannot cut into rows");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, tiled->replacements);
      for (Operation *row : tiled->tiledOps) {
        rewriter.setInsertionPoint(row);
        FailureOr<linalg::VectorizationResult> vectorized =
            linalg::vectorize(rewriter, row, /*inputVectorSizes=*/{},
                              /*inputScalableVecDims=*/{},
                              /*vectorizeNDExtract=*/true);
        if (failed(vectorized)) {
          row->emitError("cannot vectorize a row");
          return signalPassFailure();
        }
        if (row->getNumResults() != 0)
          rewriter.replaceOp(row, vectorized->replacements);
        else
          rewriter.eraseOp(row);
      }
    }
    // One-row vectors lose their unit dims; slices fold into the
    // transfers; a row reduction becomes a vector.reduction.
    RewritePatternSet patterns(&getContext());
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferDropUnitDimsPatterns(patterns);
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // A row's sum may add its lanes in any order (a tree of vector adds):
    // in order, LLVM adds them one by one, a chain of dependent scalar
    // adds (64 per attention score row, a third of the time of the tile's
    // softmax).
    getOperation()->walk([&](vector::ReductionOp op) {
      if (earlier.contains(op.getOperation()) ||
          (op.getKind() != vector::CombiningKind::ADD &&
           op.getKind() != vector::CombiningKind::MUL))
        return;
      op.setFastmathAttr(arith::FastMathFlagsAttr::get(
          &getContext(), op.getFastmath() | arith::FastMathFlags::reassoc));
    });
  }
};

} // namespace

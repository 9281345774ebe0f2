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
// the row's features contiguously (one vector load each). So is a gather
// of whole rows outside any loop (the pages a sparse attention's decode
// reads, its batch and token dims dynamic): its rows become the parallel
// iterations of an scf.forall, which the runtime's threads share.
//
// For SVE (`scalable`) a kernel tile's op is also made with its rows in
// chunks of scalable vectors, taken where the vector length is above 128
// bits:
//
//   scf.if vscale == 1 { the rows as above }
//   else scf.for rows { scf.for c = 0 to 64 step 4 x vscale   masked
//                                                 vector<[4]xf32> }
//
// MLIR's vectorizer does the rows (linalg::vectorize); what this pass
// decides is which ops and how they are cut. LLVM would otherwise
// vectorize the generic loops itself, across the wrong dim in places
// (gathers and scatters), with a scalar remainder each, and spend much of
// a model's compile time doing it.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// Whether `op`'s body gathers (reads a tensor with tensor.extract).
bool gathers(linalg::LinalgOp op) {
  return op->walk([](tensor::ExtractOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// How `op` is cut into rows, if it is: inside a loop (a kernel tile), a
/// static op whose innermost loop runs along every operand's innermost dim
/// (or is absent from it: a broadcast or a row reduction), and whose only
/// reductions are that loop. Outside loops, a gather of whole rows (a
/// decode step's pages gathered for a sparse attention), whose outer dims
/// may be dynamic but whose rows are static: its rows become the parallel
/// iterations of an scf.forall.
enum class RowCut { None, Loop, Forall };

RowCut rowCut(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp, linalg::FillOp>(op) ||
      !op.hasPureTensorSemantics())
    return RowCut::None;
  bool inLoop = op->getParentOfType<LoopLikeOpInterface>() != nullptr;
  unsigned numLoops = op.getNumLoops();
  if (numLoops == 0)
    return RowCut::None;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges.back()) || ranges.back() < 2)
    return RowCut::None;
  if (inLoop ? op.hasDynamicShape() : !gathers(op) || numLoops < 2)
    return RowCut::None;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d + 1 < numLoops; ++d)
    if (iterators[d] != utils::IteratorType::parallel)
      return RowCut::None;
  // A row cut outside loops runs its rows in parallel: no reduction.
  if (!inLoop && iterators.back() != utils::IteratorType::parallel)
    return RowCut::None;
  // Gathers (tensor.extract at computed indices) stay scalar loops, but
  // for those that read whole rows (a key tile gathered from its pages).
  if (!readsRowsContiguously(op))
    return RowCut::None;
  AffineExpr last = getAffineDimExpr(numLoops - 1, op->getContext());
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (!map.isProjectedPermutation())
      return RowCut::None;
    std::optional<unsigned> at = map.getResultPosition(last);
    if (at && *at + 1 != map.getNumResults())
      return RowCut::None;
  }
  // The vectorizer will see one row: a static op, or (outside loops) the
  // outer dims cut to 1. Outside loops the check takes vector sizes, at
  // least each static dim (the dynamic ones 1), since it refuses dynamic
  // shapes without them.
  SmallVector<int64_t> sizes;
  SmallVector<bool> scalable;
  if (!inLoop) {
    for (int64_t range : ranges)
      sizes.push_back(ShapedType::isDynamic(range) ? 1 : range);
    scalable.assign(numLoops, false);
  }
  if (failed(linalg::vectorizeOpPrecondition(op, sizes, scalable,
                                             /*vectorizeNDExtract=*/true)))
    return RowCut::None;
  return inLoop ? RowCut::Loop : RowCut::Forall;
}

/// `op` (a kernel tile's op) as `scf.if (vscale == 1)`: a copy for 128-bit
/// vectors (the fixed-length row vectors, which the NEON registers that
/// SVE's overlay hold) and one for longer ones; returns both.
std::pair<Operation *, Operation *> splitOnVectorLength(RewriterBase &rewriter,
                                                        Operation *op) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value narrow =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                            vector::VectorScaleOp::create(rewriter, loc),
                            arith::ConstantIndexOp::create(rewriter, loc, 1));
  auto ifOp = scf::IfOp::create(rewriter, loc, op->getResultTypes(), narrow,
                                /*withElseRegion=*/true);
  Operation *copies[2];
  for (int i = 0; i < 2; ++i) {
    Block *block = i ? ifOp.elseBlock() : ifOp.thenBlock();
    rewriter.setInsertionPointToStart(block);
    copies[i] = rewriter.clone(*op);
    scf::YieldOp::create(rewriter, loc, copies[i]->getResults());
  }
  rewriter.replaceOp(op, ifOp.getResults());
  return {copies[0], copies[1]};
}

/// Cuts `row` into chunks of 4 x vscale lanes along its innermost dim (a
/// loop over them, a reduction's value carried, the last chunk partial),
/// each a 1-D op (the row's unit dims dropped: the vectorizer's masks then
/// have one dim, which the rewrites that cast unit dims away keep
/// scalable); appends them to `chunks`.
LogicalResult cutIntoChunks(RewriterBase &rewriter, Operation *row,
                            SmallVectorImpl<Operation *> &chunks) {
  rewriter.setInsertionPoint(row);
  Location loc = row->getLoc();
  Value lanes = arith::MulIOp::create(
      rewriter, loc, vector::VectorScaleOp::create(rewriter, loc),
      arith::ConstantIndexOp::create(rewriter, loc, 4));
  unsigned loops = cast<linalg::LinalgOp>(row).getNumLoops();
  SmallVector<OpFoldResult> sizes(loops, rewriter.getIndexAttr(0));
  sizes.back() = lanes;
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  FailureOr<scf::SCFTilingResult> cut =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(row), options);
  if (failed(cut))
    return row->emitError("cannot cut a row into scalable chunks");
  rewriter.replaceOp(row, cut->replacements);
  for (Operation *piece : cut->tiledOps) {
    rewriter.setInsertionPoint(piece);
    auto generic = dyn_cast<linalg::GenericOp>(piece);
    if (!generic) {
      FailureOr<linalg::GenericOp> general =
          linalg::generalizeNamedOp(rewriter, cast<linalg::LinalgOp>(piece));
      if (failed(general))
        return piece->emitError("cannot generalize a row's chunk");
      generic = *general;
    }
    // Rank-reducing slices (views once bufferized; reshapes of the loop's
    // tensors were copies).
    linalg::ControlDropUnitDims control;
    control.rankReductionStrategy =
        linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
    FailureOr<linalg::DropUnitDimsResult> dropped =
        linalg::dropUnitDims(rewriter, generic, control);
    if (failed(dropped)) {
      chunks.push_back(generic);
      continue;
    }
    rewriter.replaceOp(generic, dropped->replacements);
    chunks.push_back(dropped->resultOp);
  }
  return success();
}

struct VectorizeTileOpsPass final
    : mnemo::impl::VectorizeTileOpsPassBase<VectorizeTileOpsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, RowCut>> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (RowCut cut = rowCut(op); cut != RowCut::None)
        ops.push_back({op, cut});
    });
    if (ops.empty())
      return;
    llvm::SmallPtrSet<Operation *, 8> earlier;
    getOperation()->walk(
        [&](vector::ReductionOp op) { earlier.insert(op.getOperation()); });
    IRRewriter rewriter(&getContext());
    for (auto [op, cut] : ops) {
      // Rows: every loop but the innermost cut to 1.
      SmallVector<OpFoldResult> sizes(op.getNumLoops(),
                                      rewriter.getIndexAttr(1));
      sizes.back() = rewriter.getIndexAttr(0);
      scf::SCFTilingOptions options;
      options.setTileSizes(sizes);
      if (cut == RowCut::Forall)
        options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      // SVE: a kernel tile's op (but a gather) is also made with its rows
      // in chunks of 4 x vscale lanes, taken where the vector length is
      // more than 128 bits (one choice for all its rows).
      SmallVector<std::pair<Operation *, bool>> targets = {{op, false}};
      if (scalable && cut == RowCut::Loop && !gathers(op)) {
        auto [fixed, chunked] = splitOnVectorLength(rewriter, op);
        targets = {{fixed, false}, {chunked, true}};
      }
      SmallVector<Operation *> rows, chunks;
      for (auto [target, inChunks] : targets) {
        rewriter.setInsertionPoint(target);
        FailureOr<scf::SCFTilingResult> tiled =
            scf::tileUsingSCF(rewriter, cast<TilingInterface>(target), options);
        if (failed(tiled)) {
          target->emitError("cannot cut into rows");
          return signalPassFailure();
        }
        rewriter.replaceOp(target, tiled->replacements);
        for (Operation *row : tiled->tiledOps) {
          if (!inChunks)
            rows.push_back(row);
          else if (failed(cutIntoChunks(rewriter, row, chunks)))
            return signalPassFailure();
        }
      }
      size_t wholeRows = rows.size();
      rows.append(chunks);
      for (auto [i, row] : llvm::enumerate(rows)) {
        rewriter.setInsertionPoint(row);
        bool chunk = i >= wholeRows;
        FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
            rewriter, row, chunk ? ArrayRef<int64_t>{4} : ArrayRef<int64_t>{},
            chunk ? ArrayRef<bool>{true} : ArrayRef<bool>{},
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
    // Scalable chunks: masked transfers carry their masks as operands
    // (bufferization and the lowering to loops do not look into a
    // vector.mask region); a masked reduction stays one, for the LLVM
    // conversion.
    if (scalable)
      vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
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

//===- ChunkIndexerTopK.cpp - indexer and top-k by query chunks -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.top_k(mnemo.lightning_indexer(...)) over a prefill's queries as an
// scf.forall over (sequence, chunk of queries): each iteration runs the
// same two ops on its chunk's rows (the keys, lengths, scale, causality and
// ties unchanged) and inserts its listings into the [B, S, K] result, so
// only a chunk's scores are ever held, not S x T of them (nor the
// reference indexer's S x heads x T products). Query row s of a chunk
// starting at s0 keeps its position: the chunk's positions operand is the
// slice of the op's, or s0 + s when the op had none.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_CHUNKINDEXERTOPKPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// The indexer whose scores only `topK` reads, or null.
LightningIndexerOp chunkableIndexer(TopKOp topK) {
  auto indexer = topK.getScores().getDefiningOp<LightningIndexerOp>();
  if (!indexer || !indexer->hasOneUse() ||
      indexer.getLengths() != topK.getLengths())
    return {};
  // One static query row per sequence (a decode step) has nothing to cut.
  int64_t rows = cast<RankedTensorType>(indexer.getQ().getType()).getDimSize(1);
  return rows == 1 ? LightningIndexerOp() : indexer;
}

/// The slice of `v` at `offsets` with `sizes`, unit strides.
Value slice(OpBuilder &b, Location loc, Value v, ArrayRef<OpFoldResult> offsets,
            ArrayRef<OpFoldResult> sizes) {
  return tensor::ExtractSliceOp::create(
      b, loc, v, offsets, sizes,
      SmallVector<OpFoldResult>(offsets.size(), b.getIndexAttr(1)));
}

/// [1, n] i64: s0, s0 + 1, ...: the positions of rows s0.. of a sequence
/// that the op placed at their row index.
Value rowPositions(OpBuilder &b, Location loc, Value s0, OpFoldResult n) {
  Type i64 = b.getI64Type();
  Value init = emptyTensor(b, loc, {b.getIndexAttr(1), n}, i64);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{b.getMultiDimIdentityMap(2)}, iterators(2),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               Value s = arith::AddIOp::create(
                   nb, nl, s0, linalg::IndexOp::create(nb, nl, 1));
               linalg::YieldOp::create(
                   nb, nl,
                   arith::IndexCastOp::create(nb, nl, i64, s).getResult());
             })
      .getResult(0);
}

Value chunked(OpBuilder &b, TopKOp topK, LightningIndexerOp indexer,
              int64_t headRows) {
  Location loc = topK.getLoc();
  Value q = indexer.getQ(), k = indexer.getK(), w = indexer.getWeights();
  Value positions = indexer.getPositions(), lengths = indexer.getLengths();
  auto qType = cast<RankedTensorType>(q.getType());
  int64_t heads = qType.getDimSize(2);
  int64_t rows = std::max<int64_t>(1, headRows / std::max<int64_t>(1, heads));
  SmallVector<OpFoldResult> qs = tensorSizes(b, loc, q),
                            ks = tensorSizes(b, loc, k),
                            ws = tensorSizes(b, loc, w);
  auto resultType = cast<RankedTensorType>(topK.getType());
  OpFoldResult count = b.getIndexAttr(resultType.getDimSize(2));
  Value seq = getValueOrCreateConstantIndexOp(b, loc, qs[1]);
  Value chunks = arith::CeilDivSIOp::create(
      b, loc, seq, arith::ConstantIndexOp::create(b, loc, rows));
  Value init = emptyTensor(b, loc, {qs[0], qs[1], count},
                           resultType.getElementType());
  auto forall = scf::ForallOp::create(
      b, loc, SmallVector<OpFoldResult>{qs[0], chunks}, ValueRange{init},
      std::nullopt);
  {
    // The body; the builder returns after the forall for the cast below.
    OpBuilder::InsertionGuard guard(b);
    Block *body = forall.getBody();
    b.setInsertionPoint(body->getTerminator());
    Value bi = body->getArgument(0);
    Value s0 = arith::MulIOp::create(b, loc, body->getArgument(1),
                                     arith::ConstantIndexOp::create(b, loc, rows));
    OpFoldResult n =
        arith::MinSIOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, rows),
                               arith::SubIOp::create(b, loc, seq, s0))
            .getResult();
    OpFoldResult z = b.getIndexAttr(0), one = b.getIndexAttr(1);
    Value qc = slice(b, loc, q, {bi, s0, z, z}, {one, n, qs[2], qs[3]});
    // Paged keys stay the whole pool; the chunk takes its row of the table.
    Value table = indexer.getTable(), kc = k, tc;
    if (table)
      tc = slice(b, loc, table, {bi, z},
                 {one, tensor::getMixedSize(b, loc, table, 1)});
    else
      kc = slice(b, loc, k, {bi, z, z}, {one, ks[1], ks[2]});
    Value wc = slice(b, loc, w, {bi, s0, z}, {one, n, ws[2]});
    Value pc;
    if (positions)
      pc = slice(b, loc, positions, {bi, s0}, {one, n});
    else if (indexer.getCausal())
      pc = rowPositions(b, loc, s0, n);
    Value lc = lengths ? slice(b, loc, lengths, {bi}, {one}) : Value();
    constexpr int64_t kDyn = ShapedType::kDynamic;
    Value scores = LightningIndexerOp::create(
        b, loc, RankedTensorType::get({1, kDyn, kDyn}, b.getF32Type()), qc, kc,
        wc, pc, lc, tc, indexer.getCausal(), indexer.getScaleAttr());
    Value listed = TopKOp::create(
        b, loc,
        RankedTensorType::get({1, kDyn, resultType.getDimSize(2)},
                              resultType.getElementType()),
        scores, lc, topK.getKAttr(), topK.getTiesAttr());
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        b, loc, listed, body->getArguments().back(),
        SmallVector<OpFoldResult>{bi, s0, z},
        SmallVector<OpFoldResult>{one, n, count},
        SmallVector<OpFoldResult>(3, one));
  }
  return castToType(b, loc, forall.getResult(0), resultType);
}

struct ChunkIndexerTopKPass final
    : mnemo::impl::ChunkIndexerTopKPassBase<ChunkIndexerTopKPass> {
  using Base::Base;

  void runOnOperation() override {
    if (headRows <= 0)
      return;
    SmallVector<std::pair<TopKOp, LightningIndexerOp>> pairs;
    getOperation()->walk([&](TopKOp op) {
      if (LightningIndexerOp indexer = chunkableIndexer(op))
        pairs.push_back({op, indexer});
    });
    IRRewriter rewriter(&getContext());
    for (auto [topK, indexer] : pairs) {
      rewriter.setInsertionPoint(topK);
      rewriter.replaceOp(topK, chunked(rewriter, topK, indexer, headRows));
      rewriter.eraseOp(indexer);
    }
  }
};

} // namespace

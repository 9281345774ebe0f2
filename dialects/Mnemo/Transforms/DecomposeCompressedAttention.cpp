//===- DecomposeCompressedAttention.cpp - V4 attention as attention -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites mnemo.compressed_attention as masked mnemo.attention ops
// (CompressedAttentionUnion.cpp): one over every raw key and entry, or,
// with query-chunk set, one per chunk of queries over the keys the chunk
// can see (CompressedAttentionChunks.cpp). The pass runs before the
// attention is tiled or given a kernel; the MnemoToLinalg conversion uses
// the same builder.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/CompressedAttention.h"
#include "dialects/Mnemo/Transforms/Passes.h"
#include "dialects/Mnemo/Transforms/Transforms.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "dialects/Mnemo/Utils/PagedCache.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_DECOMPOSECOMPRESSEDATTENTIONPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// Whether `v` is a mnemo.top_k's result (through casts): each row lists
/// an entry at most once.
bool fromTopK(Value v) {
  v = throughCasts(v);
  return v && v.getDefiningOp<TopKOp>();
}

struct DecomposeCompressedAttentionPass final
    : mnemo::impl::DecomposeCompressedAttentionPassBase<
          DecomposeCompressedAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<CompressedAttentionOp> ops;
    getOperation()->walk([&](CompressedAttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (CompressedAttentionOp op : ops) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, buildCompressedAttentionDecomposition(
                                 rewriter, op, queryChunk, selectedGroup));
    }
  }
};

} // namespace

Value mnemo::buildCompressedAttentionDecomposition(OpBuilder &b,
                                                   CompressedAttentionOp op,
                                                   int64_t queryChunk,
                                                   int64_t selectedGroup) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getResult().getType();
  UnionOperands u;
  u.query = op.getQuery();
  u.raw = op.getRaw();
  u.positions = op.getPositions();
  u.rawStart = op.getRawStart();
  u.indices = op.getIndices();
  u.sink = op.getSink();
  u.window = op.getWindow();
  u.rate = op.getRate();
  u.scale = op.getScaleAttr();
  u.distinctListings = fromTopK(u.indices);
  // One query row per sequence (a decode step) attends as a whole.
  int64_t rows = queryRows(u);
  bool gatherable = readsListedRows(u);
  int64_t group = cast<RankedTensorType>(u.query.getType()).getDimSize(1) /
                  cast<RankedTensorType>(u.raw.getType()).getDimSize(1);
  bool selected = selectedGroup > 0 && group >= selectedGroup &&
                  (!u.indices || gatherable || u.distinctListings);
  // The operands' type: the compute type, or for the selected form the
  // result's (mnemo.sparse_attention computes in f32 whatever it holds, and
  // a 16-bit one goes to the kernel as it is).
  Type ct = computeType(resultType.getElementType());
  if (selected)
    ct = resultType.getElementType();
  u.query = castElements(b, loc, u.query, ct);
  u.raw = castElements(b, loc, u.raw, ct);
  // Paged entries: a decode step with listed entries reads those rows
  // through the table (attendUnion), as the selected form reads every
  // entry it attends (attendSelected); otherwise the pages are gathered
  // whole first.
  Value table = op.getEntryTable();
  if (table && (gatherable || selected)) {
    u.entries = op.getEntries();
    u.entryTable = table;
  } else if (table) {
    u.entries = gatherPages(b, loc, op.getEntries(), Value(), table, ct);
  } else {
    u.entries = castElements(b, loc, op.getEntries(), ct);
  }
  Value out = selected ? attendSelected(b, loc, u)
              : queryChunk > 0 && rows != 1
                  ? attendUnionInChunks(b, loc, u, queryChunk)
                  : attendUnion(b, loc, u);
  return castToType(b, loc,
                    castElements(b, loc, out, resultType.getElementType()),
                    resultType);
}

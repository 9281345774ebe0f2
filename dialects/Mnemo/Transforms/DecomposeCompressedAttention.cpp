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
  while (auto c = v.getDefiningOp<tensor::CastOp>())
    v = c.getSource();
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
                                 rewriter, op, queryChunk));
    }
  }
};

} // namespace

Value mnemo::buildCompressedAttentionDecomposition(OpBuilder &b,
                                                   CompressedAttentionOp op,
                                                   int64_t queryChunk) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getResult().getType();
  FloatType ct = computeType(resultType.getElementType());
  UnionOperands u;
  u.query = castElements(b, loc, op.getQuery(), ct);
  u.raw = castElements(b, loc, op.getRaw(), ct);
  u.entries = castElements(b, loc, op.getEntries(), ct);
  u.positions = op.getPositions();
  u.rawStart = op.getRawStart();
  u.indices = op.getIndices();
  u.sink = op.getSink();
  u.window = op.getWindow();
  u.rate = op.getRate();
  u.scale = op.getScaleAttr();
  u.distinctListings = fromTopK(u.indices);
  // One query row per sequence (a decode step) attends as a whole.
  int64_t rows = cast<RankedTensorType>(u.query.getType()).getDimSize(2);
  Value out = queryChunk > 0 && rows != 1
                  ? attendUnionInChunks(b, loc, u, queryChunk)
                  : attendUnion(b, loc, u);
  return castToType(b, loc,
                    castElements(b, loc, out, resultType.getElementType()),
                    resultType);
}

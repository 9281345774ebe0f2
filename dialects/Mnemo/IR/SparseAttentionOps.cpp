//===- SparseAttentionOps.cpp - mnemo sparse attention ops ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/IR/ShapeChecks.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::shape_checks;

//===----------------------------------------------------------------------===//
// LightningIndexerOp
//===----------------------------------------------------------------------===//

double LightningIndexerOp::getEffectiveScale() {
  if (FloatAttr s = getScaleAttr())
    return s.getValueAsDouble();
  return 1.0 / std::sqrt(static_cast<double>(getQ().getType().getDimSize(3)));
}

LogicalResult LightningIndexerOp::verify() {
  Operation *op = getOperation();
  RankedTensorType q = getQ().getType(), k = getK().getType(),
                   w = getWeights().getType(), r = getResult().getType();
  Value table = getTable();
  if (failed(checkRank(op, q, 4, "q", "[B, S, Hi, Di]")) ||
      failed(table ? checkRank(op, k, 4, "k", "[Pages, 1, P, Di]")
                   : checkRank(op, k, 3, "k", "[B, T, Di]")) ||
      failed(checkRank(op, w, 3, "weights", "[B, S, Hi]")) ||
      failed(checkRank(op, r, 3, "result", "[B, S, T]")) ||
      failed(checkStatic(op, q, 2, "indexer head count")) ||
      failed(checkStatic(op, q, 3, "indexer head dim")))
    return failure();
  int64_t batch = q.getDimSize(0), seq = q.getDimSize(1);
  // The key count: the table's capacity in tokens, or k's length.
  int64_t keys = k.getDimSize(1);
  if (table) {
    auto tt = cast<RankedTensorType>(table.getType());
    if (failed(checkRank(op, tt, 2, "table", "[B, W]")) ||
        failed(checkDim(op, tt, 0, batch, "table batch", "q batch")) ||
        failed(checkDim(op, k, 1, 1, "k heads", "1")) ||
        failed(checkStatic(op, k, 2, "k page size")) ||
        failed(checkDim(op, k, 3, q.getDimSize(3), "k head dim", "q head dim")))
      return failure();
    keys = ShapedType::isDynamic(tt.getDimSize(1))
               ? ShapedType::kDynamic
               : tt.getDimSize(1) * k.getDimSize(2);
  } else if (failed(checkDim(op, k, 0, batch, "k batch", "q batch")) ||
             failed(checkDim(op, k, 2, q.getDimSize(3), "k head dim",
                             "q head dim"))) {
    return failure();
  }
  if (failed(checkDim(op, w, 0, batch, "weights batch", "q batch")) ||
      failed(checkDim(op, w, 1, seq, "weights length", "q length")) ||
      failed(checkDim(op, w, 2, q.getDimSize(2), "weights heads", "q heads")) ||
      failed(checkDim(op, r, 0, batch, "result batch", "q batch")) ||
      failed(checkDim(op, r, 1, seq, "result length", "q length")) ||
      failed(checkDim(op, r, 2, keys, "result keys",
                      table ? "table capacity" : "k length")))
    return failure();
  if (Value p = getPositions()) {
    auto pt = cast<RankedTensorType>(p.getType());
    if (failed(checkRank(op, pt, 2, "positions", "[B, S]")) ||
        failed(checkDim(op, pt, 0, batch, "positions batch", "q batch")) ||
        failed(checkDim(op, pt, 1, seq, "positions length", "q length")))
      return failure();
  }
  if (Value l = getLengths()) {
    auto lt = cast<RankedTensorType>(l.getType());
    if (failed(checkRank(op, lt, 1, "lengths", "[B]")) ||
        failed(checkDim(op, lt, 0, batch, "lengths batch", "q batch")))
      return failure();
  }
  return checkScale(op, getScaleAttr());
}

//===----------------------------------------------------------------------===//
// TopKOp
//===----------------------------------------------------------------------===//

LogicalResult TopKOp::verify() {
  Operation *op = getOperation();
  RankedTensorType s = getScores().getType(), r = getResult().getType();
  if (failed(checkRank(op, s, 3, "scores", "[B, S, T]")) ||
      failed(checkRank(op, r, 3, "result", "[B, S, k]")))
    return failure();
  int64_t k = getK();
  if (k <= 0)
    return emitOpError() << "k must be positive, got " << k;
  if (failed(checkDim(op, r, 0, s.getDimSize(0), "result batch",
                      "scores batch")) ||
      failed(checkDim(op, r, 1, s.getDimSize(1), "result length",
                      "scores length")) ||
      failed(checkStatic(op, r, 2, "result k")))
    return failure();
  if (r.getDimSize(2) != k)
    return emitOpError() << "result k (" << r.getDimSize(2)
                         << ") must equal k (" << k << ")";
  if (Value l = getLengths()) {
    auto lt = cast<RankedTensorType>(l.getType());
    if (failed(checkRank(op, lt, 1, "lengths", "[B]")) ||
        failed(checkDim(op, lt, 0, s.getDimSize(0), "lengths batch",
                        "scores batch")))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SparseAttentionOp
//===----------------------------------------------------------------------===//

double SparseAttentionOp::getEffectiveScale() {
  if (FloatAttr s = getScaleAttr())
    return s.getValueAsDouble();
  return 1.0 /
         std::sqrt(static_cast<double>(getQuery().getType().getDimSize(3)));
}

LogicalResult SparseAttentionOp::verify() {
  Operation *op = getOperation();
  RankedTensorType q = getQuery().getType(), k = getKey().getType(),
                   v = getValue().getType(), idx = getIndices().getType(),
                   r = getResult().getType();
  if (failed(checkRank(op, q, 4, "query", "[B, Hq, Sq, D]")) ||
      failed(checkRank(op, k, 4, "key", "[B, Hkv, Skv, D]")) ||
      failed(checkRank(op, v, 4, "value", "[B, Hkv, Skv, Dv]")) ||
      failed(checkRank(op, idx, 3, "indices", "[B, Sq, K]")) ||
      failed(checkRank(op, r, 4, "result", "[B, Hq, Sq, Dv]")))
    return failure();
  if (failed(checkStatic(op, q, 1, "query heads")) ||
      failed(checkStatic(op, k, 1, "key heads")) ||
      failed(checkStatic(op, q, 3, "head dim")) ||
      failed(checkStatic(op, v, 3, "value head dim")))
    return failure();
  int64_t batch = q.getDimSize(0), hq = q.getDimSize(1), sq = q.getDimSize(2),
          hkv = k.getDimSize(1);
  if (hkv <= 0 || hq % hkv != 0)
    return emitOpError() << "query heads (" << hq
                         << ") must be a multiple of key heads (" << hkv
                         << ")";
  if (failed(checkDim(op, k, 0, batch, "key batch", "query batch")) ||
      failed(checkDim(op, k, 3, q.getDimSize(3), "key head dim",
                      "query head dim")) ||
      failed(checkDim(op, v, 0, batch, "value batch", "query batch")) ||
      failed(checkDim(op, v, 1, hkv, "value heads", "key heads")) ||
      failed(checkDim(op, v, 2, k.getDimSize(2), "value length",
                      "key length")) ||
      failed(checkDim(op, idx, 0, batch, "indices batch", "query batch")) ||
      failed(checkDim(op, idx, 1, sq, "indices length", "query length")) ||
      failed(checkDim(op, r, 0, batch, "result batch", "query batch")) ||
      failed(checkDim(op, r, 1, hq, "result heads", "query heads")) ||
      failed(checkDim(op, r, 2, sq, "result length", "query length")) ||
      failed(checkDim(op, r, 3, v.getDimSize(3), "result head dim",
                      "value head dim")))
    return failure();
  if (r.getElementType() != q.getElementType())
    return emitOpError() << "result element type " << r.getElementType()
                         << " must match the query's " << q.getElementType();
  return checkAttentionOptions(op, getScaleAttr(), FloatAttr(), IntegerAttr(),
                               getSink(), hq);
}

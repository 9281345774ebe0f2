//===- CompressedMemoryOps.cpp - DeepSeek-V4 memory ops ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/IR/ShapeChecks.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::shape_checks;

//===----------------------------------------------------------------------===//
// CompressedAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult CompressedAttentionOp::verify() {
  Operation *op = getOperation();
  RankedTensorType q = getQuery().getType(), raw = getRaw().getType(),
                   e = getEntries().getType(), pos = getPositions().getType(),
                   r = getResult().getType();
  if (failed(checkRank(op, q, 4, "query", "[B, Hq, S, D]")) ||
      failed(checkRank(op, raw, 4, "raw", "[B, Hkv, R, D]")) ||
      failed(checkRank(op, e, 4, "entries",
                       getEntryTable() ? "[Pages, Hkv, P, D]"
                                       : "[B, Hkv, T, D]")) ||
      failed(checkRank(op, pos, 2, "positions", "[B, S]")) ||
      failed(checkRank(op, r, 4, "result", "[B, Hq, S, D]")) ||
      failed(checkStatic(op, q, 1, "query heads")) ||
      failed(checkStatic(op, raw, 1, "key heads")) ||
      failed(checkStatic(op, q, 3, "head dim")))
    return failure();
  int64_t batch = q.getDimSize(0), hq = q.getDimSize(1), seq = q.getDimSize(2),
          hkv = raw.getDimSize(1), d = q.getDimSize(3);
  if (hkv <= 0 || hq % hkv != 0)
    return emitOpError() << "query heads (" << hq
                         << ") must be a multiple of key heads (" << hkv
                         << ")";
  if (failed(checkDim(op, raw, 0, batch, "raw batch", "query batch")) ||
      failed(checkDim(op, raw, 3, d, "raw head dim", "query head dim")) ||
      failed(checkDim(op, e, 1, hkv, "entries heads", "raw heads")) ||
      failed(checkDim(op, e, 3, d, "entries head dim", "query head dim")) ||
      failed(checkDim(op, pos, 0, batch, "positions batch", "query batch")) ||
      failed(checkDim(op, pos, 1, seq, "positions length", "query length")) ||
      failed(checkDim(op, r, 0, batch, "result batch", "query batch")) ||
      failed(checkDim(op, r, 1, hq, "result heads", "query heads")) ||
      failed(checkDim(op, r, 2, seq, "result length", "query length")) ||
      failed(checkDim(op, r, 3, d, "result head dim", "query head dim")))
    return failure();
  if (Value table = getEntryTable()) {
    auto tt = cast<RankedTensorType>(table.getType());
    if (failed(checkRank(op, tt, 2, "entry_table", "[B, W]")) ||
        failed(
            checkDim(op, tt, 0, batch, "entry_table batch", "query batch")) ||
        failed(checkStatic(op, e, 2, "entries page size")))
      return failure();
  } else if (failed(
                 checkDim(op, e, 0, batch, "entries batch", "query batch"))) {
    return failure();
  }
  if (Value start = getRawStart()) {
    auto st = cast<RankedTensorType>(start.getType());
    if (failed(checkRank(op, st, 1, "raw_start", "[B]")) ||
        failed(checkDim(op, st, 0, batch, "raw_start batch", "query batch")))
      return failure();
  }
  if (Value idx = getIndices()) {
    auto it = cast<RankedTensorType>(idx.getType());
    if (failed(checkRank(op, it, 3, "indices", "[B, S, K]")) ||
        failed(checkDim(op, it, 0, batch, "indices batch", "query batch")) ||
        failed(checkDim(op, it, 1, seq, "indices length", "query length")))
      return failure();
  }
  if (r.getElementType() != q.getElementType())
    return emitOpError() << "result element type " << r.getElementType()
                         << " must match the query's " << q.getElementType();
  if (getRate() <= 0)
    return emitOpError() << "rate must be positive, got " << getRate();
  return checkAttentionOptions(op, getScaleAttr(), FloatAttr(),
                               getWindowAttr(), getSink(), hq);
}

//===----------------------------------------------------------------------===//
// GatedPoolOp
//===----------------------------------------------------------------------===//

LogicalResult GatedPoolOp::verify() {
  Operation *op = getOperation();
  RankedTensorType kv = getKv().getType(), g = getGate().getType(),
                   bias = getBias().getType(), e = getEntries().getType(),
                   r = getResult().getType();
  if (failed(checkRank(op, kv, 3, "kv", "[B, L, C]")) ||
      failed(checkRank(op, g, 3, "gate", "[B, L, C]")) ||
      failed(checkRank(op, bias, 2, "bias", "[slots, D]")) ||
      failed(checkRank(op, e, 2, "entries", "[B, N]")) ||
      failed(checkRank(op, r, 3, "result", "[B, N, D]")) ||
      failed(checkStatic(op, kv, 2, "kv channels")) ||
      failed(checkStatic(op, bias, 0, "bias slots")) ||
      failed(checkStatic(op, bias, 1, "bias channels")))
    return failure();
  if (getRate() <= 0)
    return emitOpError() << "rate must be positive, got " << getRate();
  int64_t d = bias.getDimSize(1), factor = getOverlapping() ? 2 : 1;
  int64_t batch = kv.getDimSize(0);
  if (failed(checkDim(op, kv, 2, factor * d, "kv channels",
                      getOverlapping() ? "2 * bias channels"
                                       : "bias channels")) ||
      failed(checkDim(op, bias, 0, factor * getRate(), "bias slots",
                      getOverlapping() ? "2 * rate" : "rate")) ||
      failed(checkDim(op, g, 0, batch, "gate batch", "kv batch")) ||
      failed(checkDim(op, g, 1, kv.getDimSize(1), "gate length",
                      "kv length")) ||
      failed(checkDim(op, g, 2, kv.getDimSize(2), "gate channels",
                      "kv channels")) ||
      failed(checkDim(op, e, 0, batch, "entries batch", "kv batch")) ||
      failed(checkDim(op, r, 0, batch, "result batch", "kv batch")) ||
      failed(checkDim(op, r, 1, e.getDimSize(1), "result entries",
                      "entries length")) ||
      failed(checkDim(op, r, 2, d, "result channels", "bias channels")))
    return failure();
  return success();
}

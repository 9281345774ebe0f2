//===- KVCacheOps.cpp - mnemo paged KV cache ops ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/IR/ShapeChecks.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::shape_checks;

namespace {

/// A pool [Pages, Hkv, P, d] of a storage type the cache supports, with
/// static heads, page size and head dim.
LogicalResult checkPool(Operation *op, RankedTensorType pool, StringRef name,
                        StringRef layout) {
  if (failed(checkRank(op, pool, 4, name, layout)))
    return failure();
  Type e = pool.getElementType();
  if (!e.isF32() && !e.isBF16() && !e.isF16() && !isa<Float8E4M3FNType>(e))
    return op->emitOpError() << name
                             << " must hold f32, bf16, f16 or f8E4M3FN, not "
                             << e;
  for (auto [dim, what] : {std::pair<unsigned, StringRef>{1, "head count"},
                           {2, "page size"},
                           {3, "head dim"}})
    if (failed(checkStatic(op, pool, dim, (name + " " + what).str())))
      return failure();
  if (pool.getDimSize(2) <= 0)
    return op->emitOpError() << name << " page size must be positive";
  return success();
}

/// A block table [B, MaxPages] whose batch is `batch`.
LogicalResult checkTable(Operation *op, RankedTensorType table, int64_t batch,
                         StringRef against) {
  if (failed(checkRank(op, table, 2, "block table", "[B, MaxPages]")))
    return failure();
  return checkDim(op, table, 0, batch, "block table batch", against);
}

/// An FP8 pool comes with its scales [Pages, Hkv, P] (f32), any other pool
/// without.
LogicalResult checkScales(Operation *op, RankedTensorType pool, Value scales,
                          StringRef name) {
  bool fp8 = isa<Float8E4M3FNType>(pool.getElementType());
  if (fp8 != static_cast<bool>(scales))
    return op->emitOpError()
           << name << (fp8 ? " holds f8E4M3FN and needs its scales"
                           : " is not FP8 and takes no scales");
  if (!scales)
    return success();
  auto type = cast<RankedTensorType>(scales.getType());
  std::string what = (name + " scales").str();
  if (failed(checkRank(op, type, 3, what, "[Pages, Hkv, P]")))
    return failure();
  for (unsigned d = 0; d < 3; ++d)
    if (failed(checkDim(op, type, d, pool.getDimSize(d), what,
                        name.str() + " [Pages, Hkv, P]")))
      return failure();
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// KVCacheWriteOp
//===----------------------------------------------------------------------===//

LogicalResult KVCacheWriteOp::verify() {
  Operation *op = getOperation();
  RankedTensorType x = getNewValues().getType(), pool = getPool().getType(),
                   pos = getPositions().getType(),
                   table = getBlockTable().getType();
  if (failed(checkRank(op, x, 4, "new values", "[B, Hkv, S, D]")) ||
      failed(checkPool(op, pool, "pool", "[Pages, Hkv, P, D]")) ||
      failed(checkRank(op, pos, 2, "positions", "[B, S]")) ||
      failed(checkTable(op, table, x.getDimSize(0), "new values batch")))
    return failure();
  if (failed(checkDim(op, x, 1, pool.getDimSize(1), "new values heads",
                      "pool heads")) ||
      failed(checkDim(op, x, 3, pool.getDimSize(3), "new values head dim",
                      "pool head dim")) ||
      failed(checkDim(op, pos, 0, x.getDimSize(0), "positions batch",
                      "new values batch")) ||
      failed(checkDim(op, pos, 1, x.getDimSize(2), "positions length",
                      "new values length")))
    return failure();
  if (getResult().getType() != pool)
    return emitOpError() << "result type " << getResult().getType()
                         << " must be the pool's, " << pool;
  if (failed(checkScales(op, pool, getScales(), "pool")))
    return failure();
  if (static_cast<bool>(getResultScales()) != static_cast<bool>(getScales()) ||
      (getScales() && getResultScales().getType() != getScales().getType()))
    return emitOpError() << "returns updated scales exactly when it takes "
                            "them, of their type";
  return success();
}

//===----------------------------------------------------------------------===//
// KVCacheGatherOp
//===----------------------------------------------------------------------===//

LogicalResult KVCacheGatherOp::verify() {
  Operation *op = getOperation();
  RankedTensorType pool = getPool().getType(), r = getResult().getType(),
                   table = getBlockTable().getType(),
                   lens = getLengths().getType();
  if (failed(checkPool(op, pool, "pool", "[Pages, Hkv, P, D]")) ||
      failed(checkRank(op, r, 4, "result", "[B, Hkv, T, D]")) ||
      failed(checkTable(op, table, r.getDimSize(0), "result batch")) ||
      failed(checkRank(op, lens, 1, "lengths", "[B]")))
    return failure();
  if (failed(checkDim(op, lens, 0, r.getDimSize(0), "lengths batch",
                      "result batch")) ||
      failed(checkDim(op, r, 1, pool.getDimSize(1), "result heads",
                      "pool heads")) ||
      failed(checkDim(op, r, 3, pool.getDimSize(3), "result head dim",
                      "pool head dim")))
    return failure();
  if (isa<Float8E4M3FNType>(r.getElementType()))
    return emitOpError() << "result must be f32, bf16 or f16, not "
                         << r.getElementType();
  return checkScales(op, pool, getScales(), "pool");
}

//===----------------------------------------------------------------------===//
// PagedAttentionOp
//===----------------------------------------------------------------------===//

int64_t PagedAttentionOp::getGroupSize() {
  return getQuery().getType().getDimSize(1) /
         getKeyPool().getType().getDimSize(1);
}

LogicalResult PagedAttentionOp::verify() {
  Operation *op = getOperation();
  RankedTensorType q = getQuery().getType(), k = getKeyPool().getType(),
                   v = getValuePool().getType(), r = getResult().getType(),
                   table = getBlockTable().getType(),
                   lens = getContextLens().getType(),
                   pos = getQPositions().getType();
  if (failed(checkRank(op, q, 4, "query", "[B, Hq, Sq, D]")) ||
      failed(checkPool(op, k, "key pool", "[Pages, Hkv, P, D]")) ||
      failed(checkPool(op, v, "value pool", "[Pages, Hkv, P, Dv]")) ||
      failed(checkRank(op, r, 4, "result", "[B, Hq, Sq, Dv]")) ||
      failed(checkTable(op, table, q.getDimSize(0), "query batch")) ||
      failed(checkRank(op, lens, 1, "context lengths", "[B]")) ||
      failed(checkRank(op, pos, 2, "query positions", "[B, Sq]")))
    return failure();
  if (failed(checkStatic(op, q, 1, "query head count")) ||
      failed(checkStatic(op, q, 3, "query head dim")))
    return failure();
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (hkv == 0 || hq % hkv != 0)
    return emitOpError() << "query heads (" << hq
                         << ") must be a multiple of key/value heads (" << hkv
                         << ")";
  if (failed(checkDim(op, k, 3, q.getDimSize(3), "key pool head dim",
                      "query head dim")) ||
      failed(checkDim(op, v, 0, k.getDimSize(0), "value pool pages",
                      "key pool pages")) ||
      failed(checkDim(op, v, 1, hkv, "value pool heads", "key pool heads")) ||
      failed(checkDim(op, v, 2, k.getDimSize(2), "value pool page size",
                      "key pool page size")) ||
      failed(checkDim(op, lens, 0, q.getDimSize(0), "context lengths batch",
                      "query batch")) ||
      failed(checkDim(op, pos, 0, q.getDimSize(0), "query positions batch",
                      "query batch")) ||
      failed(checkDim(op, pos, 1, q.getDimSize(2), "query positions length",
                      "query length")))
    return failure();
  if (failed(checkScales(op, k, getKeyScales(), "key pool")) ||
      failed(checkScales(op, v, getValueScales(), "value pool")))
    return failure();
  if (r.getElementType() != q.getElementType())
    return emitOpError() << "result element type " << r.getElementType()
                         << " must match the query's " << q.getElementType();
  if (Value indices = getIndices()) {
    auto t = cast<RankedTensorType>(indices.getType());
    if (failed(checkRank(op, t, 3, "indices", "[B, Sq, K]")) ||
        failed(checkDim(op, t, 0, q.getDimSize(0), "indices batch",
                        "query batch")) ||
        failed(checkDim(op, t, 1, q.getDimSize(2), "indices length",
                        "query length")))
      return failure();
    if (getCausal() || getWindowAttr() || getSoftcapAttr() || getSink() ||
        getMask())
      return emitOpError() << "takes no causal, window, softcap, sink or mask "
                              "with indices: the selection is the only mask";
  }
  if (Value mask = getMask()) {
    int64_t capacity = table.isDynamicDim(1)
                           ? ShapedType::kDynamic
                           : table.getDimSize(1) * k.getDimSize(2);
    int64_t full[4] = {q.getDimSize(0), hq, q.getDimSize(2), capacity};
    if (failed(checkMask(op, mask, full, "MaxPages * P")))
      return failure();
  }
  if (failed(checkDim(op, r, 0, q.getDimSize(0), "result batch",
                      "query batch")) ||
      failed(checkDim(op, r, 1, hq, "result heads", "query heads")) ||
      failed(checkDim(op, r, 2, q.getDimSize(2), "result length",
                      "query length")) ||
      failed(checkDim(op, r, 3, v.getDimSize(3), "result head dim",
                      "value pool head dim")))
    return failure();
  return checkAttentionOptions(op, getScaleAttr(), getSoftcapAttr(),
                               getWindowAttr(), getSink(), hq);
}

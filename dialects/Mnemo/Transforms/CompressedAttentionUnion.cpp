//===- CompressedAttentionUnion.cpp - V4 attention as attention -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.compressed_attention's reference form: the raw keys and the
// entries concatenated on the key axis (with one query row per sequence, a
// decode step, and listed entries: the K listed rows gathered instead of
// all T), one additive mask [B, 1, S, R + T] saying what each query sees
// (the window's causality on raw keys, at their positions from raw_start;
// closed entries, and for CSA only the listed ones), and one
// mnemo.attention with the sink, the keys as values. The mask is computed
// from indices alone, so the attention's tiling computes it tile by tile.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/CompressedAttention.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include <limits>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// [B, S, T] f32: 1 where entry t is listed in indices[b, s, :].
Value listedEntries(OpBuilder &b, Location loc, Value indices,
                    OpFoldResult batch, OpFoldResult seq, OpFoldResult count) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  Value init = filledTensor(b, loc, {batch, seq, count}, f32, 0.0);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{indices}, ValueRange{init},
             ArrayRef<AffineMap>{projection(ctx, 4, {0, 1, 3}),
                                 projection(ctx, 4, {0, 1, 2})},
             iterators(4, {3}),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Type it = a[0].getType();
               Value t = arith::IndexCastOp::create(
                   nb, nl, it, linalg::IndexOp::create(nb, nl, 2));
               Value hit = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::eq, a[0], t);
               linalg::YieldOp::create(
                   nb, nl,
                   arith::SelectOp::create(nb, nl, hit,
                                           floatConst(nb, nl, f32, 1.0), a[1])
                       .getResult());
             })
      .getResult(0);
}

} // namespace

Value mnemo::firstListings(OpBuilder &b, Location loc, Value indices,
                           OpFoldResult batch, OpFoldResult count) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  Value init = emptyTensor(b, loc, {batch, count}, i64);
  init = linalg::FillOp::create(
             b, loc,
             ValueRange{arith::ConstantIntOp::create(
                 b, loc, std::numeric_limits<int64_t>::max(), 64)},
             ValueRange{init})
             .getResult(0);
  // Loops (b, k, e): min over e of e where listing e names listing k's
  // entry; a min is a commutative fold, which the GPU shares among a
  // warp's lanes (an `e < k` test folded into a select was a loop of K
  // steps a thread: 32 us for K = 512 on an H100).
  AffineExpr d0 = getAffineDimExpr(0, ctx),
             zero = getAffineConstantExpr(0, ctx);
  AffineMap listingE =
      AffineMap::get(3, 0, {d0, zero, getAffineDimExpr(2, ctx)}, ctx);
  AffineMap listingK =
      AffineMap::get(3, 0, {d0, zero, getAffineDimExpr(1, ctx)}, ctx);
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{indices, indices},
             ValueRange{init},
             ArrayRef<AffineMap>{listingE, listingK,
                                 projection(ctx, 3, {0, 1})},
             iterators(3, {2}),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value e = arith::IndexCastOp::create(
                   nb, nl, i64, linalg::IndexOp::create(nb, nl, 2));
               Value same = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::eq, a[0], a[1]);
               Value none = arith::ConstantIntOp::create(
                   nb, nl, std::numeric_limits<int64_t>::max(), 64);
               linalg::YieldOp::create(
                   nb, nl,
                   arith::MinSIOp::create(
                       nb, nl, a[2],
                       arith::SelectOp::create(nb, nl, same, e, none))
                       .getResult());
             })
      .getResult(0);
}

Value mnemo::readEntry(OpBuilder &b, Location loc, Value entries, Value indices,
                       Value entryCount, Value entryBatch, Value table,
                       Value bi, Value h, Value k, Value d) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value w = k;
  if (indices)
    w = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        tensor::ExtractOp::create(b, loc, indices, ValueRange{bi, zero, k}));
  // Unsigned: a negative index is out of range too (the caller masks it;
  // any row will do).
  Value inside =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, w, entryCount);
  w = arith::SelectOp::create(b, loc, inside, w, zero);
  Value row = entryBatch ? entryBatch : bi;
  if (table) {
    auto type = cast<RankedTensorType>(entries.getType());
    Value page = arith::ConstantIndexOp::create(b, loc, type.getDimSize(2));
    row = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        tensor::ExtractOp::create(
            b, loc, table,
            ValueRange{bi, arith::DivUIOp::create(b, loc, w, page)}));
    w = arith::RemUIOp::create(b, loc, w, page);
  }
  return tensor::ExtractOp::create(b, loc, entries, ValueRange{row, h, w, d});
}

Value mnemo::listedRows(OpBuilder &b, Location loc, Value entries,
                        Value indices, ArrayRef<OpFoldResult> sizes,
                        Value entryCount, Value entryBatch, Value table) {
  auto type = cast<RankedTensorType>(entries.getType());
  Value init = emptyTensor(b, loc, sizes, type.getElementType());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{b.getMultiDimIdentityMap(4)}, iterators(4),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               auto index = [&](unsigned i) {
                 return linalg::IndexOp::create(nb, nl, i);
               };
               linalg::YieldOp::create(
                   nb, nl,
                   readEntry(nb, nl, entries, indices, entryCount, entryBatch,
                             table, index(0), index(1), index(2), index(3)));
             })
      .getResult(0);
}

int64_t mnemo::queryRows(const UnionOperands &u) {
  int64_t rows = cast<RankedTensorType>(u.query.getType()).getDimSize(2);
  if (ShapedType::isDynamic(rows))
    rows = cast<RankedTensorType>(u.positions.getType()).getDimSize(1);
  return rows;
}

bool mnemo::readsListedRows(const UnionOperands &u) {
  return u.indices && queryRows(u) == 1 &&
         cast<RankedTensorType>(u.indices.getType()).getDimSize(2) > 0;
}

Value mnemo::entryCapacity(OpBuilder &b, Location loc, const UnionOperands &u) {
  Value length = tensor::DimOp::create(b, loc, u.entries, 2);
  if (!u.entryTable)
    return length;
  return arith::MulIOp::create(
      b, loc, tensor::DimOp::create(b, loc, u.entryTable, 1), length);
}

Value mnemo::attendUnion(OpBuilder &b, Location loc, const UnionOperands &u) {
  Value q = u.query, raw = u.raw, entries = u.entries;
  Type ct = cast<RankedTensorType>(q.getType()).getElementType();
  Type f32 = b.getF32Type();
  SmallVector<OpFoldResult> rs = tensorSizes(b, loc, raw),
                            es = tensorSizes(b, loc, entries),
                            qs = tensorSizes(b, loc, q);
  Value rawCount = getValueOrCreateConstantIndexOp(b, loc, rs[2]);
  Value entryCount = entryCapacity(b, loc, u);
  // One query row per sequence (a decode step) with listed entries: the
  // listed rows are gathered and attended, not every entry under a mask.
  Value idx = u.indices;
  bool gather = readsListedRows(u);
  assert((gather || !u.entryTable) &&
         "paged entries are read in place by a decode step's gather only");
  Value listedCount = entryCount;
  Value firsts;
  if (gather) {
    OpFoldResult k = tensor::getMixedSize(b, loc, idx, 2);
    SmallVector<OpFoldResult> sizes = {qs[0], es[1], k, es[3]};
    entries = listedRows(b, loc, entries, idx, sizes, entryCount, u.entryBatch,
                         u.entryTable);
    entries = castElements(b, loc, entries, ct);
    if (!u.distinctListings)
      firsts = firstListings(b, loc, idx, qs[0], k);
    es = tensorSizes(b, loc, entries);
    listedCount = getValueOrCreateConstantIndexOp(b, loc, k);
  }
  Value total = arith::AddIOp::create(b, loc, rawCount, listedCount);

  // The keys (also the values): [raw, entries] on the key axis.
  Value keys = emptyTensor(b, loc, {rs[0], rs[1], total, rs[3]}, ct);
  SmallVector<OpFoldResult> zero(4, b.getIndexAttr(0)),
      strides(4, b.getIndexAttr(1));
  keys = tensor::InsertSliceOp::create(b, loc, raw, keys, zero, rs, strides);
  SmallVector<OpFoldResult> at = zero;
  at[2] = rawCount;
  keys = tensor::InsertSliceOp::create(b, loc, entries, keys, at, es, strides);

  Value listed;
  if (idx && !gather)
    listed = listedEntries(b, loc, idx, qs[0], qs[2], es[2]);
  Value positions = u.positions;
  Value rawStart = u.rawStart;
  int64_t window = u.window, rate = u.rate;
  Value mask = emptyTensor(b, loc, {qs[0], b.getIndexAttr(1), qs[2], total},
                           f32);
  mask =
      linalg::GenericOp::create(
          b, loc, mask.getType(), ValueRange{}, ValueRange{mask},
          ArrayRef<AffineMap>{b.getMultiDimIdentityMap(4)}, iterators(4),
          [&](OpBuilder &nb, Location l, ValueRange) {
            auto cst = [&](int64_t v) {
              return arith::ConstantIndexOp::create(nb, l, v);
            };
            using P = arith::CmpIPredicate;
            Value bi = linalg::IndexOp::create(nb, l, 0);
            Value i = linalg::IndexOp::create(nb, l, 2);
            Value j = linalg::IndexOp::create(nb, l, 3);
            // The query's position t (-1: padding, sees nothing).
            Value t64 =
                tensor::ExtractOp::create(nb, l, positions, ValueRange{bi, i});
            Value real = arith::CmpIOp::create(
                nb, l, P::sge, t64, arith::ConstantIntOp::create(nb, l, 0, 64));
            Value t = arith::IndexCastOp::create(nb, l, nb.getIndexType(), t64);
            // Raw key j at position p = j (+ raw_start[b]): causal, within
            // the window (t - p < window).
            Value isRaw = arith::CmpIOp::create(nb, l, P::ult, j, rawCount);
            Value p = j;
            if (rawStart)
              p = arith::AddIOp::create(
                  nb, l, j,
                  arith::IndexCastOp::create(
                      nb, l, nb.getIndexType(),
                      tensor::ExtractOp::create(nb, l, rawStart,
                                                ValueRange{bi})));
            Value rawSeen = arith::AndIOp::create(
                nb, l, arith::CmpIOp::create(nb, l, P::sle, p, t),
                arith::CmpIOp::create(nb, l, P::slt,
                                      arith::SubIOp::create(nb, l, t, p),
                                      cst(window)));
            // Entry w = j - R (gathered: listing k = j - R, of entry w =
            // indices[b, 0, k], seen in range and at its first listing):
            // closed before the query, w < (t + 1) / rate.
            Value w = arith::SelectOp::create(
                nb, l, isRaw, cst(0), arith::SubIOp::create(nb, l, j, rawCount));
            Value entrySeen;
            if (gather) {
              Value k = w;
              w = arith::IndexCastOp::create(
                  nb, l, nb.getIndexType(),
                  tensor::ExtractOp::create(nb, l, idx,
                                            ValueRange{bi, cst(0), k}));
              entrySeen = arith::CmpIOp::create(nb, l, P::ult, w, entryCount);
              if (firsts)
                entrySeen = arith::AndIOp::create(
                    nb, l, entrySeen,
                    arith::CmpIOp::create(
                        nb, l, P::eq,
                        tensor::ExtractOp::create(nb, l, firsts,
                                                  ValueRange{bi, k}),
                        arith::IndexCastOp::create(nb, l, nb.getI64Type(), k)));
            }
            Value closed = arith::DivSIOp::create(
                nb, l, arith::AddIOp::create(nb, l, t, cst(1)), cst(rate));
            Value isClosed = arith::CmpIOp::create(nb, l, P::slt, w, closed);
            entrySeen = entrySeen
                            ? arith::AndIOp::create(nb, l, entrySeen, isClosed)
                            : isClosed;
            if (listed) {
              Value l1 =
                  tensor::ExtractOp::create(nb, l, listed, ValueRange{bi, i, w});
              entrySeen = arith::AndIOp::create(
                  nb, l, entrySeen,
                  arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, l1,
                                        floatConst(nb, l, f32, 0.0)));
            }
            Value seen = arith::AndIOp::create(
                nb, l, real,
                arith::SelectOp::create(nb, l, isRaw, rawSeen, entrySeen));
            Value v = arith::SelectOp::create(
                nb, l, seen, floatConst(nb, l, f32, 0.0),
                floatConst(nb, l, f32,
                           -std::numeric_limits<double>::infinity()));
            linalg::YieldOp::create(nb, l, v);
          })
          .getResult(0);
  return AttentionOp::create(b, loc, q.getType(), q, keys, keys, mask, u.sink,
                             /*q_offset=*/Value(), /*causal=*/false,
                             IntegerAttr(), u.scale, FloatAttr());
}

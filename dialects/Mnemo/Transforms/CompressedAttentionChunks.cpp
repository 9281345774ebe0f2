//===- CompressedAttentionChunks.cpp - V4 attention by query chunks -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.compressed_attention over many queries (a prefill, an appended
// chunk) as a loop over chunks of each sequence's queries. A query at
// position t sees the raw keys of its window [t - W + 1, t] only, yet the
// one-attention form scores it against all R raw keys and T entries: a
// prompt of S tokens costs S (S + T) scores where S (W + T) or, with an
// indexer's K listings, S (W + K) are needed. Here each chunk attends to:
//
// - without indices: the raw keys from the first position its first query's
//   window reaches to its last query, and every entry (closed ones seen);
// - with indices: one row per query, holding that query's own window of
//   raw keys and its K listed entries, gathered (a decode step per query).
//
// Both are attendUnion over those operands, so the mask rules are the
// one-attention form's; only keys no query of the chunk sees are left out.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/CompressedAttention.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

Value i64Const(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 64);
}

Value toIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

Value toI64(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
}

/// min(max(v, lo), hi) on signed integers of one type.
Value clamp(OpBuilder &b, Location loc, Value v, Value lo, Value hi) {
  return arith::MinSIOp::create(b, loc,
                                arith::MaxSIOp::create(b, loc, v, lo), hi);
}

/// max(v - (w - 1), 0) for i64 v and a window w >= 1, without overflow for
/// any w: where the window of a query at v starts, as an offset from 0.
Value windowStart(OpBuilder &b, Location loc, Value v, int64_t window) {
  Value back = i64Const(b, loc, window - 1);
  Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, v,
                                     back);
  return arith::SelectOp::create(b, loc, past,
                                 arith::SubIOp::create(b, loc, v, back),
                                 i64Const(b, loc, 0));
}

/// The smallest and the largest of the positions [1, n] that are not
/// padding (>= 0), as i64 scalars: (2^62, -1) when all are padding.
std::pair<Value, Value> positionRange(OpBuilder &b, Location loc,
                                      Value positions) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto filled = [&](int64_t v) {
    Value empty = emptyTensor(b, loc, {b.getIndexAttr(1)}, i64);
    return linalg::FillOp::create(b, loc, i64Const(b, loc, v), empty)
        .getResult(0);
  };
  Value lowest = filled(int64_t(1) << 62), highest = filled(-1);
  auto range = linalg::GenericOp::create(
      b, loc, TypeRange{lowest.getType(), highest.getType()},
      ValueRange{positions}, ValueRange{lowest, highest},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(2),
                          projection(ctx, 2, {0}), projection(ctx, 2, {0})},
      iterators(2, {1}), [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value real = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge,
                                           a[0], i64Const(nb, nl, 0));
        Value lo = arith::SelectOp::create(
            nb, nl, real, arith::MinSIOp::create(nb, nl, a[0], a[1]), a[1]);
        Value hi = arith::MaxSIOp::create(nb, nl, a[0], a[2]);
        linalg::YieldOp::create(nb, nl, ValueRange{lo, hi});
      });
  Value zero = indexConst(b, loc, 0);
  return {tensor::ExtractOp::create(b, loc, range.getResult(0), zero),
          tensor::ExtractOp::create(b, loc, range.getResult(1), zero)};
}

/// `v` with its dims permuted: result dim i is `v`'s dim perm[i].
Value permuted(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  SmallVector<OpFoldResult> sizes = tensorSizes(b, loc, v), out;
  for (int64_t p : perm)
    out.push_back(sizes[p]);
  Value init = emptyTensor(
      b, loc, out, cast<RankedTensorType>(v.getType()).getElementType());
  return linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
}

/// The slice of `v` at `offsets` with `sizes` (unit strides).
Value slice(OpBuilder &b, Location loc, Value v,
            ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

/// The chunk's queries of sequence `bi` over the raw keys [lo, hi) their
/// windows reach and every entry: attendUnion on batch-1 slices.
Value attendChunk(OpBuilder &b, Location loc, const UnionOperands &u,
                  Value bi, Value rawStart, Value q, Value positions,
                  Value indices) {
  SmallVector<OpFoldResult> rs = tensorSizes(b, loc, u.raw),
                            es = tensorSizes(b, loc, u.entries);
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  Value rawCount =
      toI64(b, loc, getValueOrCreateConstantIndexOp(b, loc, rs[2]));
  auto [first, last] = positionRange(b, loc, positions);
  // Raw row r is at position rawStart + r. The first row any window
  // reaches, and one past the last query (at least one row).
  Value lo = clamp(b, loc,
                   windowStart(b, loc,
                               arith::SubIOp::create(b, loc, first, rawStart),
                               u.window),
                   i64Const(b, loc, 0),
                   arith::SubIOp::create(b, loc, rawCount,
                                         i64Const(b, loc, 1)));
  Value hi = clamp(b, loc,
                   arith::AddIOp::create(
                       b, loc, arith::SubIOp::create(b, loc, last, rawStart),
                       i64Const(b, loc, 1)),
                   arith::AddIOp::create(b, loc, lo, i64Const(b, loc, 1)),
                   rawCount);
  UnionOperands c = u;
  c.query = q;
  c.positions = positions;
  c.indices = indices;
  c.raw = slice(b, loc, u.raw, {bi, zero, toIndex(b, loc, lo), zero},
                {one, rs[1], toIndex(b, loc, arith::SubIOp::create(b, loc, hi,
                                                                   lo)),
                 rs[3]});
  c.rawStart = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({1}, b.getI64Type()),
      ValueRange{arith::AddIOp::create(b, loc, rawStart, lo)});
  c.entries = slice(b, loc, u.entries, {bi, zero, zero, zero},
                    {one, es[1], es[2], es[3]});
  return attendUnion(b, loc, c);
}

/// The chunk's queries of sequence `bi`, each as a row of its own over its
/// window's raw keys and its listed entries (gathered from `bi`'s).
Value attendEachQuery(OpBuilder &b, Location loc, const UnionOperands &u,
                      Value bi, Value rawStart, Value q, Value positions,
                      Value indices) {
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> rs = tensorSizes(b, loc, u.raw),
                            qs = tensorSizes(b, loc, q);
  OpFoldResult n = qs[2];
  Value rawCount = getValueOrCreateConstantIndexOp(b, loc, rs[2]);
  // Each query's rows: min(W, R) from where its window starts, moved back
  // so that they stay inside the raw keys (the mask drops what it must).
  Value rows = arith::MinSIOp::create(b, loc, indexConst(b, loc, u.window),
                                      rawCount);
  Value lastStart =
      toI64(b, loc, arith::SubIOp::create(b, loc, rawCount, rows));
  Type i64 = b.getI64Type();
  Value starts = emptyTensor(b, loc, {n}, i64);
  starts =
      linalg::GenericOp::create(
          b, loc, starts.getType(), ValueRange{positions}, ValueRange{starts},
          ArrayRef<AffineMap>{AffineMap::get(1, 0,
                                             {getAffineConstantExpr(0, ctx),
                                              getAffineDimExpr(0, ctx)},
                                             ctx),
                              b.getMultiDimIdentityMap(1)},
          iterators(1), [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value offset = windowStart(
                nb, nl, arith::SubIOp::create(nb, nl, a[0], rawStart),
                u.window);
            offset = arith::MinSIOp::create(nb, nl, offset, lastStart);
            linalg::YieldOp::create(
                nb, nl,
                arith::AddIOp::create(nb, nl, rawStart, offset).getResult());
          })
          .getResult(0);
  SmallVector<OpFoldResult> windowSizes = {n, rs[1], rows, rs[3]};
  Value window = emptyTensor(
      b, loc, windowSizes,
      cast<RankedTensorType>(u.raw.getType()).getElementType());
  window =
      linalg::GenericOp::create(
          b, loc, window.getType(), ValueRange{starts}, ValueRange{window},
          ArrayRef<AffineMap>{projection(ctx, 4, {0}),
                              b.getMultiDimIdentityMap(4)},
          iterators(4), [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value row = arith::AddIOp::create(
                nb, nl,
                toIndex(nb, nl, arith::SubIOp::create(nb, nl, a[0], rawStart)),
                linalg::IndexOp::create(nb, nl, 2));
            linalg::YieldOp::create(
                nb, nl,
                tensor::ExtractOp::create(
                    nb, nl, u.raw,
                    ValueRange{bi, linalg::IndexOp::create(nb, nl, 1), row,
                               linalg::IndexOp::create(nb, nl, 3)})
                    .getResult());
          })
          .getResult(0);
  UnionOperands c = u;
  c.query = permuted(b, loc, q, {2, 1, 0, 3});
  c.positions = permuted(b, loc, positions, {1, 0});
  c.indices = permuted(b, loc, indices, {1, 0, 2});
  c.raw = window;
  c.rawStart = starts;
  c.entryBatch = bi;
  return permuted(b, loc, attendUnion(b, loc, c), {2, 1, 0, 3});
}

} // namespace

Value mnemo::attendUnionInChunks(OpBuilder &b, Location loc,
                                 const UnionOperands &u, int64_t chunk) {
  auto qType = cast<RankedTensorType>(u.query.getType());
  SmallVector<OpFoldResult> qs = tensorSizes(b, loc, u.query);
  Value batch = getValueOrCreateConstantIndexOp(b, loc, qs[0]);
  Value seq = getValueOrCreateConstantIndexOp(b, loc, qs[2]);
  // One row per query needs the listings' count known to gather them.
  bool eachQuery = false;
  if (u.indices)
    eachQuery = cast<RankedTensorType>(u.indices.getType()).getDimSize(2) > 0;
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value init = emptyTensor(b, loc, qs, qType.getElementType());
  auto batches = scf::ForOp::create(
      b, loc, zero, batch, one, ValueRange{init},
      [&](OpBuilder &bb, Location bl, Value bi, ValueRange bArgs) {
        Value rawStart =
            u.rawStart ? tensor::ExtractOp::create(bb, bl, u.rawStart, bi)
                             .getResult()
                       : i64Const(bb, bl, 0);
        auto chunks = scf::ForOp::create(
            bb, bl, zero, seq, indexConst(bb, bl, chunk), bArgs,
            [&](OpBuilder &cb, Location cl, Value c0, ValueRange cArgs) {
              OpFoldResult z = cb.getIndexAttr(0), o = cb.getIndexAttr(1);
              OpFoldResult n = arith::MinSIOp::create(
                                   cb, cl, indexConst(cb, cl, chunk),
                                   arith::SubIOp::create(cb, cl, seq, c0))
                                   .getResult();
              SmallVector<OpFoldResult> at = {bi, z, c0, z},
                                        sizes = {o, qs[1], n, qs[3]};
              Value q = slice(cb, cl, u.query, at, sizes);
              Value positions = slice(cb, cl, u.positions, {bi, c0}, {o, n});
              Value indices;
              if (u.indices)
                indices = slice(cb, cl, u.indices, {bi, c0, z},
                                {o, n, tensor::getMixedSize(cb, cl, u.indices,
                                                            2)});
              Value out = eachQuery
                              ? attendEachQuery(cb, cl, u, bi, rawStart, q,
                                                positions, indices)
                              : attendChunk(cb, cl, u, bi, rawStart, q,
                                            positions, indices);
              SmallVector<OpFoldResult> strides(4, o);
              Value acc = tensor::InsertSliceOp::create(cb, cl, out, cArgs[0],
                                                        at, sizes, strides);
              scf::YieldOp::create(cb, cl, acc);
            });
        scf::YieldOp::create(bb, bl, chunks.getResult(0));
      });
  return batches.getResult(0);
}

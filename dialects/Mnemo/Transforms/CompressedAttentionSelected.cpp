//===- CompressedAttentionSelected.cpp - V4 attention as listed keys -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.compressed_attention as one mnemo.sparse_attention with the sink:
// the keys are [raw, entries] on the key axis (a decode step's listed
// entries only; paged entries read through their table in the one pass
// that writes the keys), and each query lists the
// keys it sees instead of masking all of them: the `window` raw keys that
// end at its position, then its entries (CSA: the K it lists; HCA: every
// entry, closed or not), -1 for a key it does not see. The softmax over a
// query's list is the union form's over its visible keys, so both agree;
// what differs is the work: W + K (or W + T) keys a query, not R + T, and
// on the GPU the attention kernel of selected keys computes it.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/CompressedAttention.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cassert>
#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

Value mnemo::attendSelected(OpBuilder &b, Location loc,
                            const UnionOperands &u) {
  Value q = u.query, raw = u.raw, entries = u.entries, idx = u.indices;
  Type ct = cast<RankedTensorType>(q.getType()).getElementType();
  SmallVector<OpFoldResult> rs = tensorSizes(b, loc, raw),
                            es = tensorSizes(b, loc, entries),
                            qs = tensorSizes(b, loc, q);
  Value rawCount = getValueOrCreateConstantIndexOp(b, loc, rs[2]);
  Value entryCount = entryCapacity(b, loc, u);
  // A decode step's listed entries are gathered (K rows a sequence), the
  // repeats of a list that may hold them found once.
  bool gather = readsListedRows(u);
  assert((gather || !idx || u.distinctListings) &&
         "listings of a prompt must be distinct");
  Value firsts;
  // The entry columns of each list: the listings, or every entry.
  OpFoldResult listed = u.entryTable ? getAsOpFoldResult(entryCount) : es[2];
  if (idx)
    listed = tensor::getMixedSize(b, loc, idx, 2);
  if (gather && !u.distinctListings)
    firsts = firstListings(b, loc, idx, qs[0], listed);

  // The keys (also the values): [raw, entries] on the key axis, the
  // entries a decode step lists, or all of them.
  Value keyEntries =
      gather ? getValueOrCreateConstantIndexOp(b, loc, listed) : entryCount;
  Value keyCount = arith::AddIOp::create(b, loc, rawCount, keyEntries);
  Value keys = emptyTensor(b, loc, {rs[0], rs[1], keyCount, rs[3]}, ct);
  if (u.entryTable) {
    // Paged entries: one pass writes the keys, row j < R the raw key j,
    // row R + e the entry listing e names (or entry e), read through the
    // table where it lies. (The raw keys are at least the query's own.)
    keys = linalg::GenericOp::create(
               b, loc, keys.getType(), ValueRange{}, ValueRange{keys},
               ArrayRef<AffineMap>{b.getMultiDimIdentityMap(4)}, iterators(4),
               [&](OpBuilder &nb, Location l, ValueRange) {
                 Value bi = linalg::IndexOp::create(nb, l, 0);
                 Value h = linalg::IndexOp::create(nb, l, 1);
                 Value j = linalg::IndexOp::create(nb, l, 2);
                 Value d = linalg::IndexOp::create(nb, l, 3);
                 Value zero = arith::ConstantIndexOp::create(nb, l, 0);
                 Value one = arith::ConstantIndexOp::create(nb, l, 1);
                 Value isRaw = arith::CmpIOp::create(
                     nb, l, arith::CmpIPredicate::ult, j, rawCount);
                 Value rawRow = arith::MinUIOp::create(
                     nb, l, j, arith::SubIOp::create(nb, l, rawCount, one));
                 Value rawValue = tensor::ExtractOp::create(
                     nb, l, raw, ValueRange{bi, h, rawRow, d});
                 Value e = arith::SelectOp::create(
                     nb, l, isRaw, zero,
                     arith::SubIOp::create(nb, l, j, rawCount));
                 Value entryValue = castFloat(
                     nb, l,
                     readEntry(nb, l, entries, gather ? idx : Value(),
                               entryCount, Value(), u.entryTable, bi, h, e, d),
                     ct);
                 linalg::YieldOp::create(
                     nb, l,
                     arith::SelectOp::create(nb, l, isRaw, rawValue, entryValue)
                         .getResult());
               })
               .getResult(0);
  } else {
    if (gather) {
      entries = listedRows(b, loc, entries, idx, {qs[0], es[1], listed, es[3]},
                           entryCount, u.entryBatch, Value());
      es = tensorSizes(b, loc, entries);
    }
    SmallVector<OpFoldResult> zero(4, b.getIndexAttr(0)),
        strides(4, b.getIndexAttr(1));
    keys = tensor::InsertSliceOp::create(b, loc, raw, keys, zero, rs, strides);
    SmallVector<OpFoldResult> at = zero;
    at[2] = rawCount;
    keys =
        tensor::InsertSliceOp::create(b, loc, entries, keys, at, es, strides);
  }

  // Each query's list [B, S, W + E]: column c < W is the raw key at
  // position t - W + 1 + c, column W + e the entry listing e (or entry e
  // without indices); the key's row in `keys`, or -1.
  int64_t window = u.window, rate = u.rate;
  Type i64 = b.getI64Type();
  OpFoldResult width =
      getAsOpFoldResult(arith::AddIOp::create(
          b, loc, arith::ConstantIndexOp::create(b, loc, window),
          getValueOrCreateConstantIndexOp(b, loc, listed)));
  if (std::optional<int64_t> n = getConstantIntValue(listed))
    width = b.getIndexAttr(window + *n);
  // The rows: static in the positions where the query leaves them open (a
  // decode step's [B, 1]).
  OpFoldResult rows = tensor::getMixedSize(b, loc, u.positions, 1);
  Value lists = emptyTensor(b, loc, {qs[0], rows, width}, i64);
  Value positions = u.positions, rawStart = u.rawStart;
  lists =
      linalg::GenericOp::create(
          b, loc, lists.getType(), ValueRange{}, ValueRange{lists},
          ArrayRef<AffineMap>{b.getMultiDimIdentityMap(3)}, iterators(3),
          [&](OpBuilder &nb, Location l, ValueRange) {
            using P = arith::CmpIPredicate;
            auto c64 = [&](int64_t v) {
              return arith::ConstantIntOp::create(nb, l, v, 64);
            };
            auto toI64 = [&](Value v) {
              return arith::IndexCastOp::create(nb, l, i64, v);
            };
            Value bi = linalg::IndexOp::create(nb, l, 0);
            Value i = linalg::IndexOp::create(nb, l, 1);
            Value c = toI64(linalg::IndexOp::create(nb, l, 2));
            Value t =
                tensor::ExtractOp::create(nb, l, positions, ValueRange{bi, i});
            Value real = arith::CmpIOp::create(nb, l, P::sge, t, c64(0));
            // A raw key: position p, row p - raw_start[b] of raw.
            Value p = arith::AddIOp::create(
                nb, l, arith::SubIOp::create(nb, l, t, c64(window - 1)), c);
            Value j = p;
            if (rawStart)
              j = arith::SubIOp::create(
                  nb, l, p,
                  tensor::ExtractOp::create(nb, l, rawStart, ValueRange{bi}));
            Value rawSeen = arith::AndIOp::create(
                nb, l,
                arith::AndIOp::create(
                    nb, l, arith::CmpIOp::create(nb, l, P::sge, p, c64(0)),
                    arith::CmpIOp::create(nb, l, P::sge, j, c64(0))),
                arith::CmpIOp::create(nb, l, P::slt, j, toI64(rawCount)));
            // An entry: listing e = c - W, of entry w.
            Value e = arith::SubIOp::create(nb, l, c, c64(window));
            Value w = e;
            if (idx) {
              Value k = arith::IndexCastOp::create(
                  nb, l, nb.getIndexType(),
                  arith::MaxSIOp::create(nb, l, e, c64(0)));
              // A decode step's list is its sequence's row 0.
              Value listRow =
                  gather ? Value(arith::ConstantIndexOp::create(nb, l, 0)) : i;
              Value listing = tensor::ExtractOp::create(
                  nb, l, idx, ValueRange{bi, listRow, k});
              w = listing.getType() == i64
                      ? listing
                      : Value(arith::ExtSIOp::create(nb, l, i64, listing));
            }
            Value closed = arith::DivSIOp::create(
                nb, l, arith::AddIOp::create(nb, l, t, c64(1)), c64(rate));
            Value entrySeen = arith::AndIOp::create(
                nb, l,
                arith::AndIOp::create(
                    nb, l, arith::CmpIOp::create(nb, l, P::sge, w, c64(0)),
                    arith::CmpIOp::create(nb, l, P::slt, w,
                                          toI64(entryCount))),
                arith::CmpIOp::create(nb, l, P::slt, w, closed));
            if (firsts) {
              Value k = arith::IndexCastOp::create(
                  nb, l, nb.getIndexType(),
                  arith::MaxSIOp::create(nb, l, e, c64(0)));
              entrySeen = arith::AndIOp::create(
                  nb, l, entrySeen,
                  arith::CmpIOp::create(nb, l, P::eq,
                                        tensor::ExtractOp::create(
                                            nb, l, firsts, ValueRange{bi, k}),
                                        e));
            }
            // Gathered, listing e is row R + e of the keys; else entry w
            // is row R + w.
            Value entryRow =
                arith::AddIOp::create(nb, l, toI64(rawCount), gather ? e : w);
            Value isRaw = arith::CmpIOp::create(nb, l, P::slt, c, c64(window));
            Value seen = arith::AndIOp::create(
                nb, l, real,
                arith::SelectOp::create(nb, l, isRaw, rawSeen, entrySeen));
            Value row = arith::SelectOp::create(nb, l, isRaw, j, entryRow);
            linalg::YieldOp::create(
                nb, l,
                arith::SelectOp::create(nb, l, seen, row, c64(-1))
                    .getResult());
          })
          .getResult(0);
  FloatAttr scale = u.scale;
  if (!scale)
    scale = b.getF64FloatAttr(
        1.0 / std::sqrt(static_cast<double>(
                  cast<RankedTensorType>(q.getType()).getDimSize(3))));
  return SparseAttentionOp::create(b, loc, q.getType(), q, keys, keys, lists,
                                   u.sink, scale);
}

//===- CompressedAttention.h - V4 attention builders ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pieces mnemo.compressed_attention's decomposition is built from: one
// masked mnemo.attention over a set of raw keys and entries (attendUnion),
// and the query-chunked form that gives each chunk of queries only the raw
// keys its window can see (attendUnionInChunks).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_TRANSFORMS_COMPRESSEDATTENTION_H
#define MNEMO_DIALECT_TRANSFORMS_COMPRESSEDATTENTION_H

#include "mlir/IR/Builders.h"

namespace mlir::mnemo {

/// The operands of one union attention, in the compute type: the query
/// [B, Hq, S, D], raw keys [B, Hkv, R, D] (row j at position
/// raw_start[b] + j, or j), entries [Be, Hkv, T, D], positions [B, S],
/// raw_start [B] or null, indices [B, S, K] or null, sink [Hq] or null.
struct UnionOperands {
  Value query, raw, entries, positions, rawStart, indices, sink;
  int64_t window = 0, rate = 1;
  FloatAttr scale;
  /// When set (an index), every row reads the entries of this batch of
  /// `entries`; otherwise row b reads batch b.
  Value entryBatch;
  /// When set (a block table [B, W]), `entries` is a paged pool [Pages,
  /// Hkv, P, D] of any float type and entry w of row b is its row w % P of
  /// page table[b, w / P]: attendSelected reads its entries there, and
  /// attendUnion a decode step's listed rows (one query row per sequence,
  /// with indices).
  Value entryTable;
  /// The indices never list an entry twice in a row (a mnemo.top_k's), so
  /// a gather needs no test for repeats.
  bool distinctListings = false;
};

/// [B, K] i64: the first listing k' of indices[b, 0, :] that names what
/// listing k names; k is a set's first listing of its entry iff it holds k
/// (a set lists each entry once).
Value firstListings(OpBuilder &b, Location loc, Value indices,
                    OpFoldResult batch, OpFoldResult count);

/// Inside a generic: element (h, d) of the entry that listing k of
/// sequence bi names (indices[bi, 0, k]; without indices, entry k), read
/// from batch `entryBatch` of `entries` when it is set, or with a block
/// table from row w % P of page table[bi, w / P] of the pool `entries`. An
/// entry not below `entryCount` reads entry 0 (the caller masks it).
Value readEntry(OpBuilder &b, Location loc, Value entries, Value indices,
                Value entryCount, Value entryBatch, Value table, Value bi,
                Value h, Value k, Value d);

/// [B, Hkv, K, D] of `entries`' element type: the entries indices[b, 0, :]
/// lists (entry 0 where an index is not below `entryCount`; the caller
/// masks those), read from batch `entryBatch` of `entries` when it is set,
/// or with a block table from row w % P of page table[b, w / P] of the
/// pool `entries`. `sizes` are the result's.
Value listedRows(OpBuilder &b, Location loc, Value entries, Value indices,
                 ArrayRef<OpFoldResult> sizes, Value entryCount,
                 Value entryBatch, Value table);

/// Whether the op reads only its listed entries: one query row per
/// sequence (a decode step) and a non-empty list of indices.
bool readsListedRows(const UnionOperands &u);

/// The entries' count T: their length, or with paged entries the table's
/// capacity (its width times the page size).
Value entryCapacity(OpBuilder &b, Location loc, const UnionOperands &u);

/// The query rows per sequence, S: static in the query or in the
/// positions (a decode step's [B, 1] positions beside a query whose length
/// shape inference left open), else dynamic.
int64_t queryRows(const UnionOperands &u);

/// One mnemo.attention over [raw, entries] with the additive mask of what
/// each query sees (with one query row per sequence and indices: the K
/// listed entries gathered instead of all T). Result [B, Hq, S, D] in the
/// query's element type.
Value attendUnion(OpBuilder &b, Location loc, const UnionOperands &u);

/// The same attention as one mnemo.sparse_attention with the sink: each
/// query lists the raw keys of its window (`window` columns, by position)
/// and its entries (the K it lists, gathered for a decode step, or every
/// entry without indices), -1 where it sees none, over the keys [raw,
/// entries]. A query's list grows with W + K (CSA) or W + T (HCA), not
/// with R + T, and a kernel that gathers listed rows computes it.
/// Requires listings that are distinct or gathered (a decode step's, whose
/// repeats are dropped).
Value attendSelected(OpBuilder &b, Location loc, const UnionOperands &u);

/// The same attention, computed `chunk` queries at a time: a chunk of a
/// sequence attends to the raw keys its positions' windows reach, and,
/// with indices, each of its queries to its own window and listed entries
/// only; a prefill's cost grows with S (W + K) instead of S (S + T).
Value attendUnionInChunks(OpBuilder &b, Location loc, const UnionOperands &u,
                          int64_t chunk);

} // namespace mlir::mnemo

#endif // MNEMO_DIALECT_TRANSFORMS_COMPRESSEDATTENTION_H

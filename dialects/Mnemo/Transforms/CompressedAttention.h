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
  /// The indices never list an entry twice in a row (a mnemo.top_k's), so
  /// a gather needs no test for repeats.
  bool distinctListings = false;
};

/// One mnemo.attention over [raw, entries] with the additive mask of what
/// each query sees (with one query row per sequence and indices: the K
/// listed entries gathered instead of all T). Result [B, Hq, S, D] in the
/// query's element type.
Value attendUnion(OpBuilder &b, Location loc, const UnionOperands &u);

/// The same attention, computed `chunk` queries at a time: a chunk of a
/// sequence attends to the raw keys its positions' windows reach, and,
/// with indices, each of its queries to its own window and listed entries
/// only; a prefill's cost grows with S (W + K) instead of S (S + T).
Value attendUnionInChunks(OpBuilder &b, Location loc, const UnionOperands &u,
                          int64_t chunk);

} // namespace mlir::mnemo

#endif // MNEMO_DIALECT_TRANSFORMS_COMPRESSEDATTENTION_H

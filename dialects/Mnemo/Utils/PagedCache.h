//===- PagedCache.h - reading a paged KV cache as a tensor ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The gather every reader of a paged KV cache needs: each sequence's cached
// tokens, found through its block table, as one contiguous tensor. It is a
// linalg.generic without inputs (each element computed from its indices),
// so the attention tiling computes its tiles where its key loop loads them
// instead of materialising the copy.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_UTILS_PAGEDCACHE_H
#define MNEMO_DIALECT_UTILS_PAGEDCACHE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::mnemo {

/// Where the gathered sequences start in the result's token dim.
struct PageGatherAlignment {
  /// Right-aligned (null: token t of sequence b is at t, and `tokens` is
  /// MaxPages * P): sequence b's `lengths[b]` (an i64 tensor [B]) cached
  /// tokens end at the result's last token, so token j of it is at
  /// `tokens - lengths[b] + j`, and every position before holds zero
  /// (the left padding of a contiguous cache).
  Value lengths;
  /// The result's token count when right-aligned (an index).
  Value tokens;
};

/// pool [Pages, Hkv, P, d] -> [B, Hkv, T, d] of `elementType`: token j of
/// sequence b is pool[table[b, j / P], h, j % P] (FP8, when `scales`
/// [Pages, Hkv, P] is given: the E4M3 value times its token's scale).
Value gatherPages(OpBuilder &b, Location loc, Value pool, Value scales,
                  Value blockTable, Type elementType,
                  const PageGatherAlignment &alignment = {});

/// `pages` pages of `blockTable` [B, W] from page `firstPages[b]` (an i64
/// tensor [B], each in [0, W]) on: [B, min(pages, W)] of the table's
/// type, column j holding blockTable[b, firstPages[b] + j], and page 0
/// past W (rows a reader masks). Gathering it reads a sequence's tokens
/// from firstPages[b] * P on, token t at t - firstPages[b] * P. `pages`
/// (an index) depends on shapes alone, so that a GPU launch plan can size
/// what reads it.
Value pagesFrom(OpBuilder &b, Location loc, Value blockTable,
                Value firstPages, Value pages);

} // namespace mlir::mnemo

#endif // MNEMO_DIALECT_UTILS_PAGEDCACHE_H

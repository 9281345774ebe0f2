//===- Transforms.h - reusable mnemo rewrites -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites shared by the dialect passes and the reference lowering.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_TRANSFORMS_TRANSFORMS_H
#define MNEMO_DIALECT_TRANSFORMS_TRANSFORMS_H

#include "dialects/Mnemo/IR/MnemoOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::mnemo {

/// Builds `op` (before it) as one mnemo.attention plus linalg projections,
/// in the given form, and returns the value replacing its result:
///
/// * expanded: k_nope = c_kv W_UK[h]^T and v = c_kv W_UV[h]^T per head,
///   attention over q = [q_nope, q_pe], k = [k_nope, k_pe] (k_pe broadcast
///   to every head), D = dn + dr, Dv = dv;
/// * absorbed: q_lat = q_nope W_UK[h] per head, one multi-query attention
///   (one key/value head) over k = [c_kv, k_pe], v = c_kv (D = r + dr,
///   Dv = r), then out = o_lat W_UV[h]^T per head.
///
/// Intermediates are in the compute type (f32, or f64 for f64 operands).
Value buildMLADecomposition(OpBuilder &b, MLAAttentionOp op, MLAForm form);

/// mnemo.compressed_attention as one mnemo.attention over the raw keys and
/// entries concatenated, with an additive mask [B, 1, S, R + T] that says
/// what each query sees, its sink, and the keys as values.
/// `queryChunk` > 0: the attention of more than one query row per
/// sequence is computed that many queries at a time, each chunk over the
/// keys it can see (CompressedAttention.h).
/// `selectedGroup` > 0: from that many query heads a key head, one
/// mnemo.sparse_attention over each query's listed keys instead
/// (attendSelected).
Value buildCompressedAttentionDecomposition(OpBuilder &b,
                                            CompressedAttentionOp op,
                                            int64_t queryChunk = 0,
                                            int64_t selectedGroup = 0);

} // namespace mlir::mnemo

#endif // MNEMO_DIALECT_TRANSFORMS_TRANSFORMS_H

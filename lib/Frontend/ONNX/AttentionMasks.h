//===- AttentionMasks.h - ONNX Attention masks and scores -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The parts of ONNX Attention that mnemo.attention's attributes do not
// carry, built from linalg: one additive mask for everything that hides
// keys, and the optional qk_matmul_output.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_ONNX_ATTENTIONMASKS_H
#define MNEMO_LIB_FRONTEND_ONNX_ATTENTIONMASKS_H

#include "mlir/IR/Builders.h"

namespace mlir::mnemo::onnx_import {

/// [B, S, H*D] -> [B, H, S, D].
Value splitHeads(OpBuilder &b, Location loc, Value x, int64_t heads);
/// [B, H, S, D] -> [B, S, H*D].
Value mergeHeads(OpBuilder &b, Location loc, Value x);

/// What hides keys from query i (at position p = i + offset[b]):
/// * `mask`: float (added) or boolean (false hides), rank 1 to 4, aligned
///   on the right to [B, H, Sq, Skv]; keys past its last dim are hidden;
/// * `causal`: j > p is hidden;
/// * `left` / `right` (-1: unbounded): j < p - left or j > p + right hidden;
/// * `nonpad` [B]: j >= nonpad[b] is hidden.
/// offset[b] is `pastLength` with a past, nonpad[b] - Sq with only nonpad,
/// else 0.
struct MaskSpec {
  Value mask, nonpad, pastLength;
  bool causal = false;
  int64_t left = -1, right = -1;
};

/// The additive f32 mask [B, Hm, Sq, Skv] (Hm: the mask's head extent or
/// 1), 0 where visible, the mask's value where given, -inf where hidden.
Value combinedMask(OpBuilder &b, Location loc, const MaskSpec &spec, Value q,
                   Value k);

/// ONNX Attention's qk_matmul_output for `mode`: 0 the scaled Q·Kᵀ, 1 after
/// softcap, 2 after adding `bias` (may be null), 3 after the softmax (a row
/// with every key hidden gives zeros). q [B, Hq, Sq, D], k [B, Hkv, Skv, D];
/// the result [B, Hq, Sq, Skv] has `element` type.
Value attentionScores(OpBuilder &b, Location loc, Value q, Value k,
                      double scale, double softcap, Value bias, int64_t mode,
                      Type element);

} // namespace mlir::mnemo::onnx_import

#endif // MNEMO_LIB_FRONTEND_ONNX_ATTENTIONMASKS_H

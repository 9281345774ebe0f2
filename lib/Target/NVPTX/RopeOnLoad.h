//===- RopeOnLoad.h - RoPE applied to attention tiles -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A mnemo.rope or mnemo.rope_tables whose only user is a tensor-core
// attention kernel's Q or K operand is applied by that kernel to the tile
// once it is in shared memory, instead of by a kernel of its own that
// writes the rotated tensor for attention to read back. This file matches
// such producers, makes the buffers the kernel reads (positions and the
// inverse frequencies, or the cos/sin tables), and computes one rotated
// pair; the kernel walks its tiles.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_TARGET_NVPTX_ROPEONLOAD_H
#define MNEMO_LIB_TARGET_NVPTX_ROPEONLOAD_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <string>

namespace mlir::mnemo::nvptx {

/// A rotary embedding the attention kernel applies to one operand's tiles.
struct RopeOnLoad {
  Operation *op = nullptr; // the mnemo.rope or mnemo.rope_tables
  Value input;             // the unrotated tensor the kernel loads instead
  int64_t rotaryDim = 0;   // rotated features (pairs: rotaryDim / 2)
  bool interleaved = false;
  bool tables = false;     // mnemo.rope_tables (else positions x inv_freq)
  /// mnemo.rope: positions [B, S], [1, S] or [S]; inv_freq[k] (f32, as the
  /// reference lowering rounds it); cos and sin scaled by `factor`.
  Value positions;
  SmallVector<float> invFreq;
  double factor = 1.0;
  /// mnemo.rope_tables: cos and sin [B, S, r], [1, S, r] or [S, r].
  Value cos, sin;

  /// The buffers the kernel reads, made by `createBuffers` before the
  /// launch: positions and inv_freq, or cos and sin.
  Value buffers[2];

  explicit operator bool() const { return op != nullptr; }
};

/// The rotary embedding producing `operand` ([B, H, S, D] of `elem`) when
/// the kernel can apply it on its tiles: its only user is the attention
/// op, shapes are static, and its frequencies do not depend on the input
/// (not dynamic NTK). Otherwise an empty RopeOnLoad, with `why` set when a
/// rope is there but stays a kernel of its own.
RopeOnLoad matchRopeOnLoad(Value operand, Type elem, std::string &why);

/// Makes `rope.buffers` (read-only buffers of the positions or tables, and
/// inv_freq as a constant) at the builder's point, before the launch.
void createRopeBuffers(ImplicitLocOpBuilder &b, RopeOnLoad &rope);

/// The columns of pair `k` (an index below rotaryDim / 2): (k, k + r/2),
/// or (2k, 2k + 1) interleaved.
std::pair<Value, Value> ropePairColumns(ImplicitLocOpBuilder &b,
                                        const RopeOnLoad &rope, Value k);

/// Pair `k` of the row at sequence index `s` (batch `batch`; both index
/// values valid for the tables or positions) rotated: (x, y) in f32 become
/// (x cos_a - y sin_a, y cos_b + x sin_b), with the same arithmetic as the
/// reference lowering of the op.
std::pair<Value, Value> rotatePair(ImplicitLocOpBuilder &b,
                                   const RopeOnLoad &rope, Value batch,
                                   Value s, Value k, Value x, Value y);

} // namespace mlir::mnemo::nvptx

#endif // MNEMO_LIB_TARGET_NVPTX_ROPEONLOAD_H

//===- ShapeChecks.h - shape checks shared by the verifiers -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rank, extent and staticness checks that report one diagnostic naming the
// operand (and what it is compared against), used by the op verifiers.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_MNEMO_IR_SHAPECHECKS_H
#define MNEMO_DIALECT_MNEMO_IR_SHAPECHECKS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include <cmath>
#include <string>

namespace mlir::mnemo::shape_checks {

/// Two extents are compatible when either is dynamic or they are equal.
inline bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Prints a dimension, `?` when dynamic.
inline std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

/// Checks that `dim` of `type` equals `expected`, naming both in the error.
inline LogicalResult checkDim(Operation *op, RankedTensorType type,
                              unsigned dim, int64_t expected, StringRef what,
                              StringRef against) {
  int64_t actual = type.getDimSize(dim);
  if (compatible(actual, expected))
    return success();
  return op->emitOpError() << what << " (" << dimStr(actual)
                           << ") must match " << against << " ("
                           << dimStr(expected) << ")";
}

inline LogicalResult checkRank(Operation *op, RankedTensorType type,
                               int64_t rank, StringRef name,
                               StringRef layout) {
  if (type.getRank() == rank)
    return success();
  return op->emitOpError() << "expects " << name << " of rank " << rank << " "
                           << layout << ", got rank " << type.getRank();
}

inline LogicalResult checkStatic(Operation *op, RankedTensorType type,
                                 unsigned dim, StringRef what) {
  if (!type.isDynamicDim(dim))
    return success();
  return op->emitOpError() << what << " must be static";
}

/// An optional softmax scale must be finite and non-zero.
inline LogicalResult checkScale(Operation *op, FloatAttr scale) {
  if (scale && (!std::isfinite(scale.getValueAsDouble()) ||
                scale.getValueAsDouble() == 0))
    return op->emitOpError() << "scale must be finite and non-zero, got "
                             << scale.getValueAsDouble();
  return success();
}

/// A clamped SwiGLU's optional limit must be finite and positive.
inline LogicalResult checkSwiGluLimit(Operation *op, FloatAttr limit) {
  if (limit && !(limit.getValueAsDouble() > 0.0 &&
                 std::isfinite(limit.getValueAsDouble())))
    return op->emitOpError() << "limit must be finite and positive, got "
                             << limit.getValueAsDouble();
  return success();
}

/// The options both attention ops take: a finite non-zero scale, a positive
/// softcap and window, and sink logits of shape [hq].
inline LogicalResult checkAttentionOptions(Operation *op, FloatAttr scale,
                                           FloatAttr softcap,
                                           IntegerAttr window, Value sink,
                                           int64_t hq) {
  if (failed(checkScale(op, scale)))
    return failure();
  if (softcap && !(softcap.getValueAsDouble() > 0.0))
    return op->emitOpError() << "softcap must be positive, got "
                             << softcap.getValueAsDouble();
  if (window && window.getInt() <= 0)
    return op->emitOpError() << "window must be positive, got "
                             << window.getInt();
  if (sink) {
    auto s = cast<RankedTensorType>(sink.getType());
    if (s.getRank() != 1 || !compatible(s.getDimSize(0), hq))
      return op->emitOpError() << "expects sink logits of shape [" << hq
                               << "] (one per query head), got " << s;
  }
  return success();
}

/// An additive mask of rank 2 to 4 broadcastable (NumPy-style, each dim 1
/// or the full extent) to `full`, [B, Hq, Sq, keys]; `keys` names the last.
inline LogicalResult checkMask(Operation *op, Value mask,
                               const int64_t (&full)[4], StringRef keys) {
  auto m = cast<RankedTensorType>(mask.getType());
  if (m.getRank() < 2 || m.getRank() > 4)
    return op->emitOpError()
           << "expects a mask of rank 2 to 4 broadcastable to "
              "[B, Hq, Sq, "
           << keys << "], got rank " << m.getRank();
  int64_t lead = 4 - m.getRank();
  for (int64_t i = 0; i < m.getRank(); ++i) {
    int64_t d = m.getDimSize(i);
    if (d != 1 && !compatible(d, full[lead + i]))
      return op->emitOpError()
             << "mask dimension " << i << " (" << dimStr(d)
             << ") must be 1 or match " << dimStr(full[lead + i])
             << " of [B, Hq, Sq, " << keys << "]";
  }
  return success();
}

} // namespace mlir::mnemo::shape_checks

#endif // MNEMO_DIALECT_MNEMO_IR_SHAPECHECKS_H

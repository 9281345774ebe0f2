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

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
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

} // namespace mlir::mnemo::shape_checks

#endif // MNEMO_DIALECT_MNEMO_IR_SHAPECHECKS_H

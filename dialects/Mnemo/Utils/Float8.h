//===- Float8.h - FP8 E4M3 conversions as integer ops -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Conversions between f32 and FP8 E4M3 (OCP "FN": bias 7, no infinities,
// largest 448) written with arith integer and bit-cast ops, so that every
// target compiles them (the CPU targets' LLVM has no 8-bit float type):
// encodeE4M3 rounds to nearest even, keeps subnormals and saturates at
// +-448; decodeE4M3 is exact.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_UTILS_FLOAT8_H
#define MNEMO_DIALECT_UTILS_FLOAT8_H

#include "mlir/IR/Builders.h"

namespace mlir::mnemo {

/// The E4M3 nearest to f32 `x` (saturated at +-448), as an f8E4M3FN value.
Value encodeE4M3(OpBuilder &b, Location loc, Value x);

/// The f32 value of f8E4M3FN `x`.
Value decodeE4M3(OpBuilder &b, Location loc, Value x);

} // namespace mlir::mnemo

#endif // MNEMO_DIALECT_UTILS_FLOAT8_H

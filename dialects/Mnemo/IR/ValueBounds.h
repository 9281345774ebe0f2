//===- ValueBounds.h - the mnemo ops' result sizes for bounds ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_MNEMO_IR_VALUEBOUNDS_H
#define MNEMO_DIALECT_MNEMO_IR_VALUEBOUNDS_H

namespace mlir {
class DialectRegistry;
namespace mnemo {

/// Attaches ValueBoundsOpInterface to the mnemo ops whose result dims are
/// their operands' (rms_norm, swiglu, rope, rope_tables, linear, embedding,
/// attention), so that value-bounds analyses see through them: `tensor.dim`
/// of a norm's result is its input's dim.
void registerValueBoundsOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace mnemo
} // namespace mlir

#endif // MNEMO_DIALECT_MNEMO_IR_VALUEBOUNDS_H

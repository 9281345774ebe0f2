//===- MnemoDialect.h - mnemo dialect ---------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_MNEMODIALECT_H
#define MNEMO_DIALECT_MNEMODIALECT_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "dialects/Mnemo/IR/MnemoDialect.h.inc"

namespace mlir::mnemo {
/// A weight the runtime may replace by name (a LoRA adapter's factor kept
/// apart from the base weights): a unit attribute on the importer's
/// constant, then, on the function argument it becomes, the weight's name
/// (`kAdapterFactorAttr`) and its compiled-in value (`kAdapterValueAttr`).
constexpr llvm::StringLiteral kAdapterFactorAttr = "mnemo.adapter_factor";
constexpr llvm::StringLiteral kAdapterValueAttr = "mnemo.adapter_value";
} // namespace mlir::mnemo

#endif // MNEMO_DIALECT_MNEMODIALECT_H

//===- Passes.h - mnemo dialect passes --------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_TRANSFORMS_PASSES_H
#define MNEMO_DIALECT_TRANSFORMS_PASSES_H

#include "dialects/Mnemo/Transforms/MLAFormChoice.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mnemo {

#define GEN_PASS_DECL
#include "dialects/Mnemo/Transforms/Passes.h.inc"

/// Registers every mnemo dialect pass.
void registerMnemoPasses();

} // namespace mlir::mnemo

#endif // MNEMO_DIALECT_TRANSFORMS_PASSES_H

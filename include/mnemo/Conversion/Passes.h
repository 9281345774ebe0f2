//===- Passes.h - mnemo conversion passes -----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_CONVERSION_PASSES_H
#define MNEMO_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mnemo {

#define GEN_PASS_DECL
#include "mnemo/Conversion/Passes.h.inc"

/// Registers every mnemo conversion pass with the global registry.
void registerConversionPasses();

} // namespace mlir::mnemo

#endif // MNEMO_CONVERSION_PASSES_H

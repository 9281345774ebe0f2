//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TARGET_CPU_PASSES_H
#define MNEMO_TARGET_CPU_PASSES_H

#include "mnemo/Artifact/CodeObjectABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mnemo {

#define GEN_PASS_DECL
#include "mnemo/Target/CPU/Passes.h.inc"

/// Registers the CPU code generation passes.
void registerCPUPasses();

/// On a declaration: a parallel dispatch, with its body's symbol.
inline constexpr llvm::StringLiteral kParallelBodyAttr = "mnemo.parallel_body";
/// On a declaration: a call through hook slot N.
inline constexpr llvm::StringLiteral kHookAttr = "mnemo.hook";
} // namespace mlir::mnemo

#endif // MNEMO_TARGET_CPU_PASSES_H

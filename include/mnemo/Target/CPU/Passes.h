//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TARGET_CPU_PASSES_H
#define MNEMO_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mnemo {

#define GEN_PASS_DECL
#include "mnemo/Target/CPU/Passes.h.inc"

/// Registers the CPU code generation passes.
void registerCPUPasses();

/// Prefix of the artifact kernels the entry-point passes add.
inline constexpr llvm::StringLiteral kEntryPrefix = "mnemo_entry_";

} // namespace mlir::mnemo

#endif // MNEMO_TARGET_CPU_PASSES_H

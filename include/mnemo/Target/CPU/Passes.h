//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TARGET_CPU_PASSES_H
#define MNEMO_TARGET_CPU_PASSES_H

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

/// Prefix of the artifact kernels the entry-point passes add.
inline constexpr llvm::StringLiteral kEntryPrefix = "mnemo_entry_";

/// The code object's table of runtime hooks (runtime/schema/artifact.fbs)
/// and its slots.
inline constexpr llvm::StringLiteral kHooksSymbol = "mnemo_hooks";
inline constexpr unsigned kParallelForHook = 0;
inline constexpr unsigned kProfileHook = 1;
inline constexpr unsigned kAllocHook = 2;
inline constexpr unsigned kFreeHook = 3;
inline constexpr unsigned kNumHooks = 4;
/// On a declaration: a parallel dispatch, with its body's symbol.
inline constexpr llvm::StringLiteral kParallelBodyAttr = "mnemo.parallel_body";
/// On a declaration: a call through hook slot N.
inline constexpr llvm::StringLiteral kHookAttr = "mnemo.hook";
/// On the module: the profile points' names.
inline constexpr llvm::StringLiteral kProfilePointsAttr =
    "mnemo.profile_points";

} // namespace mlir::mnemo

#endif // MNEMO_TARGET_CPU_PASSES_H

//===- Passes.h - NVPTX code generation passes ------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TARGET_NVPTX_PASSES_H
#define MNEMO_TARGET_NVPTX_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mnemo {

#define GEN_PASS_DECL
#include "mnemo/Target/NVPTX/Passes.h.inc"

/// Registers the NVPTX code generation passes.
void registerNVPTXPasses();

/// Name of the gpu.module holding every kernel of a model.
inline constexpr llvm::StringLiteral kKernelModuleName = "mnemo_kernels";

} // namespace mlir::mnemo

#endif // MNEMO_TARGET_NVPTX_PASSES_H

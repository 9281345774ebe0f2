//===- LoweringPipelines.h - shared lowering pass sequences -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pass sequences that the host reference path and the CPU target share,
// from tensors to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_CONVERSION_LOWERINGPIPELINES_H
#define MNEMO_CONVERSION_LOWERINGPIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mlir::mnemo {

/// One-shot bufferization of whole functions (identity layouts at function
/// boundaries), then ownership-based deallocation: returned buffers are
/// fresh allocations owned by the caller.
void buildBufferizationPasses(OpPassManager &pm);

/// linalg ops to scf loops, then to the cf dialect.
void buildLinalgToLoopsPasses(OpPassManager &pm);

/// vector, math, arith, index, memref, func and cf to the LLVM dialect; math
/// ops without an LLVM intrinsic become libm calls. Heap buffers come from
/// malloc/free, or with `allocationFunctions` from MLIR's generic
/// `_mlir_memref_to_llvm_alloc`/`_free`, which the module must define.
void buildConvertToLLVMPasses(OpPassManager &pm,
                              bool allocationFunctions = false);

} // namespace mlir::mnemo

#endif // MNEMO_CONVERSION_LOWERINGPIPELINES_H

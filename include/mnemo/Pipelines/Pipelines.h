//===- Pipelines.h - mnemo pass pipelines -----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_PIPELINES_PIPELINES_H
#define MNEMO_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mlir::mnemo {

/// The host reference path: the reference decomposition of every mnemo op,
/// bufferized, lowered to loops and then to the LLVM dialect, ready for the
/// JIT (`mlir-runner`). Scalar math calls libm, so results are exact to f32
/// rounding; nothing is tiled or vectorized.
void buildReferencePipeline(OpPassManager &pm);

/// Registers `mnemo-reference-pipeline`.
void registerPipelines();

} // namespace mlir::mnemo

#endif // MNEMO_PIPELINES_PIPELINES_H

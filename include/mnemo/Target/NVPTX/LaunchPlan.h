//===- LaunchPlan.h - what the host does to run GPU kernels -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// After kernel outlining, a public function is a list of buffers and kernel
// launches. This is that list, in the form the runtime's CUDA executor
// records (include/mnemo/Artifact/GpuPlan.h, docs/GPU.md).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TARGET_NVPTX_LAUNCHPLAN_H
#define MNEMO_TARGET_NVPTX_LAUNCHPLAN_H

#include "mnemo/Artifact/GpuPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::mnemo {

/// The plan of every public function of `module` (after kernel outlining).
FailureOr<std::vector<GpuFunctionPlan>> buildLaunchPlans(ModuleOp module);

/// Writes a plan as `// mnemo.*` comment lines, a readable dump at the head
/// of --emit=ptx (nothing reads it back: artifacts hold the plan as tables).
void printLaunchPlan(const GpuFunctionPlan &plan, llvm::raw_ostream &os);

} // namespace mlir::mnemo

#endif // MNEMO_TARGET_NVPTX_LAUNCHPLAN_H

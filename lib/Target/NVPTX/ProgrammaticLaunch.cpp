//===- ProgrammaticLaunch.cpp - overlap a kernel's start with the last ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Puts `griddepcontrol.wait` and `griddepcontrol.launch_dependents` first in
// every kernel (Passes.td explains the protocol). The launch plan
// (LaunchPlan.cpp, kernelWaitsFirst) reads the wait back to mark the
// launches the runtime may make programmatic.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_PROGRAMMATICLAUNCHPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

struct ProgrammaticLaunchPass
    : mnemo::impl::ProgrammaticLaunchPassBase<ProgrammaticLaunchPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<gpu::GPUFuncOp>()) {
      if (!func.isKernel() || func.getBody().empty())
        continue;
      Block &entry = func.getBody().front();
      if (!entry.empty())
        if (auto first = dyn_cast<NVVM::GriddepcontrolOp>(entry.front()))
          if (first.getKind() == NVVM::GridDepActionKind::wait)
            continue; // Already done (the pass run twice).
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      Location loc = func.getLoc();
      NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
      NVVM::GriddepcontrolOp::create(
          b, loc, NVVM::GridDepActionKind::launch_dependents);
    }
  }
};

} // namespace

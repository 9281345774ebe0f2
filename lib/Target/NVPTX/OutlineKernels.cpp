//===- OutlineKernels.cpp - outlining that keeps nvvm attributes -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

// The generated base declares the dialects outlining depends on.
namespace mlir::mnemo {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// The `nvvm.*` attributes of `op`.
SmallVector<NamedAttribute> nvvmAttributes(Operation *op) {
  SmallVector<NamedAttribute> kept;
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (attr.getName().strref().starts_with("nvvm."))
      kept.push_back(attr);
  return kept;
}

struct OutlineKernelsPass final
    : mnemo::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A launch with a grid or block size of constant 0 runs nothing (an
    // emitter's launch that only some shapes need, such as a merge over
    // one chunk): it goes, rather than become a plan entry the runtime
    // refuses.
    SmallVector<gpu::LaunchOp> empty;
    module.walk([&](gpu::LaunchOp launch) {
      if (!launch.getAsyncToken() &&
          llvm::any_of(ValueRange{launch.getGridSizeX(), launch.getGridSizeY(),
                                  launch.getGridSizeZ(), launch.getBlockSizeX(),
                                  launch.getBlockSizeY(),
                                  launch.getBlockSizeZ()},
                       [](Value size) { return matchPattern(size, m_Zero()); }))
        empty.push_back(launch);
    });
    for (gpu::LaunchOp launch : empty)
      launch.erase();
    // Outlining replaces each launch by a gpu.launch_func in place, so the
    // launches of a function and its launch_funcs afterwards pair up in
    // walk order.
    DenseMap<Operation *, SmallVector<SmallVector<NamedAttribute>>> byFunc;
    DenseSet<Operation *> earlier; // launch_funcs outlined before this pass
    module.walk([&](gpu::LaunchFuncOp call) { earlier.insert(call); });
    module.walk([&](gpu::LaunchOp launch) {
      byFunc[SymbolTable::getNearestSymbolTable(launch)].push_back(
          nvvmAttributes(launch));
    });
    OpPassManager outline(ModuleOp::getOperationName());
    outline.addPass(createGpuKernelOutliningPass());
    if (failed(runPipeline(outline, module)))
      return signalPassFailure();
    DenseMap<Operation *, unsigned> next;
    WalkResult walk = module.walk([&](gpu::LaunchFuncOp call) {
      if (earlier.contains(call))
        return WalkResult::advance();
      Operation *owner = SymbolTable::getNearestSymbolTable(call);
      auto it = byFunc.find(owner);
      if (it == byFunc.end())
        return WalkResult::advance();
      unsigned i = next[owner]++;
      if (i >= it->second.size()) {
        call.emitError("mnemo-gpu-outline-kernels: more kernel launches "
                       "than gpu.launch ops before outlining");
        return WalkResult::interrupt();
      }
      if (it->second[i].empty())
        return WalkResult::advance();
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          call, call.getKernel());
      if (!kernel) {
        call.emitError("mnemo-gpu-outline-kernels: no kernel ")
            << call.getKernel();
        return WalkResult::interrupt();
      }
      for (NamedAttribute attr : it->second[i])
        kernel->setAttr(attr.getName(), attr.getValue());
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

//===- MergeKernelModules.cpp - one gpu.module per model --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_MERGEKERNELMODULESPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

struct MergeKernelModulesPass final
    : mnemo::impl::MergeKernelModulesPassBase<MergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> sources;
    for (auto m : module.getOps<gpu::GPUModuleOp>())
      if (m.getName() != mnemo::kKernelModuleName)
        sources.push_back(m);
    if (sources.empty())
      return;
    auto target = module.lookupSymbol<gpu::GPUModuleOp>(mnemo::kKernelModuleName);
    if (!target) {
      OpBuilder b(sources.front());
      target = gpu::GPUModuleOp::create(b, sources.front().getLoc(),
                                        mnemo::kKernelModuleName);
    }
    SymbolTable table(target);
    // (old module, old function) -> new function name.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp source : sources) {
      SmallVector<Operation *> ops;
      for (Operation &op : source.getBody()->getOperations())
        ops.push_back(&op);
      for (Operation *op : ops) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol) {
          op->emitOpError("unexpected in an outlined kernel module");
          return signalPassFailure();
        }
        StringAttr old = symbol.getNameAttr();
        op->remove();
        StringAttr now = table.insert(op);
        renamed[{source.getNameAttr(), old}] = now;
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it = renamed.find(
          {kernel.getRootReference(), kernel.getLeafReference()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          target.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp source : sources)
      source.erase();

    // The constant globals the kernels read (sunk by
    // mnemo-gpu-sink-constant-globals) become device data.
    SymbolTable globals(module);
    SmallVector<memref::GetGlobalOp> reads;
    target.walk([&](memref::GetGlobalOp get) { reads.push_back(get); });
    for (memref::GetGlobalOp get : reads) {
      if (table.lookup(get.getName()))
        continue;
      if (auto global = globals.lookup<memref::GlobalOp>(get.getName()))
        table.insert(global->clone());
    }
  }
};

} // namespace

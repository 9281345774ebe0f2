//===- SinkConstantGlobals.cpp - constants into kernels ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_SINKCONSTANTGLOBALSPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

struct SinkConstantGlobalsPass final
    : mnemo::impl::SinkConstantGlobalsPassBase<SinkConstantGlobalsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto isConstantGlobal = [&](Operation *op) {
      auto get = dyn_cast<memref::GetGlobalOp>(op);
      if (!get)
        return false;
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          func, get.getNameAttr());
      return global && global.getConstant();
    };
    WalkResult walk = func.walk([&](gpu::LaunchOp launch) {
      if (failed(sinkOperationsIntoLaunchOp(launch, isConstantGlobal)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

//===- AlignWorkgroupMemory.cpp - alignment of shared-memory tiles -*- C++ -*-//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_ALIGNWORKGROUPMEMORYPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

struct AlignWorkgroupMemoryPass
    : mnemo::impl::AlignWorkgroupMemoryPassBase<AlignWorkgroupMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    StringAttr name = StringAttr::get(&getContext(),
                                      LLVM::LLVMDialect::getAlignAttrName());
    Builder b(&getContext());
    getOperation()->walk([&](gpu::GPUFuncOp func) {
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e;
           ++i) {
        auto old = dyn_cast_or_null<IntegerAttr>(
            func.getWorkgroupAttributionAttr(i, name));
        if (!old || old.getInt() < alignment)
          func.setWorkgroupAttributionAttr(i, name,
                                           b.getI64IntegerAttr(alignment));
      }
    });
  }
};

} // namespace

//===- ExternDynamicShared.cpp - dynamic shared memory in PTX ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_EXTERNDYNAMICSHAREDPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

struct ExternDynamicSharedPass
    : mnemo::impl::ExternDynamicSharedPassBase<ExternDynamicSharedPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() != 3 || !array || array.getNumElements() != 0)
        return;
      global.setLinkage(LLVM::Linkage::External);
      if (global.getAlignment().value_or(0) < uint64_t(alignment))
        global.setAlignment(alignment);
    });
  }
};

} // namespace

//===- ReadOnlyArguments.cpp - inputs never updated in place ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_READONLYARGUMENTSPASS
#include "mnemo/Conversion/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {
struct ReadOnlyArgumentsPass final
    : mnemo::impl::ReadOnlyArgumentsPassBase<ReadOnlyArgumentsPass> {
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    getOperation().walk([&](func::FuncOp func) {
      for (BlockArgument arg : func.getArguments())
        if (isa<TensorType>(arg.getType()))
          func.setArgAttr(arg.getArgNumber(),
                          bufferization::BufferizationDialect::
                              kWritableAttrName,
                          readOnly);
    });
  }
};
} // namespace

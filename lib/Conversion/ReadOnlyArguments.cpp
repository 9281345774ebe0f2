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
    getOperation().walk([&](func::FuncOp func) {
      for (BlockArgument arg : func.getArguments()) {
        unsigned i = arg.getArgNumber();
        if (!isa<TensorType>(arg.getType()))
          continue;
        bool inPlace = func.getArgAttr(i, "mnemo.in_place") != nullptr;
        func.setArgAttr(
            i, bufferization::BufferizationDialect::kWritableAttrName,
            BoolAttr::get(&getContext(), inPlace));
      }
    });
  }
};
} // namespace

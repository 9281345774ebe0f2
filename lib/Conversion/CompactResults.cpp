//===- CompactResults.cpp - dense buffers for strided results ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_COMPACTRESULTSPASS
#include "mnemo/Conversion/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {
struct CompactResultsPass final
    : mnemo::impl::CompactResultsPassBase<CompactResultsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](func::ReturnOp ret) {
      for (OpOperand &operand : ret->getOpOperands()) {
        auto view = operand.get().getDefiningOp<memref::CastOp>();
        if (!view)
          continue;
        auto source = cast<MemRefType>(view.getSource().getType());
        auto result = dyn_cast<MemRefType>(view.getType());
        if (!result || source.getLayout().isIdentity() ||
            !result.getLayout().isIdentity())
          continue;
        rewriter.setInsertionPoint(ret);
        Location loc = view.getLoc();
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < result.getRank(); ++d)
          if (result.isDynamicDim(d))
            sizes.push_back(
                memref::DimOp::create(rewriter, loc, view.getSource(), d));
        Value dense = memref::AllocOp::create(rewriter, loc, result, sizes,
                                              rewriter.getI64IntegerAttr(64));
        memref::CopyOp::create(rewriter, loc, view.getSource(), dense);
        operand.set(dense);
      }
    });
  }
};
} // namespace

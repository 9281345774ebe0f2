//===- ReductionsInnermost.cpp - parallel loops outermost -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_REDUCTIONSINNERMOSTPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// The loop order with every parallel loop first, or empty when it is
/// already so.
SmallVector<unsigned> parallelFirst(linalg::GenericOp op) {
  SmallVector<unsigned> order, reductions;
  for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
    (linalg::isParallelIterator(type) ? order : reductions)
        .push_back(static_cast<unsigned>(i));
  bool sorted = order.empty() || reductions.empty() ||
                order.back() < reductions.front();
  if (sorted)
    return {};
  order.append(reductions);
  return order;
}

struct ReductionsInnermostPass final
    : mnemo::impl::ReductionsInnermostPassBase<ReductionsInnermostPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      SmallVector<unsigned> order = parallelFirst(op);
      if (order.empty())
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order)))
        return signalPassFailure();
    }
  }
};

} // namespace

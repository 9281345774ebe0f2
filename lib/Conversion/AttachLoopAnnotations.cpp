//===- AttachLoopAnnotations.cpp - loop hints onto LLVM branches -*- C++ -*-=//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_ATTACHLOOPANNOTATIONSPASS
#include "mnemo/Conversion/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// The discardable attribute scf-to-cf and cf-to-llvm carry along.
constexpr llvm::StringLiteral kCarried = "llvm.loop_annotation";

template <typename BranchOp>
void attach(BranchOp op) {
  auto annotation =
      op->template getAttrOfType<LLVM::LoopAnnotationAttr>(kCarried);
  if (!annotation)
    return;
  op.setLoopAnnotationAttr(annotation);
  op->removeDiscardableAttr(kCarried);
}

struct AttachLoopAnnotationsPass final
    : mnemo::impl::AttachLoopAnnotationsPassBase<AttachLoopAnnotationsPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (auto br = dyn_cast<LLVM::BrOp>(op))
        attach(br);
      else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
        attach(condBr);
    });
  }
};

} // namespace

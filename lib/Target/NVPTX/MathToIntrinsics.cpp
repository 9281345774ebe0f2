//===- MathToIntrinsics.cpp - f32 math without libdevice --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_MATHTOINTRINSICSPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// The LLVM intrinsic of an f32 math op, or "".
StringRef intrinsicFor(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringRef>(op)
      .Case([](math::SqrtOp) { return "llvm.sqrt.f32"; })
      .Case([](math::FloorOp) { return "llvm.floor.f32"; })
      .Case([](math::CeilOp) { return "llvm.ceil.f32"; })
      .Case([](math::TruncOp) { return "llvm.trunc.f32"; })
      .Case([](math::RoundEvenOp) { return "llvm.roundeven.f32"; })
      .Case([](math::AbsFOp) { return "llvm.fabs.f32"; })
      .Case([](math::CopySignOp) { return "llvm.copysign.f32"; })
      .Case([](math::FmaOp) { return "llvm.fma.f32"; })
      .Default([](Operation *) { return ""; });
}

struct MathToIntrinsicsPass final
    : mnemo::impl::MathToIntrinsicsPassBase<MathToIntrinsicsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (op->getDialect() && isa<math::MathDialect>(op->getDialect()) &&
          op->getNumResults() == 1 && op->getResult(0).getType().isF32())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value result;
      auto tanh = dyn_cast<math::TanhOp>(op);
      if (tanh &&
          bitEnumContainsAll(tanh.getFastmath(), arith::FastMathFlags::afn)) {
        // llvm.tanh with `afn`: tanh.approx.f32 (sm_75 and later).
        result =
            LLVM::TanhOp::create(b, loc, tanh.getOperand(),
                                 LLVM::FastmathFlagsAttr::get(
                                     b.getContext(), LLVM::FastmathFlags::afn));
      } else if (auto rsqrt = dyn_cast<math::RsqrtOp>(op)) {
        Type f32 = b.getF32Type();
        Value root = LLVM::CallIntrinsicOp::create(
                         b, loc, f32, b.getStringAttr("llvm.sqrt.f32"),
                         rsqrt.getOperand())
                         .getResult(0);
        Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
        result = arith::DivFOp::create(b, loc, one, root);
      } else {
        StringRef name = intrinsicFor(op);
        if (name.empty())
          continue;
        result = LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                               b.getStringAttr(name),
                                               op->getOperands())
                     .getResult(0);
      }
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
    }
  }
};

} // namespace

//===- DropInPlaceResults.cpp - in-place updates return nothing -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_DROPINPLACERESULTSPASS
#include "mnemo/Conversion/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kInPlaceOf = "mnemo.in_place_of";

/// `v` with memref.cast ops stripped.
Value throughCasts(Value v) {
  while (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  return v;
}

struct DropInPlaceResultsPass final
    : mnemo::impl::DropInPlaceResultsPassBase<DropInPlaceResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool any = false;
      for (unsigned r = 0; r < func.getNumResults(); ++r)
        any |= func.getResultAttr(r, kInPlaceOf) != nullptr;
      if (!any)
        continue;
      // A buffer updated in loops and branches comes back as their result:
      // folding the loop-carried values that each iteration passes on
      // unchanged leads back to the argument.
      RewritePatternSet patterns(&getContext());
      scf::ForOp::getCanonicalizationPatterns(patterns, &getContext());
      scf::IfOp::getCanonicalizationPatterns(patterns, &getContext());
      (void)applyPatternsGreedily(func, std::move(patterns));
      llvm::BitVector drop(func.getNumResults());
      for (unsigned r = 0; r < func.getNumResults(); ++r) {
        auto of = func.getResultAttrOfType<IntegerAttr>(r, kInPlaceOf);
        if (!of)
          continue;
        int64_t arg = of.getInt();
        bool same = true;
        func.walk([&](func::ReturnOp ret) {
          same &= arg >= 0 && arg < func.getNumArguments() &&
                  throughCasts(ret.getOperand(r)) == func.getArgument(arg);
        });
        if (!same) {
          func.emitError("result ")
              << r << " of '" << func.getName()
              << "' does not return argument " << arg
              << "'s buffer: its in-place update was bufferized as a copy";
          return signalPassFailure();
        }
        drop.set(r);
      }
      if (drop.none())
        continue;
      func.walk([&](func::ReturnOp ret) { ret->eraseOperands(drop); });
      if (failed(func.eraseResults(drop)))
        return signalPassFailure();
    }
  }
};
} // namespace

//===- ExpandBF16.cpp - bf16 without compiler-rt calls ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_EXPANDBF16PASS
#include "mnemo/Target/CPU/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {
struct ExpandBF16Pass final
    : mnemo::impl::ExpandBF16PassBase<ExpandBF16Pass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // bf16 arithmetic as f32 arithmetic between extf/truncf.
    Type bf16 = BFloat16Type::get(ctx), f32 = Float32Type::get(ctx);
    TypeConverter converter;
    arith::populateEmulateUnsupportedFloatsConversions(converter, {bf16}, f32);
    RewritePatternSet emulate(ctx);
    arith::populateEmulateUnsupportedFloatsPatterns(emulate, converter);
    ConversionTarget target(*ctx);
    arith::populateEmulateUnsupportedFloatsLegality(target, converter);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(emulate))))
      return signalPassFailure();
    // The conversions themselves as integer arithmetic.
    RewritePatternSet expand(ctx);
    arith::populateExpandBFloat16Patterns(expand);
    if (failed(applyPatternsGreedily(getOperation(), std::move(expand))))
      signalPassFailure();
  }
};
} // namespace

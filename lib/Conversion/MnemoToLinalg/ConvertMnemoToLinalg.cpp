//===- ConvertMnemoToLinalg.cpp - the reference decomposition ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoDialect.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "mnemo/Conversion/MnemoToLinalg.h"
#include "mnemo/Conversion/Passes.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_CONVERTMNEMOTOLINALGPASS
#include "mnemo/Conversion/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;

void mlir::mnemo::populateMnemoToLinalgPatterns(
    RewritePatternSet &patterns, const MnemoToLinalgOptions &options) {
  populateAttentionToLinalgPatterns(patterns);
  populateMLAToLinalgPatterns(patterns);
  populateCompressedAttentionToLinalgPatterns(patterns);
  populateGatedPoolToLinalgPatterns(patterns);
  populateRopeToLinalgPatterns(patterns, options.ropeTables);
  populateLayerToLinalgPatterns(patterns);
  populateSparseAttentionToLinalgPatterns(patterns);
  populateTopKToLoopsPatterns(patterns, options.topKRowScratch);
  populateExpertsToLinalgPatterns(patterns, options.expertsAlongOutputs);
}

namespace {
struct ConvertMnemoToLinalgPass final
    : mnemo::impl::ConvertMnemoToLinalgPassBase<ConvertMnemoToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<MnemoDialect>();
    // The cache write bufferizes itself, in place into its pools.
    target.addLegalOp<KVCacheWriteOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateMnemoToLinalgPatterns(
        patterns, {ropeTables, topKRowScratch, expertsAlongOutputs});
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

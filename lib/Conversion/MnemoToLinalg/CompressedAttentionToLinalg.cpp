//===- CompressedAttentionToLinalg.cpp - V4 attention reference -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The reference semantics of mnemo.compressed_attention: one masked
// mnemo.attention over the raw keys and the entries concatenated
// (buildCompressedAttentionDecomposition), which this same conversion
// lowers to its reference form.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Transforms.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

using namespace mlir;
using namespace mlir::mnemo;

namespace {
struct CompressedAttentionLowering final
    : OpRewritePattern<CompressedAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CompressedAttentionOp op,
                                PatternRewriter &b) const override {
    b.replaceOp(op, buildCompressedAttentionDecomposition(b, op));
    return success();
  }
};
} // namespace

void mlir::mnemo::populateCompressedAttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<CompressedAttentionLowering>(patterns.getContext());
}

//===- MLAToLinalg.cpp - mnemo.mla_attention reference lowering -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The reference semantics of mnemo.mla_attention are those of its expanded
// form, computed in f32: keys and values up-projected per head from the
// latent cache by linalg contractions,
//
//   k_nope[b,h,j,e] = sum_c c_kv[b,j,c] W_UK[h,e,c]
//   v[b,h,j,e]      = sum_c c_kv[b,j,c] W_UV[h,e,c]
//
// then the attention of [q_nope, q_pe] over [k_nope, k_pe] (k_pe shared by
// the heads) as a mnemo.attention, which this same conversion lowers to its
// reference form.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Transforms.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

using namespace mlir;
using namespace mlir::mnemo;

namespace {
struct MLAAttentionLowering final : OpRewritePattern<MLAAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MLAAttentionOp op,
                                PatternRewriter &b) const override {
    b.replaceOp(op, buildMLADecomposition(b, op, MLAForm::Expanded));
    return success();
  }
};
} // namespace

void mlir::mnemo::populateMLAToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MLAAttentionLowering>(patterns.getContext());
}

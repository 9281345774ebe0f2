//===- SelectMLAForm.cpp - MLA form per op ----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_SELECTMLAFORMPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;

namespace {
struct SelectMLAFormPass final
    : mnemo::impl::SelectMLAFormPassBase<SelectMLAFormPass> {
  void runOnOperation() override {
    getOperation()->walk([&](MLAAttentionOp op) {
      if (op.getForm())
        return;
      // One query row per sequence is a decode step: the absorbed form
      // reads each latent row once for all heads. Anything longer (or not
      // known to be 1) is a prefill, where up-projecting keys and values
      // once is cheaper than projecting every query and output.
      bool decode = op.getQNope().getType().getDimSize(2) == 1;
      op.setForm(decode ? MLAForm::Absorbed : MLAForm::Expanded);
    });
  }
};
} // namespace

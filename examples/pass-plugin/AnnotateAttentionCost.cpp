//===- AnnotateAttentionCost.cpp - example pass on mnemo ops ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An out-of-tree pass built as a plug-in for mnemo-opt: it reads
// mnemo.attention's operands and attributes through the generated accessors
// and annotates each op with its FLOP count. docs/WritingPasses.md walks
// through it.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "dialects/Mnemo/IR/MnemoOps.h"

namespace mnemo_example {
#define GEN_PASS_DEF_ANNOTATEATTENTIONCOSTPASS
#include "ExamplePasses.h.inc"
} // namespace mnemo_example

using namespace mlir;

namespace {

/// Number of (query, key) pairs that the causal and window masks leave
/// visible, for queries at positions offset..offset+sq-1 and keys 0..skv-1.
int64_t visiblePairs(int64_t sq, int64_t skv, int64_t offset, bool causal,
                     std::optional<int64_t> window) {
  int64_t pairs = 0;
  for (int64_t i = 0; i < sq; ++i) {
    int64_t pos = i + offset;
    int64_t hi = causal ? std::min(pos, skv - 1) : skv - 1;
    int64_t lo = window ? std::max<int64_t>(0, pos - *window + 1) : 0;
    pairs += std::max<int64_t>(0, hi - lo + 1);
  }
  return pairs;
}

struct AnnotateAttentionCostPass final
    : mnemo_example::impl::AnnotateAttentionCostPassBase<
          AnnotateAttentionCostPass> {
  using Base::Base;

  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](mnemo::AttentionOp op) {
      RankedTensorType q = op.getQuery().getType();
      RankedTensorType k = op.getKey().getType();
      RankedTensorType v = op.getValue().getType();
      if (!q.hasStaticShape() || !k.hasStaticShape() || op.getQOffset()) {
        op.emitRemark() << "cost not annotated: dynamic shape or offset";
        return;
      }
      int64_t pairs = visiblePairs(q.getDimSize(2), k.getDimSize(2),
                                   /*offset=*/0, op.getCausal(),
                                   op.getWindowSize());
      int64_t flops = 2 * q.getDimSize(0) * q.getDimSize(1) * pairs *
                      (q.getDimSize(3) + v.getDimSize(3));
      op->setAttr(attrName, b.getI64IntegerAttr(flops));
    });
  }
};

} // namespace

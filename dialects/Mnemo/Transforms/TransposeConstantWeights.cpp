//===- TransposeConstantWeights.cpp - in_out constant weights ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include <cstring>

namespace mlir::mnemo {
#define GEN_PASS_DEF_TRANSPOSECONSTANTWEIGHTSPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;

namespace {

/// The transpose of a dense matrix of byte-sized elements.
DenseElementsAttr transposeMatrix(DenseElementsAttr w) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t n = type.getDimSize(0), k = type.getDimSize(1);
  auto transposed = RankedTensorType::get({k, n}, type.getElementType());
  if (w.isSplat())
    return w.reshape(transposed);
  size_t bytes = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> raw = w.getRawData();
  std::vector<char> out(raw.size());
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c)
      std::memcpy(&out[(c * n + r) * bytes], &raw[(r * k + c) * bytes], bytes);
  return DenseElementsAttr::getFromRawBuffer(transposed, out);
}

struct TransposeConstantWeightsPass final
    : mnemo::impl::TransposeConstantWeightsPassBase<
          TransposeConstantWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // One transposed constant per original, however many linears share it.
    llvm::DenseMap<Operation *, Value> transposedOf;
    getOperation()->walk([&](LinearOp op) {
      auto constant = op.getWeight().getDefiningOp<arith::ConstantOp>();
      auto value = constant
                       ? dyn_cast<DenseElementsAttr>(constant.getValue())
                       : DenseElementsAttr();
      if (!value || value.getElementType().getIntOrFloatBitWidth() % 8 != 0)
        return;
      WeightLayout want = f32OutIn && value.getElementType().isF32()
                              ? WeightLayout::OutIn
                          : toInOut ? WeightLayout::InOut
                                    : op.getLayout();
      if (op.getLayout() == want)
        return;
      Value &transposed = transposedOf[constant];
      if (!transposed) {
        rewriter.setInsertionPoint(constant);
        transposed = arith::ConstantOp::create(rewriter, constant.getLoc(),
                                               transposeMatrix(value));
      }
      rewriter.modifyOpInPlace(op, [&] {
        op.getWeightMutable().assign(transposed);
        op.setLayout(want);
      });
      if (constant->use_empty())
        rewriter.eraseOp(constant);
    });
  }
};

} // namespace

//===- LowerDynamicExpandShape.cpp - expand_shape as reinterpret_cast -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A memref.expand_shape whose reassociation group holds more than one
// dynamic size becomes extract_strided_metadata + reinterpret_cast (see
// Passes.td: upstream's expand-strided-metadata crashes on it).
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_LOWERDYNAMICEXPANDSHAPEPASS
#include "mnemo/Conversion/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// Whether some group of `op` splits one dim into several dynamic sizes.
bool hasSeveralDynamicSizesInAGroup(memref::ExpandShapeOp op) {
  ArrayRef<int64_t> shape = op.getResultType().getShape();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) {
          return ShapedType::isDynamic(shape[d]);
        }) > 1)
      return true;
  return false;
}

/// `a * b`, folded when both are constants.
OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult x,
                      OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x);
  std::optional<int64_t> cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  return arith::MulIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

void lower(RewriterBase &b, memref::ExpandShapeOp op) {
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  auto metadata =
      memref::ExtractStridedMetadataOp::create(b, loc, op.getSrc());
  // Static strides and offset from the source type where it has them.
  auto [srcStrides, srcOffset] = op.getSrcType().getStridesAndOffset();
  auto staticOr = [&](int64_t v, Value dynamic) -> OpFoldResult {
    if (ShapedType::isDynamic(v))
      return dynamic;
    return b.getIndexAttr(v);
  };
  SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
  SmallVector<OpFoldResult> strides(sizes.size());
  for (auto [src, group] : llvm::enumerate(op.getReassociationIndices())) {
    OpFoldResult stride = staticOr(srcStrides[src], metadata.getStrides()[src]);
    for (int64_t d : llvm::reverse(group)) {
      strides[d] = stride;
      if (d != group.front())
        stride = multiply(b, loc, stride, sizes[d]);
    }
  }
  b.replaceOpWithNewOp<memref::ReinterpretCastOp>(
      op, op.getResultType(), metadata.getBaseBuffer(),
      staticOr(srcOffset, metadata.getOffset()), sizes, strides);
}

struct LowerDynamicExpandShapePass final
    : mnemo::impl::LowerDynamicExpandShapePassBase<
          LowerDynamicExpandShapePass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> ops;
    getOperation()->walk([&](memref::ExpandShapeOp op) {
      if (hasSeveralDynamicSizesInAGroup(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (memref::ExpandShapeOp op : ops)
      lower(rewriter, op);
  }
};

} // namespace

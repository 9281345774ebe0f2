//===- SplitKernelMemRefs.cpp - dynamic memrefs into kernels ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Transforms/RegionUtils.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_SPLITKERNELMEMREFSPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// Whether a bare pointer describes `type` completely.
bool isStaticBuffer(MemRefType type) {
  if (!type.hasStaticShape())
    return false;
  int64_t offset;
  SmallVector<int64_t> strides;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return ShapedType::isStatic(offset) &&
         llvm::all_of(strides, [](int64_t s) { return ShapedType::isStatic(s); });
}

LogicalResult split(gpu::LaunchOp launch) {
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(launch.getBody(), captured);
  for (Value value : captured) {
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type || isStaticBuffer(type))
      continue;
    int64_t offset;
    SmallVector<int64_t> strides;
    if (failed(type.getStridesAndOffset(strides, offset)))
      return launch.emitOpError("uses a buffer of non-strided type ") << type;
    Location loc = value.getLoc();
    OpBuilder host(launch);
    auto meta = memref::ExtractStridedMetadataOp::create(host, loc, value);
    OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
    auto pick = [&](int64_t s, Value v) -> OpFoldResult {
      if (ShapedType::isDynamic(s))
        return v;
      return b.getIndexAttr(s);
    };
    SmallVector<OpFoldResult> sizes, strideValues;
    for (auto [i, s] : llvm::enumerate(type.getShape()))
      sizes.push_back(pick(s, meta.getSizes()[i]));
    for (auto [i, s] : llvm::enumerate(strides))
      strideValues.push_back(pick(s, meta.getStrides()[i]));
    auto rebuilt = memref::ReinterpretCastOp::create(
        b, loc, type, meta.getBaseBuffer(), pick(offset, meta.getOffset()),
        sizes, strideValues);
    value.replaceUsesWithIf(rebuilt.getResult(), [&](OpOperand &use) {
      return launch->isProperAncestor(use.getOwner());
    });
  }
  return success();
}

struct SplitKernelMemRefsPass final
    : mnemo::impl::SplitKernelMemRefsPassBase<SplitKernelMemRefsPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp l) { launches.push_back(l); });
    for (gpu::LaunchOp l : launches)
      if (failed(split(l)))
        return signalPassFailure();
  }
};

} // namespace

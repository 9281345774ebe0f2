//===- HoistTileBuffers.cpp - tile temporaries out of scf.forall -*- C++ -*-=//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/Builders.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_HOISTTILEBUFFERSPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// Bytes of a statically shaped buffer of scalars, or nullopt.
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bits = type.getElementTypeBitWidth();
  return (type.getNumElements() * bits + 7) / 8;
}

/// Hoists the allocations nested in one outermost scf.forall.
LogicalResult hoistFrom(scf::ForallOp forall) {
  SmallVector<memref::AllocOp> allocs;
  forall.getBody()->walk([&](memref::AllocOp a) { allocs.push_back(a); });
  if (allocs.empty())
    return success();
  if (!forall.isNormalized())
    return forall.emitOpError("tile loop with buffers must be normalized");

  Location loc = forall.getLoc();
  OpBuilder b(forall);
  // Number of iterations (slots) on the host.
  Value slots = arith::ConstantIndexOp::create(b, loc, 1);
  for (OpFoldResult ub : forall.getMixedUpperBound())
    slots = arith::MulIOp::create(
        b, loc, slots, getValueOrCreateConstantIndexOp(b, loc, ub));
  // Linearized iteration index at the top of the body.
  OpBuilder inner = OpBuilder::atBlockBegin(forall.getBody());
  Value slot = arith::ConstantIndexOp::create(inner, loc, 0);
  for (auto [iv, ub] :
       llvm::zip(forall.getInductionVars(), forall.getMixedUpperBound())) {
    Value n = getValueOrCreateConstantIndexOp(inner, loc, ub);
    slot = arith::AddIOp::create(
        inner, loc, arith::MulIOp::create(inner, loc, slot, n), iv);
  }

  Type i8 = b.getI8Type();
  for (memref::AllocOp alloc : allocs) {
    auto type = alloc.getType();
    std::optional<int64_t> bytes = staticBytes(type);
    if (!bytes || type.getMemorySpace())
      return alloc.emitOpError("tile buffer of type ")
             << type << " cannot be hoisted (needs a static shape)";
    // Keep slots 64-byte aligned.
    int64_t stride = llvm::alignTo(*bytes, 64);
    Value size = arith::MulIOp::create(
        b, loc, slots, arith::ConstantIndexOp::create(b, loc, stride));
    auto bufType = MemRefType::get({ShapedType::kDynamic}, i8);
    auto buffer = memref::AllocOp::create(b, loc, bufType, ValueRange{size},
                                          b.getI64IntegerAttr(64));
    OpBuilder at(alloc);
    Value shift = arith::MulIOp::create(
        at, loc, slot, arith::ConstantIndexOp::create(at, loc, stride));
    auto view = memref::ViewOp::create(at, alloc.getLoc(), type, buffer, shift,
                                       ValueRange{});
    alloc.replaceAllUsesWith(view.getResult());
    alloc.erase();
  }
  // Deallocations of hoisted buffers (none when deallocation did not run).
  SmallVector<memref::DeallocOp> deallocs;
  forall.getBody()->walk([&](memref::DeallocOp d) {
    if (d.getMemref().getDefiningOp<memref::ViewOp>())
      deallocs.push_back(d);
  });
  for (memref::DeallocOp d : deallocs)
    d.erase();
  return success();
}

struct HoistTileBuffersPass final
    : mnemo::impl::HoistTileBuffersPassBase<HoistTileBuffersPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> loops;
    getOperation()->walk([&](scf::ForallOp f) {
      if (!f->getParentOfType<scf::ForallOp>() &&
          !f->getParentOfType<scf::ParallelOp>())
        loops.push_back(f);
    });
    for (scf::ForallOp f : loops)
      if (failed(hoistFrom(f)))
        return signalPassFailure();
  }
};

} // namespace

//===- LaunchLoops.cpp - outermost parallel loops to gpu.launch -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LoopIndices.h"

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_LAUNCHLOOPSPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace {

/// Bounds of one loop dimension.
struct Dim {
  Value lb, count, step;
};

Value ceilDiv(OpBuilder &b, Location loc, Value a, Value d) {
  return arith::CeilDivSIOp::create(b, loc, a, d);
}

SmallVector<Value> countsOf(ArrayRef<Dim> dims) {
  return llvm::map_to_vector(dims, [](const Dim &d) { return d.count; });
}

Value product(OpBuilder &b, Location loc, ArrayRef<Dim> dims) {
  return productOf(b, loc, countsOf(dims));
}

SmallVector<Dim> loopDims(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> lbs,
                          ArrayRef<OpFoldResult> ubs,
                          ArrayRef<OpFoldResult> steps) {
  SmallVector<Dim> dims;
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    Value l = getValueOrCreateConstantIndexOp(b, loc, lb);
    Value u = getValueOrCreateConstantIndexOp(b, loc, ub);
    Value s = getValueOrCreateConstantIndexOp(b, loc, step);
    dims.push_back({l, ceilDiv(b, loc, arith::SubIOp::create(b, loc, u, l), s),
                    s});
  }
  return dims;
}

SmallVector<Dim> loopDims(OpBuilder &b, scf::ParallelOp p) {
  auto fold = [](ValueRange vs) {
    return llvm::to_vector(llvm::map_range(
        vs, [](Value v) -> OpFoldResult { return v; }));
  };
  return loopDims(b, p.getLoc(), fold(p.getLowerBound()),
                  fold(p.getUpperBound()), fold(p.getStep()));
}

/// Induction variables of the row-major linear index `lin`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value lin,
                               ArrayRef<Dim> dims) {
  SmallVector<Value> ivs = delinearizeIndex(b, loc, lin, countsOf(dims));
  for (auto [iv, d] : llvm::zip(ivs, dims))
    iv = arith::AddIOp::create(b, loc, d.lb,
                               arith::MulIOp::create(b, loc, iv, d.step));
  return ivs;
}

/// Clones the body of `from` (without terminator) at `b`, with `ivs` for its
/// induction variables.
void cloneBody(OpBuilder &b, Block *from, ValueRange ivs) {
  IRMapping map;
  map.map(from->getArguments(), ivs);
  for (Operation &op : from->without_terminator())
    b.clone(op, map);
}

/// Rewrites every scf.parallel nested in `root` as a sequential loop nest.
LogicalResult sequentialize(Operation *root) {
  SmallVector<scf::ParallelOp> loops;
  root->walk([&](scf::ParallelOp p) { loops.push_back(p); }); // inner first
  for (scf::ParallelOp p : loops) {
    if (p.getNumResults())
      return p.emitOpError("with reductions is not supported on the GPU");
    OpBuilder b(p);
    SmallVector<Value> ivs;
    for (auto [lb, ub, step] :
         llvm::zip(p.getLowerBound(), p.getUpperBound(), p.getStep())) {
      auto loop = scf::ForOp::create(b, p.getLoc(), lb, ub, step);
      ivs.push_back(loop.getInductionVar());
      b.setInsertionPoint(loop.getBody()->getTerminator());
    }
    cloneBody(b, p.getBody(), ivs);
    p.erase();
  }
  return success();
}

bool containsParallel(Operation *op) {
  return op
      ->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Whether `op` (or anything nested in it) may write or free memory.
bool mayWrite(Operation *op) {
  bool writes = false;
  op->walk([&](Operation *nested) {
    if (nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto iface = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!iface) {
      writes = true;
      return WalkResult::interrupt();
    }
    if (iface.hasEffect<MemoryEffects::Write>() ||
        iface.hasEffect<MemoryEffects::Free>()) {
      writes = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return writes;
}

/// Spreads the work of one thread block (`block`, run by every thread) over
/// its threads.
LogicalResult distribute(Block &block, Value tid, Value threads) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  for (Operation *op : ops) {
    Location loc = op->getLoc();
    if (auto p = dyn_cast<scf::ParallelOp>(op)) {
      if (p.getNumResults())
        return p.emitOpError("with reductions is not supported on the GPU");
      OpBuilder b(p);
      gpu::BarrierOp::create(b, loc);
      SmallVector<Dim> dims = loopDims(b, p);
      auto loop = scf::ForOp::create(b, loc, tid, product(b, loc, dims),
                                     threads);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      cloneBody(b, p.getBody(),
                delinearize(b, loc, loop.getInductionVar(), dims));
      b.setInsertionPointAfter(loop);
      gpu::BarrierOp::create(b, loc);
      p.erase();
      if (failed(sequentialize(loop)))
        return failure();
      continue;
    }
    if (op->getNumRegions() && containsParallel(op)) {
      // Control flow around thread-level loops: uniform, run by all threads.
      for (Region &region : op->getRegions())
        for (Block &nested : region)
          if (failed(distribute(nested, tid, threads)))
            return failure();
      continue;
    }
    if (!mayWrite(op))
      continue;
    if (op->getNumResults())
      return op->emitOpError("writes memory and has results inside a tile; "
                             "not supported on the GPU");
    // A write that is not a loop: thread 0 does it.
    OpBuilder b(op);
    gpu::BarrierOp::create(b, loc);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, zero);
    auto guard = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    op->moveBefore(guard.thenBlock()->getTerminator());
    b.setInsertionPointAfter(guard);
    gpu::BarrierOp::create(b, loc);
  }
  return success();
}

/// A tile loop: one thread block per iteration.
LogicalResult launchTiles(scf::ForallOp forall, int64_t threads) {
  if (forall.getNumResults())
    return forall.emitOpError("on tensors cannot become a GPU kernel");
  Location loc = forall.getLoc();
  OpBuilder b(forall);
  SmallVector<Dim> dims =
      loopDims(b, loc, forall.getMixedLowerBound(),
               forall.getMixedUpperBound(), forall.getMixedStep());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value blockSize = arith::ConstantIndexOp::create(b, loc, threads);
  auto launch = gpu::LaunchOp::create(b, loc, product(b, loc, dims), one, one,
                                      blockSize, one, one);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  cloneBody(b, forall.getBody(),
            delinearize(b, loc, launch.getBlockIds().x, dims));
  gpu::TerminatorOp::create(b, loc);
  forall.erase();
  b.setInsertionPointToStart(&body);
  Value inner = arith::ConstantIndexOp::create(b, loc, threads);
  return distribute(body, launch.getThreadIds().x, inner);
}

/// An elementwise loop nest: one thread per iteration.
LogicalResult launchElements(scf::ParallelOp p, int64_t threads) {
  if (p.getNumResults())
    return p.emitOpError("with reductions is not supported on the GPU");
  Location loc = p.getLoc();
  OpBuilder b(p);
  SmallVector<Dim> dims = loopDims(b, p);
  Value total = product(b, loc, dims);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value blockSize = arith::ConstantIndexOp::create(b, loc, threads);
  auto launch = gpu::LaunchOp::create(b, loc, ceilDiv(b, loc, total, blockSize),
                                      one, one, blockSize, one, one);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  Value inner = arith::ConstantIndexOp::create(b, loc, threads);
  Value lin = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, inner),
      launch.getThreadIds().x);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lin, total);
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPoint(guard.thenBlock()->getTerminator());
  cloneBody(b, p.getBody(), delinearize(b, loc, lin, dims));
  b.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(b, loc);
  p.erase();
  return sequentialize(guard);
}

struct LaunchLoopsPass final
    : mnemo::impl::LaunchLoopsPassBase<LaunchLoopsPass> {
  using LaunchLoopsPassBase::LaunchLoopsPassBase;

  void runOnOperation() override {
    SmallVector<Operation *> roots;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::ForallOp, scf::ParallelOp>(op)) {
        roots.push_back(op);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    for (Operation *op : roots) {
      LogicalResult done =
          isa<scf::ForallOp>(op)
              ? launchTiles(cast<scf::ForallOp>(op), blockThreads)
              : launchElements(cast<scf::ParallelOp>(op), elementThreads);
      if (failed(done))
        return signalPassFailure();
    }
  }
};

} // namespace

//===- OutlineParallel.cpp - parallel loops as runtime dispatches -*- C++ -*-=//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The runtime runs a kernel's parallel loops on its threads through the code
// object's hook table (`mnemo_hooks`, runtime/schema/artifact.fbs):
//
//   parallel_for(body, ctx, n, cost)   runs body(ctx, b, e) over [0, n)
//
// `mnemo-cpu-outline-parallel` (on buffers) moves the body of each
// outermost scf.forall / scf.parallel without reductions into a function
// over a range of linearized iterations, and calls a dispatch declaration
// in its place; `mnemo-cpu-add-runtime-hooks` (RuntimeHooks.cpp) defines
// the dispatch after the conversion to the LLVM dialect. Iterations are
// independent, so results do not depend on how the runtime splits the
// range.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_OUTLINEPARALLELPASS
#include "mnemo/Target/CPU/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// Work of one execution of `region`, in ops, counting nested loops with
/// static trip counts (others as 8 iterations).
int64_t estimateCost(Region &region) {
  int64_t cost = 0;
  for (Block &block : region)
    for (Operation &op : block) {
      int64_t inner = 0;
      for (Region &r : op.getRegions())
        inner += estimateCost(r);
      auto tripCount = [](Value lbv, Value ubv, Value stv) -> int64_t {
        std::optional<int64_t> lb = getConstantIntValue(lbv),
                               ub = getConstantIntValue(ubv),
                               st = getConstantIntValue(stv);
        return lb && ub && st && *st > 0 ? llvm::divideCeil(*ub - *lb, *st)
                                         : 8;
      };
      int64_t trips = 1;
      if (auto loop = dyn_cast<scf::ForOp>(op))
        trips = tripCount(loop.getLowerBound(), loop.getUpperBound(),
                          loop.getStep());
      if (auto loop = dyn_cast<scf::ParallelOp>(op))
        for (auto [lb, ub, st] : llvm::zip(loop.getLowerBound(),
                                           loop.getUpperBound(),
                                           loop.getStep()))
          trips *= tripCount(lb, ub, st);
      cost = std::min<int64_t>(cost + 1 + trips * inner, int64_t(1) << 40);
    }
  return cost;
}

/// The loop's dims: lower bounds, steps and trip counts, as index values.
struct LoopDims {
  SmallVector<Value> lbs, steps, trips;
  SmallVector<Value> ivs;
};

LoopDims describe(OpBuilder &b, Location loc, Operation *loop) {
  LoopDims d;
  SmallVector<OpFoldResult> lbs, ubs, steps;
  if (auto forall = dyn_cast<scf::ForallOp>(loop)) {
    lbs = forall.getMixedLowerBound();
    ubs = forall.getMixedUpperBound();
    steps = forall.getMixedStep();
    d.ivs = llvm::to_vector(forall.getInductionVars());
  } else {
    auto parallel = cast<scf::ParallelOp>(loop);
    lbs = getAsOpFoldResult(parallel.getLowerBound());
    ubs = getAsOpFoldResult(parallel.getUpperBound());
    steps = getAsOpFoldResult(parallel.getStep());
    d.ivs = llvm::to_vector(parallel.getInductionVars());
  }
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    Value l = getValueOrCreateConstantIndexOp(b, loc, lb);
    Value u = getValueOrCreateConstantIndexOp(b, loc, ub);
    Value s = getValueOrCreateConstantIndexOp(b, loc, step);
    Value span = arith::SubIOp::create(b, loc, u, l);
    // An empty dim (upper bound below the lower one) has no iterations.
    Value trips = arith::MaxSIOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::CeilDivSIOp::create(b, loc, span, s));
    d.lbs.push_back(l);
    d.steps.push_back(s);
    d.trips.push_back(trips);
  }
  return d;
}

struct OutlineParallelPass final
    : mnemo::impl::OutlineParallelPassBase<OutlineParallelPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> loops;
    for (auto func : module.getOps<func::FuncOp>()) {
      func.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
          // A one-dim loop is an elementwise op's only row: it stays a
          // loop, vectorized.
          if (parallel.getNumReductions() == 0 && parallel.getNumLoops() > 1)
            loops.push_back(op);
          return WalkResult::skip();
        }
        if (auto forall = dyn_cast<scf::ForallOp>(op)) {
          if (forall.getNumResults() == 0)
            loops.push_back(op);
          return WalkResult::skip();
        }
        return WalkResult::advance();
      });
    }
    unsigned counter = 0;
    for (Operation *loop : loops)
      outline(loop, counter++);
  }

  void outline(Operation *loop, unsigned id) {
    ModuleOp module = getOperation();
    auto func = loop->getParentOfType<func::FuncOp>();
    Location loc = loop->getLoc();
    MLIRContext *ctx = &getContext();
    OpBuilder b(loop);
    // The innermost dim of an scf.parallel (an elementwise op's row) stays
    // a loop inside each iteration, where it is vectorized.
    if (auto parallel = dyn_cast<scf::ParallelOp>(loop)) {
      loop = splitInnermost(b, parallel);
      b.setInsertionPoint(loop);
    }
    LoopDims dims = describe(b, loc, loop);
    Region &region = loop->getRegion(0);
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(region, used);
    // Constants are rebuilt in the body, where they fold; the rest is
    // passed. Globals (packed weights) are passed too, so that the loops of
    // layers that differ only in their weights have identical bodies.
    SmallVector<Value> captured, rebuilt;
    for (Value v : used) {
      Operation *def = v.getDefiningOp();
      if (def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
          def->hasTrait<OpTrait::ConstantLike>())
        rebuilt.push_back(v);
      else
        captured.push_back(v);
    }

    // Arguments shared by the body and the dispatch: the captured values,
    // then lower bounds, steps and trip counts of each dim.
    SmallVector<Value> shared(captured);
    size_t rank = dims.lbs.size();
    shared.append(dims.lbs);
    shared.append(dims.steps);
    shared.append(dims.trips);
    SmallVector<Type> sharedTypes =
        llvm::to_vector(ValueRange(shared).getTypes());
    Type index = b.getIndexType(), i64 = b.getI64Type();

    std::string base = (func.getName() + "_parallel" + llvm::Twine(id)).str();
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    // The body: for i in [begin, end): delinearize, run the iteration.
    SmallVector<Type> bodyTypes = sharedTypes;
    bodyTypes.append({index, index});
    auto body = func::FuncOp::create(mb, loc, base + "_body",
                                     FunctionType::get(ctx, bodyTypes, {}));
    body.setPrivate();
    // Only its trampoline calls it: LLVM may inline it there.
    body->setAttr("llvm.linkage", LLVM::LinkageAttr::get(
                                      ctx, LLVM::Linkage::Internal));
    Block *entry = body.addEntryBlock();
    OpBuilder bb = OpBuilder::atBlockEnd(entry);
    IRMapping mapping;
    for (Value v : rebuilt)
      mapping.map(v, bb.clone(*v.getDefiningOp())->getResult(0));
    Value begin = entry->getArgument(bodyTypes.size() - 2);
    Value end = entry->getArgument(bodyTypes.size() - 1);
    Value one = arith::ConstantIndexOp::create(bb, loc, 1);
    auto iter = scf::ForOp::create(bb, loc, begin, end, one);
    func::ReturnOp::create(bb, loc);
    OpBuilder ib = OpBuilder::atBlockBegin(iter.getBody());
    for (auto [i, v] : llvm::enumerate(captured))
      mapping.map(v, entry->getArgument(i));
    size_t firstDim = captured.size();
    Value rest = iter.getInductionVar();
    for (size_t d = rank; d-- > 0;) {
      Value lb = entry->getArgument(firstDim + d);
      Value step = entry->getArgument(firstDim + rank + d);
      Value trips = entry->getArgument(firstDim + 2 * rank + d);
      Value at = rest;
      if (d > 0) {
        at = arith::RemUIOp::create(ib, loc, rest, trips);
        rest = arith::DivUIOp::create(ib, loc, rest, trips);
      }
      Value iv = arith::AddIOp::create(
          ib, loc, lb, arith::MulIOp::create(ib, loc, at, step));
      mapping.map(dims.ivs[d], iv);
    }
    for (Operation &op : region.front().without_terminator())
      ib.clone(op, mapping);

    // The dispatch declaration, defined after the LLVM conversion.
    SmallVector<Type> dispatchTypes = sharedTypes;
    dispatchTypes.append({index, i64});
    auto dispatch = func::FuncOp::create(
        mb, loc, base, FunctionType::get(ctx, dispatchTypes, {}));
    dispatch.setPrivate();
    dispatch->setAttr(mnemo::kParallelBodyAttr,
                      FlatSymbolRefAttr::get(body.getSymNameAttr()));

    Value n = arith::ConstantIndexOp::create(b, loc, 1);
    for (Value trips : dims.trips)
      n = arith::MulIOp::create(b, loc, n, trips);
    SmallVector<Value> operands = shared;
    operands.push_back(n);
    operands.push_back(arith::ConstantIntOp::create(
        b, loc, i64, estimateCost(region)));
    func::CallOp::create(b, loc, dispatch, operands);
    loop->erase();
  }

  /// scf.parallel (i0, ..., in) as scf.parallel (i0, ..., in-1) around
  /// scf.parallel (in); the outer loop is returned (the loop itself when it
  /// has one dim).
  static Operation *splitInnermost(OpBuilder &b, scf::ParallelOp loop) {
    unsigned rank = loop.getNumLoops();
    if (rank < 2)
      return loop;
    Location loc = loop.getLoc();
    auto outer = scf::ParallelOp::create(
        b, loc, loop.getLowerBound().drop_back(),
        loop.getUpperBound().drop_back(), loop.getStep().drop_back());
    OpBuilder ob = OpBuilder::atBlockBegin(outer.getBody());
    auto inner = scf::ParallelOp::create(
        ob, loc, loop.getLowerBound().take_back(),
        loop.getUpperBound().take_back(), loop.getStep().take_back());
    IRMapping mapping;
    for (unsigned d = 0; d + 1 < rank; ++d)
      mapping.map(loop.getInductionVars()[d], outer.getInductionVars()[d]);
    mapping.map(loop.getInductionVars().back(),
                inner.getInductionVars().front());
    OpBuilder nb = OpBuilder::atBlockBegin(inner.getBody());
    for (Operation &op : loop.getBody()->without_terminator())
      nb.clone(op, mapping);
    loop.erase();
    return outer;
  }
};

} // namespace

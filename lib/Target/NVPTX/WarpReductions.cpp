//===- WarpReductions.cpp - reductions over the lanes of a warp -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo-gpu-warp-reductions: a linalg op that reduces (a norm's sum of
// squares, a softmax's max and sum, a per-head product on the CUDA cores,
// an f32 linear layer) becomes its own gpu.launch in which the lanes of a
// warp share each output's reduction, instead of one thread walking it
// alone with a load and a store of the output at every step.
//
// A warp holds G = 32 / S outputs and splits each one's reduction into S
// slices: lane l takes output l % G and the reduction indices
// r = l / G, l / G + S, ... (the reduction loops linearized), accumulated
// in a register from the combiner's neutral element; the S partials meet
// through log2(S) xor shuffles, and the lane of slice 0 combines the sum
// with the output's initial value and stores it. S follows the operand
// the generic reads most (of most elements known at compile time, then
// indexed by most loops):
//  - its last dimension is the innermost reduction loop (a row's norm, a
//    weight stored [out, in]): S = 32, one output a warp, so the lanes
//    read consecutive elements;
//  - its last dimension is the innermost parallel loop (a weight stored
//    [in, out]): G outputs fill one 32-byte sector (8 of f32), so the
//    lanes again read whole sectors, and the rest of the warp splits the
//    reduction.
// Blocks are 8 warps. The reduction is reassociated: the result may
// differ from the sequential loop's in the last bits of a float.
//
// An output whose every element holds one known constant when the
// reduction starts (the last op in its block to touch the buffer is a
// linalg.fill of a constant into it, or a linalg.copy into it of a buffer
// so filled) is combined with that constant instead of a load, and the
// fill or copy, whose values the reduction then overwrites unread, is
// erased: a bufferized rms_norm's zero-filled sums (the fill shared by
// every layer's norm, a copy for each but the last) were two kernels of
// one thread an element beside the reduction.
//
// A linalg op (a generic, or a named one such as linalg.reduce) qualifies
// when it writes one buffer through a map that names every parallel loop;
// no input is that buffer, and its body neither writes nor reads it; every
// reduction loop follows every parallel one
// (mnemo-gpu-reductions-innermost); its body folds the output with one
// commutative arith combiner that has a neutral element (addf, mulf,
// maxnumf, minnumf, maximumf, minimumf, and the integer ones) over a 32-
// or 64-bit value that nothing else reads; the reduction has at least 32
// iterations (or a dynamic count); and it is not inside a tile loop (those
// are spread over a block by mnemo-gpu-launch-loops).
//
//===----------------------------------------------------------------------===//

#include "LoopIndices.h"

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_WARPREDUCTIONSPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace {

constexpr int64_t kWarp = 32;
constexpr int64_t kWarpsPerBlock = 8;
// Shorter reductions stay one thread an output.
constexpr int64_t kMinReduction = 32;
constexpr int64_t kSectorBits = 256;

/// A generic's reduction: `combiner` folds the output's block argument
/// (operand `outOperand`) with a value computed from the inputs.
struct Reduction {
  Operation *combiner;
  unsigned outOperand;
};

std::optional<Reduction> matchReduction(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return std::nullopt;
  Block *body = op.getBlock();
  BlockArgument out = body->getArguments().back();
  if (!out.hasOneUse())
    return std::nullopt;
  Operation *combiner = *out.getUsers().begin();
  Operation *yield = body->getTerminator();
  if (combiner->getNumOperands() != 2 || combiner->getNumResults() != 1 ||
      combiner->getBlock() != body ||
      yield->getOperand(0) != combiner->getResult(0) ||
      !combiner->getResult(0).hasOneUse() ||
      !combiner->hasTrait<OpTrait::IsCommutative>() ||
      !arith::getNeutralElement(combiner))
    return std::nullopt;
  unsigned outOperand = combiner->getOperand(0) == out ? 0 : 1;
  if (combiner->getOperand(1 - outOperand) == out)
    return std::nullopt;
  Type type = out.getType();
  if (!type.isF32() && !type.isF64() && !type.isInteger(32) &&
      !type.isInteger(64))
    return std::nullopt;
  // Each output is written once, by one lane: the output map names every
  // parallel loop (a projected permutation of them).
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outMap.isProjectedPermutation() ||
      outMap.getNumResults() != op.getNumParallelLoops())
    return std::nullopt;
  // The body runs in another order on many threads: it may read (a gather)
  // but not write, and no input nor read may be the output's buffer.
  Value initBuffer = init->get();
  for (OpOperand *in : op.getDpsInputOperands())
    if (in->get() == initBuffer)
      return std::nullopt;
  for (Operation &inner : body->without_terminator()) {
    if (isMemoryEffectFree(&inner))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects || !effects.onlyHasEffect<MemoryEffects::Read>() ||
        llvm::is_contained(inner.getOperands(), initBuffer))
      return std::nullopt;
  }
  return Reduction{combiner, outOperand};
}

/// Parallel loops first, then at least one reduction.
bool reductionsInnermost(linalg::LinalgOp op, unsigned &numParallel) {
  SmallVector<utils::IteratorType> types = op.getIteratorTypesArray();
  numParallel = 0;
  while (numParallel < types.size() &&
         linalg::isParallelIterator(types[numParallel]))
    ++numParallel;
  if (numParallel == types.size())
    return false;
  return llvm::all_of(llvm::drop_begin(types, numParallel),
                      linalg::isReductionIterator);
}

/// Slices a warp splits each output's reduction into.
int64_t slicesPerOutput(linalg::LinalgOp op, unsigned numParallel) {
  // The operand of most elements known at compile time (a weight beside a
  // decode step's rows), then indexed by most loops.
  OpOperand *main = nullptr;
  std::pair<int64_t, unsigned> mainKey;
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(in->get().getType());
    if (!type || type.getRank() == 0)
      continue;
    AffineMap map = op.getMatchingIndexingMap(in);
    std::pair<int64_t, unsigned> key{1, 0};
    for (int64_t size : type.getShape())
      key.first *= ShapedType::isDynamic(size) ? 1 : size;
    for (unsigned d = 0; d < map.getNumDims(); ++d)
      key.second += map.isFunctionOfDim(d);
    if (!main || key > mainKey) {
      main = in;
      mainKey = key;
    }
  }
  if (!main)
    return kWarp;
  AffineMap map = op.getMatchingIndexingMap(main);
  auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!last || last.getPosition() + 1 != numParallel)
    return kWarp;
  Type element = cast<MemRefType>(main->get().getType()).getElementType();
  if (!element.isIntOrFloat())
    return kWarp;
  // A power of two: the slices of one output are lanes an xor apart.
  uint64_t outputs = std::clamp<uint64_t>(
      kSectorBits / element.getIntOrFloatBitWidth(), 1, kWarp);
  return kWarp / static_cast<int64_t>(llvm::bit_floor(outputs));
}

/// The combiner's neutral element; for maxnumf and minnumf -inf and +inf
/// (the largest finite values under `ninf`) rather than upstream's NaN,
/// which a combiner with `nnan` may not see. maxnum and minnum skip NaN,
/// so the result is the same.
TypedAttr neutralElement(Operation *combiner) {
  bool max = isa<arith::MaxNumFOp>(combiner);
  if (!max && !isa<arith::MinNumFOp>(combiner))
    return *arith::getNeutralElement(combiner);
  auto type = cast<FloatType>(combiner->getResult(0).getType());
  bool finite = bitEnumContainsAny(cast<arith::ArithFastMathInterface>(combiner)
                                       .getFastMathFlagsAttr()
                                       .getValue(),
                                   arith::FastMathFlags::ninf);
  const llvm::fltSemantics &sem = type.getFloatSemantics();
  return FloatAttr::get(type, finite ? APFloat::getLargest(sem, max)
                                     : APFloat::getInf(sem, max));
}

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The element of `operand` that loop indices `ivs` select.
SmallVector<Value> operandIndices(OpBuilder &b, Location loc,
                                  linalg::LinalgOp op, OpOperand *operand,
                                  ValueRange ivs) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  SmallVector<Value> indices;
  for (unsigned i = 0; i < map.getNumResults(); ++i)
    indices.push_back(
        affine::AffineApplyOp::create(b, loc, map.getSubMap({i}), ivs));
  return indices;
}

/// `combiner` over `acc` (in the output's place) and `value`. The sums are
/// reassociated, so a partial may overflow where the sequential order did
/// not: the clone promises no wrap-around (nsw, nuw) and no infinity
/// (ninf) the original's order may have kept.
Value combine(OpBuilder &b, const Reduction &red, Value acc, Value value) {
  IRMapping map;
  Operation *c = b.clone(*red.combiner, map);
  c->setOperand(red.outOperand, acc);
  c->setOperand(1 - red.outOperand, value);
  if (auto wrap = dyn_cast<arith::ArithIntegerOverflowFlagsInterface>(c))
    c->setAttr(wrap.getIntegerOverflowAttrName(),
               arith::IntegerOverflowFlagsAttr::get(
                   c->getContext(), arith::IntegerOverflowFlags::none));
  if (auto fast = dyn_cast<arith::ArithFastMathInterface>(c)) {
    arith::FastMathFlags flags = fast.getFastMathFlagsAttr().getValue();
    c->setAttr(fast.getFastMathAttrName(),
               arith::FastMathFlagsAttr::get(
                   c->getContext(), flags & ~arith::FastMathFlags::ninf));
  }
  return c->getResult(0);
}

/// The allocation (or argument) `buffer` is a view of.
Value rootOf(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewLikeOpInterface>())
    buffer = view.getViewSource();
  return buffer;
}

/// Whether `op` (or an op inside it) uses a view of the allocation `root`.
bool touches(Operation *op, Value root) {
  WalkResult r = op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (isa<MemRefType>(v.getType()) && rootOf(v) == root)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// What every element of `buffer` holds when `user` runs, where that is
/// one constant: the last op before `user` in its block to touch the
/// buffer's allocation fills `buffer` with it, or copies into `buffer` a
/// buffer so filled. `writer` is that fill or copy, whose values `user`
/// is the only one to see.
TypedAttr knownValue(Operation *user, Value buffer, Operation *&writer) {
  Value root = rootOf(buffer);
  // An argument may alias another one.
  if (!root.getDefiningOp<memref::AllocOp>())
    return {};
  for (Operation *op = user->getPrevNode(); op; op = op->getPrevNode()) {
    if (!touches(op, root))
      continue;
    writer = op;
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      TypedAttr value;
      if (!fill.hasPureBufferSemantics() ||
          fill.getDpsInitOperand(0)->get() != buffer ||
          !matchPattern(fill.getInputs()[0], m_Constant(&value)) ||
          value.getType() !=
              cast<MemRefType>(buffer.getType()).getElementType())
        return {};
      return value;
    }
    auto copy = dyn_cast<linalg::CopyOp>(op);
    if (!copy || !copy.hasPureBufferSemantics() ||
        copy.getDpsInitOperand(0)->get() != buffer)
      return {};
    Operation *ignored;
    return knownValue(copy, copy.getInputs()[0], ignored);
  }
  return {};
}

void rewrite(linalg::LinalgOp op, const Reduction &red, unsigned numParallel,
             int64_t slices, TypedAttr knownInit) {
  Location loc = op.getLoc();
  OpBuilder b(op);
  SmallVector<Value> sizes;
  for (Range r : op.createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
  ArrayRef<Value> parallelSizes = ArrayRef(sizes).take_front(numParallel);
  ArrayRef<Value> reductionSizes = ArrayRef(sizes).drop_front(numParallel);
  int64_t group = kWarp / slices;
  Value outputs = productOf(b, loc, parallelSizes);
  Value warps =
      arith::CeilDivSIOp::create(b, loc, outputs, cIndex(b, loc, group));
  Value blocks =
      arith::CeilDivSIOp::create(b, loc, warps, cIndex(b, loc, kWarpsPerBlock));
  Value one = cIndex(b, loc, 1);
  auto launch =
      gpu::LaunchOp::create(b, loc, blocks, one, one,
                            cIndex(b, loc, kWarp * kWarpsPerBlock), one, one);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);

  Value tid = launch.getThreadIds().x;
  Value lane = arith::RemUIOp::create(b, loc, tid, cIndex(b, loc, kWarp));
  Value warp = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                            cIndex(b, loc, kWarpsPerBlock)),
      arith::DivUIOp::create(b, loc, tid, cIndex(b, loc, kWarp)));
  Value slice = arith::DivUIOp::create(b, loc, lane, cIndex(b, loc, group));
  Value output = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, warp, cIndex(b, loc, group)),
      arith::RemUIOp::create(b, loc, lane, cIndex(b, loc, group)));
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, output, outputs);
  // Lanes past the last output still join the shuffles, with no work.
  Value zero = cIndex(b, loc, 0);
  Value length = arith::SelectOp::create(
      b, loc, inRange, productOf(b, loc, reductionSizes), zero);
  SmallVector<Value> parallelIvs = delinearizeIndex(
      b, loc, arith::SelectOp::create(b, loc, inRange, output, zero),
      parallelSizes);

  Value neutral =
      arith::ConstantOp::create(b, loc, neutralElement(red.combiner));
  auto loop = scf::ForOp::create(b, loc, slice, length, cIndex(b, loc, slices),
                                 ValueRange{neutral});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> ivs(parallelIvs);
    llvm::append_range(
        ivs, delinearizeIndex(b, loc, loop.getInductionVar(), reductionSizes));
    IRMapping map;
    for (OpOperand *in : op.getDpsInputOperands()) {
      Value arg = op.getMatchingBlockArgument(in);
      if (!isa<MemRefType>(in->get().getType())) {
        map.map(arg, in->get());
        continue;
      }
      if (arg.use_empty())
        continue;
      map.map(arg, memref::LoadOp::create(b, loc, in->get(),
                                          operandIndices(b, loc, op, in, ivs)));
    }
    for (Operation &inner : op.getBlock()->without_terminator()) {
      if (&inner == red.combiner)
        continue;
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        map.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(inner, map);
    }
    Value value =
        map.lookupOrDefault(red.combiner->getOperand(1 - red.outOperand));
    scf::YieldOp::create(b, loc,
                         combine(b, red, loop.getRegionIterArgs()[0], value));
  }

  Value acc = loop.getResult(0);
  for (int64_t offset = kWarp / 2; offset >= group; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, loc, acc, offset, kWarp,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    acc = combine(b, red, acc, other);
  }

  Value writer = arith::AndIOp::create(
      b, loc, inRange,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slice, zero));
  auto store = scf::IfOp::create(b, loc, writer, /*withElseRegion=*/false);
  b.setInsertionPoint(store.thenBlock()->getTerminator());
  OpOperand *init = op.getDpsInitOperand(0);
  SmallVector<Value> ivs(parallelIvs);
  ivs.append(reductionSizes.size(), zero);
  SmallVector<Value> at = operandIndices(b, loc, op, init, ivs);
  Value initial = knownInit
                      ? Value(arith::ConstantOp::create(b, loc, knownInit))
                      : Value(memref::LoadOp::create(b, loc, init->get(), at));
  memref::StoreOp::create(b, loc, combine(b, red, initial, acc), init->get(),
                          at);
  op->erase();
}

bool insideKernelOrTile(Operation *op) {
  return op->getParentOfType<scf::ForallOp>() ||
         op->getParentOfType<scf::ParallelOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

struct WarpReductionsPass final
    : mnemo::impl::WarpReductionsPassBase<WarpReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      if (insideKernelOrTile(op))
        continue;
      unsigned numParallel;
      if (!reductionsInnermost(op, numParallel))
        continue;
      std::optional<Reduction> red = matchReduction(op);
      if (!red)
        continue;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      int64_t length = 1;
      bool dynamic = false;
      for (int64_t r : ArrayRef(ranges).drop_front(numParallel)) {
        dynamic |= ShapedType::isDynamic(r);
        if (!ShapedType::isDynamic(r))
          length *= r;
      }
      if (!dynamic && length < kMinReduction)
        continue;
      // Every output element is written (its map names every parallel
      // loop), so a constant's fill or copy into the output is dead once
      // the reduction starts from the constant.
      Operation *writer = nullptr;
      TypedAttr knownInit =
          knownValue(op, op.getDpsInitOperand(0)->get(), writer);
      rewrite(op, *red, numParallel, slicesPerOutput(op, numParallel),
              knownInit);
      if (knownInit)
        writer->erase();
    }
  }
};

} // namespace

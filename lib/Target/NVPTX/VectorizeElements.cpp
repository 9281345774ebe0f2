//===- VectorizeElements.cpp - a thread per vector of elements -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An elementwise loop nest becomes a kernel of one thread per iteration
// (mnemo-gpu-launch-loops): a residual add, a type conversion or a cache
// write then moves 2 or 4 bytes a thread in scalar loads and stores. Where
// the innermost loop only indexes the contiguous last dimension of what
// it loads and stores, this pass steps it by V elements (16 bytes of the
// widest type) and loads and stores V at a time, so that each thread
// moves whole 16-byte sectors' worth in single vector instructions.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_VECTORIZEELEMENTSPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// Bytes of the widest vector access (one 128-bit load or store).
constexpr int64_t kVectorBytes = 16;

/// The innermost induction variable of `p` and what depends on it.
struct Analysis {
  Value iv;
  llvm::SmallPtrSet<Value, 16> varying;
  /// Memrefs read or written along the innermost dimension.
  SmallVector<MemRefType> accessed;
};

/// Whether `indices` address element `iv` of the last dimension, the others
/// being the same for every value of `iv`.
bool indexesLastDim(const Analysis &a, ValueRange indices) {
  if (indices.empty() || indices.back() != a.iv)
    return false;
  return llvm::none_of(indices.drop_back(),
                       [&](Value i) { return a.varying.contains(i); });
}

/// Elements of a power-of-two number of bytes, as vectors pack them.
bool isStoredElement(Type t) {
  return (isa<FloatType>(t) || isa<IntegerType>(t)) &&
         t.getIntOrFloatBitWidth() >= 8 &&
         llvm::isPowerOf2_32(t.getIntOrFloatBitWidth());
}

/// Whether `m` is global memory whose type tells its layout: not a
/// `memref.view`, whose byte shift its type does not show (shared memory's
/// tiles are carved so).
bool isGlobal(Value m) {
  while (true) {
    if (cast<MemRefType>(m.getType()).getMemorySpace())
      return false;
    auto view = m.getDefiningOp<ViewLikeOpInterface>();
    if (!view)
      return true;
    if (isa<memref::ViewOp>(view))
      return false;
    m = view.getViewSource();
  }
}

/// Walks the body of `p`: success when every use of its innermost iv is the
/// last index of a load or store (of bytes-sized elements) and every value
/// computed from those loads is an elementwise function of them.
LogicalResult analyze(scf::ParallelOp p, Analysis &a) {
  a.iv = p.getInductionVars().back();
  a.varying.insert(a.iv);
  for (Operation &op : p.getBody()->without_terminator()) {
    bool uses = llvm::any_of(op.getOperands(), [&](Value v) {
      return a.varying.contains(v);
    });
    if (op.getNumRegions()) {
      // Uniform control flow without effects only: a write or an atomic in
      // it would run once for V iterations.
      bool inside = false;
      op.walk([&](Operation *nested) {
        for (Value v : nested->getOperands())
          inside |= a.varying.contains(v);
      });
      if (uses || inside || !isMemoryEffectFree(&op))
        return failure();
      continue;
    }
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (!uses)
        continue;
      if (!indexesLastDim(a, load.getIndices()) ||
          !isStoredElement(load.getType()) || !isGlobal(load.getMemRef()))
        return failure();
      a.accessed.push_back(load.getMemRefType());
      a.varying.insert(load.getResult());
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      // A store of one element for every iteration must index it.
      if (!indexesLastDim(a, store.getIndices()) ||
          !isStoredElement(store.getValueToStore().getType()) ||
          !isGlobal(store.getMemRef()))
        return failure();
      a.accessed.push_back(store.getMemRefType());
      continue;
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || !effects.hasNoEffect())
      return failure();
    if (!uses)
      continue;
    if (!op.hasTrait<OpTrait::Elementwise>() ||
        llvm::any_of(op.getResultTypes(),
                     [](Type t) { return !t.isIntOrFloat(); }) ||
        llvm::any_of(op.getOperandTypes(),
                     [](Type t) { return !t.isIntOrFloat(); }))
      return failure();
    for (Value r : op.getResults())
      a.varying.insert(r);
  }
  return success();
}

/// Whether each run of `width` elements the loop accesses in `t` (from an
/// index of the last dimension that is a multiple of `width`) starts a
/// multiple of `width` elements from the buffer's base, which the runtime
/// aligns to 16 bytes.
bool alignedRows(MemRefType t, int64_t width) {
  if (t.getLayout().isIdentity()) {
    // Row-major: each stride is the product of the sizes after it, which
    // the static ones among them divide.
    int64_t known = 1;
    for (int64_t i = t.getRank() - 1; i > 0; --i) {
      if (!t.isDynamicDim(i))
        known *= t.getDimSize(i);
      if (known % width)
        return false;
    }
    return true;
  }
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(t.getStridesAndOffset(strides, offset)) || strides.empty() ||
      strides.back() != 1 || ShapedType::isDynamic(offset) || offset % width)
    return false;
  return llvm::all_of(ArrayRef(strides).drop_back(), [&](int64_t s) {
    return !ShapedType::isDynamic(s) && s % width == 0;
  });
}

/// Elements a thread takes, or 1: 16 bytes of the widest accessed type,
/// fewer where the innermost count or the buffers' layout asks.
int64_t widthOf(scf::ParallelOp p, const Analysis &a) {
  std::optional<int64_t> lb = getConstantIntValue(p.getLowerBound().back());
  std::optional<int64_t> ub = getConstantIntValue(p.getUpperBound().back());
  std::optional<int64_t> step = getConstantIntValue(p.getStep().back());
  if (a.accessed.empty() || lb != 0 || step != 1 || !ub)
    return 1;
  int64_t widest = 1;
  for (MemRefType t : a.accessed)
    widest = std::max<int64_t>(widest, t.getElementTypeBitWidth() / 8);
  int64_t width = kVectorBytes / widest;
  while (width > 1 &&
         (*ub % width || !llvm::all_of(a.accessed, [&](MemRefType t) {
           return alignedRows(t, width);
         })))
    width /= 2;
  return width;
}

/// `v` as a vector of `width` lanes: itself, or a uniform value broadcast.
Value lanes(OpBuilder &b, Location loc, Value v, int64_t width,
            const Analysis &a, Value original) {
  if (a.varying.contains(original))
    return v;
  return vector::BroadcastOp::create(
      b, loc, VectorType::get({width}, v.getType()), v);
}

/// Rebuilds `p` with its innermost step `width`, loads and stores of
/// `width` elements and the computations between them on vectors (arith
/// ops as vector ops, others lane by lane).
void vectorize(scf::ParallelOp p, const Analysis &a, int64_t width) {
  OpBuilder b(p);
  Location loc = p.getLoc();
  SmallVector<Value> steps(p.getStep());
  steps.back() = arith::ConstantIndexOp::create(b, loc, width);
  auto wide = scf::ParallelOp::create(b, loc, p.getLowerBound(),
                                      p.getUpperBound(), steps);
  IRMapping map;
  map.map(p.getInductionVars(), wide.getInductionVars());
  b.setInsertionPointToStart(wide.getBody());
  auto vectorOf = [&](Type t) { return VectorType::get({width}, t); };
  auto alignment = [&](MemRefType t) {
    return llvm::MaybeAlign(width * t.getElementTypeBitWidth() / 8);
  };
  for (Operation &op : p.getBody()->without_terminator()) {
    auto operand = [&](Value v) { return map.lookupOrDefault(v); };
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && a.varying.contains(load.getResult())) {
      SmallVector<Value> indices =
          llvm::map_to_vector(load.getIndices(), operand);
      map.map(load.getResult(),
              vector::LoadOp::create(b, loc, vectorOf(load.getType()),
                                     operand(load.getMemRef()), indices,
                                     /*nontemporal=*/false,
                                     alignment(load.getMemRefType())));
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      SmallVector<Value> indices =
          llvm::map_to_vector(store.getIndices(), operand);
      Value v = store.getValueToStore();
      vector::StoreOp::create(b, loc, lanes(b, loc, operand(v), width, a, v),
                              operand(store.getMemRef()), indices,
                              /*nontemporal=*/false,
                              alignment(store.getMemRefType()));
      continue;
    }
    if (llvm::none_of(op.getResults(),
                      [&](Value r) { return a.varying.contains(r); })) {
      b.clone(op, map);
      continue;
    }
    if (isa<arith::ArithDialect>(op.getDialect())) {
      OperationState state(op.getLoc(), op.getName());
      for (Value v : op.getOperands())
        state.addOperands(lanes(b, loc, operand(v), width, a, v));
      for (Type t : op.getResultTypes())
        state.addTypes(vectorOf(t));
      state.addAttributes(op.getAttrs());
      Operation *vop = b.create(state);
      map.map(op.getResults(), vop->getResults());
      continue;
    }
    // Lane by lane (math functions, which lower to scalar intrinsics).
    SmallVector<SmallVector<Value>> perLane(op.getNumResults());
    for (int64_t lane = 0; lane < width; ++lane) {
      IRMapping laneMap;
      for (Value v : op.getOperands())
        laneMap.map(v, a.varying.contains(v)
                           ? Value(vector::ExtractOp::create(b, loc,
                                                             operand(v), lane))
                           : operand(v));
      Operation *scalar = b.clone(op, laneMap);
      for (auto [i, r] : llvm::enumerate(scalar->getResults()))
        perLane[i].push_back(r);
    }
    for (auto [i, r] : llvm::enumerate(op.getResults()))
      map.map(r, vector::FromElementsOp::create(b, loc, vectorOf(r.getType()),
                                                perLane[i]));
  }
  p.erase();
}

struct VectorizeElementsPass final
    : mnemo::impl::VectorizeElementsPassBase<VectorizeElementsPass> {
  void runOnOperation() override {
    // The loop nests mnemo-gpu-launch-loops gives a thread an iteration
    // of: outermost ones, and those a tile loop spreads over its block.
    SmallVector<scf::ParallelOp> roots;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto p = dyn_cast<scf::ParallelOp>(op)) {
        roots.push_back(p);
        return WalkResult::skip();
      }
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      return WalkResult::advance();
    });
    for (scf::ParallelOp p : roots) {
      Analysis a;
      if (p.getNumResults() || failed(analyze(p, a)))
        continue;
      if (int64_t width = widthOf(p, a); width > 1)
        vectorize(p, a, width);
    }
  }
};

} // namespace

//===- AttentionCombine.cpp - the split-KV combine kernel -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// With split-KV each of a query row's S splits writes a partial output,
// normalized by its own sum, and its log2-sum-exp (AttentionKernel.cpp,
// storeRow). The combine weighs split s by exp2(lse_s - max lse): one block
// per (batch, head, query) row. A thread takes 4 columns (16-byte loads of
// the f32 partials), and G groups of the row's Dv / 4 threads take every
// G-th split, so that a thread waits for about S / G loads in a row rather
// than S; the groups' sums meet in shared memory. The largest log2-sum-exp
// is one load a thread (the splits spread over the block) and a block
// reduction. Splits without keys weigh 0; a row without any key gives 0.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernelEmitter.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace mlir::mnemo::nvptx::attention {

namespace {

/// Output columns a thread takes.
constexpr int64_t kColumns = 4;
/// About how many threads a block has (fewer when the splits are fewer).
constexpr int64_t kThreads = 256;

/// The block's shape: `lanes` threads cover a row's columns, `groups` of
/// them split the splits, `threads` rounds lanes x groups up to whole warps.
struct Shape {
  int64_t lanes, groups, threads;

  explicit Shape(const Problem &p) {
    lanes = p.dv / kColumns;
    groups = std::max<int64_t>(1, kThreads / lanes);
    if (p.splits != ShapedType::kDynamic)
      groups = std::min(groups, p.splits);
    threads = llvm::alignTo(lanes * groups, 32);
  }
  int64_t warps() const { return threads / 32; }
  // Shared f32s: groups 1.. G-1's sums, their weights, the warps' maxima.
  int64_t weightsAt() const { return (groups - 1) * lanes * kColumns; }
  int64_t maximaAt() const { return weightsAt() + groups; }
  int64_t sharedFloats() const { return maximaAt() + warps(); }
};

struct CombineEmitter {
  ImplicitLocOpBuilder &b;
  const Problem &p;
  Shape shape;
  Value splits, shared;
  Value batch, head, query;

  Value idx(int64_t v) { return indexConstant(b, v); }
  Value cf(double v) { return f32Constant(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, y);
  }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
  }
  Value vec(Value v) {
    return vector::BroadcastOp::create(
        b, VectorType::get({kColumns}, b.getF32Type()), v);
  }
  void ifThen(Value cond, function_ref<void()> body) {
    auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(op.thenBlock()->getTerminator());
    body();
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  /// Split `s`'s log2-sum-exp of the row, built by `ib` (a loop's body).
  Value lseAt(ImplicitLocOpBuilder &ib, Value lse, Value s) {
    return memref::LoadOp::create(ib, lse, ValueRange{s, batch, head, query});
  }

  /// The largest log2-sum-exp of the row over all splits (every thread
  /// gets it), 0 when every split is -inf.
  Value rowMax(Value lse, Value tid) {
    auto loop = scf::ForOp::create(
        b, tid, splits, idx(shape.threads), ValueRange{cf(-INFINITY)},
        [&](OpBuilder &ob, Location loc, Value s, ValueRange acc) {
          ImplicitLocOpBuilder ib(loc, ob);
          scf::YieldOp::create(ib, Value(arith::MaximumFOp::create(
                                       ib, acc[0], lseAt(ib, lse, s))));
        });
    Value m = loop.getResult(0);
    for (int32_t offset : {16, 8, 4, 2, 1})
      m = arith::MaximumFOp::create(
          b, m,
          gpu::ShuffleOp::create(b, m, offset, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult());
    Value warp = arith::DivUIOp::create(b, tid, idx(32));
    ifThen(eq(arith::RemUIOp::create(b, tid, idx(32)), idx(0)), [&] {
      memref::StoreOp::create(b, m, shared,
                              add(warp, idx(shape.maximaAt())));
    });
    gpu::BarrierOp::create(b);
    Value mx = memref::LoadOp::create(b, shared, idx(shape.maximaAt()));
    for (int64_t w = 1; w < shape.warps(); ++w)
      mx = arith::MaximumFOp::create(
          b, mx, memref::LoadOp::create(b, shared, idx(shape.maximaAt() + w)));
    Value none =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mx, cf(-INFINITY));
    return arith::SelectOp::create(b, none, cf(0.0), mx);
  }

  void emit(gpu::LaunchOp launch, Value part, Value lse, Value out) {
    shared = dynamicSharedView(b, shape.sharedFloats(), b.getF32Type());
    Value tid = launch.getThreadIds().x;
    Value lane = arith::RemUIOp::create(b, tid, idx(shape.lanes));
    Value group = arith::DivUIOp::create(b, tid, idx(shape.lanes));
    Value col = mul(lane, idx(kColumns));
    Value base = rowMax(lse, tid);

    // This group's splits: group, group + G, ...; threads past the groups
    // (rounding to whole warps) take none.
    Value start = group;
    if (shape.threads > shape.lanes * shape.groups)
      start = arith::SelectOp::create(b, lt(group, idx(shape.groups)), group,
                                      splits);
    auto f32x4 = VectorType::get({kColumns}, b.getF32Type());
    Value zeros = vec(cf(0.0));
    auto sumLoop = scf::ForOp::create(
        b, start, splits, idx(shape.groups), ValueRange{zeros, cf(0.0)},
        [&](OpBuilder &ob, Location loc, Value s, ValueRange acc) {
          ImplicitLocOpBuilder ib(loc, ob);
          Value w = exp2Approx(
              ib, arith::SubFOp::create(ib, lseAt(ib, lse, s), base));
          Value v = vector::LoadOp::create(
              ib, f32x4, part, ValueRange{s, batch, head, query, col},
              /*nontemporal=*/false, llvm::MaybeAlign(16));
          Value ws = vector::BroadcastOp::create(ib, f32x4, w);
          scf::YieldOp::create(
              ib, ValueRange{arith::AddFOp::create(
                                 ib, acc[0], arith::MulFOp::create(ib, ws, v)),
                             arith::AddFOp::create(ib, acc[1], w)});
        });
    Value sum = sumLoop.getResult(0), total = sumLoop.getResult(1);

    // Groups 1 .. G-1 hand their sums to group 0 through shared memory.
    if (shape.groups > 1) {
      Value other = both(arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                               group, idx(0)),
                         lt(group, idx(shape.groups)));
      ifThen(other, [&] {
        Value at = add(mul(add(group, idx(-1)), idx(p.dv)), col);
        vector::StoreOp::create(b, sum, shared, at, /*nontemporal=*/false,
                                llvm::MaybeAlign(16));
        ifThen(eq(lane, idx(0)), [&] {
          memref::StoreOp::create(b, total, shared,
                                  add(group, idx(shape.weightsAt())));
        });
      });
      gpu::BarrierOp::create(b);
    }
    ifThen(eq(group, idx(0)), [&] {
      Value o = sum, t = total;
      for (int64_t g = 1; g < shape.groups; ++g) {
        Value at = add(col, idx((g - 1) * p.dv));
        o = arith::AddFOp::create(
            b, o,
            vector::LoadOp::create(b, f32x4, shared, at,
                                   /*nontemporal=*/false, llvm::MaybeAlign(16)));
        t = arith::AddFOp::create(
            b, t, memref::LoadOp::create(b, shared, idx(shape.weightsAt() + g)));
      }
      Value seen =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, t, cf(0.0));
      o = arith::SelectOp::create(b, seen, arith::DivFOp::create(b, o, vec(t)),
                                  zeros);
      auto elems = VectorType::get({kColumns}, p.elem);
      if (!p.elem.isF32())
        o = arith::TruncFOp::create(b, elems, o);
      vector::StoreOp::create(
          b, o, out, ValueRange{batch, head, query, col},
          /*nontemporal=*/false,
          llvm::MaybeAlign(kColumns * p.elem.getIntOrFloatBitWidth() / 8));
    });
  }
};

} // namespace

void emitCombine(ImplicitLocOpBuilder &b, const Problem &p, const Sizes &n,
                 Value part, Value lse, Value out) {
  Shape shape(p);
  Value gridX;
  if (p.dynamic) {
    Value rows = arith::MulIOp::create(
        b, arith::MulIOp::create(b, n.batch, indexConstant(b, p.hq)), n.sq);
    Value several = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                                          n.splits, indexConstant(b, 1));
    gridX = arith::SelectOp::create(b, several, rows, indexConstant(b, 0));
  }
  auto launch = createKernelLaunch(
      b, "attention_combine", {p.dynamic ? 1 : p.batch * p.hq * p.sq, 1, 1},
      shape.threads, shape.sharedFloats() * 4);
  if (gridX)
    launch.getGridSizeXMutable().assign(gridX);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(launch.getBody().front().getTerminator());
  CombineEmitter e{b, p, shape, p.dynamic ? n.splits : indexConstant(b, p.splits),
                   Value(), Value(), Value(), Value()};
  Value sq = p.dynamic ? n.sq : indexConstant(b, p.sq);
  Value r = launch.getBlockIds().x;
  e.query = arith::RemUIOp::create(b, r, sq);
  r = arith::DivUIOp::create(b, r, sq);
  e.head = arith::RemUIOp::create(b, r, indexConstant(b, p.hq));
  e.batch = arith::DivUIOp::create(b, r, indexConstant(b, p.hq));
  e.emit(launch, part, lse, out);
}

} // namespace mlir::mnemo::nvptx::attention

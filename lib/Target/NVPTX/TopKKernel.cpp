//===- TopKKernel.cpp - mnemo.top_k as a radix select per row ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo-gpu-top-k-kernel: each mnemo.top_k of f32, bf16 or f16 scores
// becomes one kernel, a block of 512 threads a row, that finds the row's
// k-th largest score by a radix select and writes the selected indices in
// ascending order without sorting the row:
//
//  1. every score becomes an unsigned key of the same order (the sign bit
//     flipped, negative numbers' bits inverted; -0 as +0, every NaN the
//     largest key, -inf and entries past the row's length key 0: never
//     selected);
//  2. four passes over the row, one per byte from the top, count the keys
//     that share the bytes found so far in a 256-bin histogram in shared
//     memory (atomic adds); a scan of the bins from the top finds the byte
//     of the k-th largest key. After the fourth, the k-th largest key
//     `thr` is known exactly, with `need`, how many keys equal to it the
//     selection takes, and how many there are;
//  3. a last pass takes, in index order, the keys above `thr` and the
//     first `need` keys equal to it (`lowest_index` ties: the top k under
//     (score, -index)). Positions come from warp ballots and a scan of the
//     ballots' counts, so the indices leave in ascending order; the rest of
//     the row's k entries are -1.
//
// With `introselect` ties, a row whose k-th score ties across the cut
// (more keys equal `thr` than it takes) is the one case where the set
// depends on more than the values: the block's first thread runs the
// reference selection (libstdc++'s introselect, TopKToLoops.cpp) over a
// copy of that row and marks its choice, which the last pass then writes.
// Rows without such a tie never take that path. docs/GPU.md, "Top-k".
//
//===----------------------------------------------------------------------===//

#include "TensorCoreBuilder.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "mnemo/Conversion/MnemoToLinalg.h"
#include "mnemo/Target/NVPTX/Passes.h"

#include <limits>

namespace mlir::mnemo {
#define GEN_PASS_DEF_TOPKKERNELPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace {

constexpr int64_t kThreads = 512;
constexpr int64_t kWarps = kThreads / 32;
// Entries a thread loads before it uses them: a step covers
// kUnroll * kThreads consecutive entries, entry u * kThreads + thread.
constexpr int64_t kUnroll = 8;
constexpr int64_t kBins = 256;
// Shared memory, in i32 words: the histogram, the two ballot-count tables
// of the last pass (kUnroll x kWarps each), the scan's warp totals and the
// state of the select (the key prefix, the keys still to take below it,
// how many keys equal the prefix).
constexpr int64_t kHist = 0;
constexpr int64_t kTables = kHist + kBins;
constexpr int64_t kTableSize = kUnroll * kWarps;
constexpr int64_t kWarpTotals = kTables + 2 * kTableSize;
constexpr int64_t kState = kWarpTotals + kBins / 32;
constexpr int64_t kWords = kState + 3;
static_assert(kTableSize == 4 * 32, "a table is four entries a lane");

/// Emits one top-k kernel's body.
class Emitter {
public:
  Emitter(ImplicitLocOpBuilder &b, mnemo::TopKOp op) : b(b), op(op) {}

  void emit(gpu::LaunchOp launch, Value scores, Value lengths, Value out,
            Value queue[3]);

private:
  Value idx(int64_t v) { return indexConstant(b, v); }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, b.getI32Type(), v);
  }
  Value toIndex(Value v) {
    return arith::IndexCastUIOp::create(b, b.getIndexType(), v);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value sharedLoad(int64_t at, Value offset = {}) {
    Value i = idx(at);
    if (offset)
      i = arith::AddIOp::create(b, i, offset);
    return memref::LoadOp::create(b, shared, i);
  }
  void sharedStore(Value v, int64_t at, Value offset = {}) {
    Value i = idx(at);
    if (offset)
      i = arith::AddIOp::create(b, i, offset);
    memref::StoreOp::create(b, v, shared, i);
  }
  /// An scf.for whose body `body` builds at `b` (given the induction
  /// variable and the iteration arguments, returning the yielded values).
  scf::ForOp loop(Value lb, Value ub, Value step, ValueRange init,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    return scf::ForOp::create(
        b, lb, ub, step, init,
        [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          scf::YieldOp::create(b, body(iv, args));
        });
  }
  /// `then` under `cond`, without results.
  void ifThen(Value cond, function_ref<void()> then) {
    auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(op.thenBlock());
    then();
  }

  /// The order-preserving key of entry `t` of the row (0 past its length).
  Value key(Value t);
  /// The keys of step `step`'s kUnroll entries of this thread.
  SmallVector<Value> stepKeys(Value step);
  /// Inclusive scan of `x` over the warp's lanes.
  Value warpScan(Value x);
  /// One histogram pass over the byte at `shift` of the keys matching
  /// `prefix` under `mask` among the row's first `entries`; updates the
  /// state in shared memory.
  void histogramPass(int64_t shift, Value prefix, Value mask, Value remaining,
                     Value entries);
  /// The ballots of `bits` (one per entry of the step), their counts in
  /// table `table`, and after a barrier each entry's count of set bits
  /// before it in the step; returns those and the step's total.
  std::pair<SmallVector<Value>, Value> stepPrefix(ArrayRef<Value> bits,
                                                  int64_t table);
  /// The reference selection of the row into `marks` (thread 0).
  void referenceSelection(Value queue[3]);

  ImplicitLocOpBuilder &b;
  mnemo::TopKOp op;
  Value shared, scores, rowB, rowS, n, tid, lane, warp;
  Value queueBase;
};

Value Emitter::key(Value t) {
  Type i32t = b.getI32Type();
  Value in = cmp(arith::CmpIPredicate::slt, t, n);
  auto load = scf::IfOp::create(b, i32t, in, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(load.thenBlock());
    Value s = memref::LoadOp::create(b, scores, ValueRange{rowB, rowS, t});
    if (!s.getType().isF32())
      s = arith::ExtFOp::create(b, b.getF32Type(), s);
    Value zero = f32Constant(b, 0.0);
    Value negInf = f32Constant(b, -std::numeric_limits<double>::infinity());
    // -0 as +0: the comparisons of the reference see them equal.
    Value isZero = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, s, zero);
    Value bits = arith::BitcastOp::create(b, i32t, s);
    bits = arith::SelectOp::create(b, isZero, i32(0), bits);
    Value negative = cmp(arith::CmpIPredicate::slt, bits, i32(0));
    Value flip = arith::SelectOp::create(
        b, negative, i32(-1), i32(std::numeric_limits<int32_t>::min()));
    Value k = arith::XOrIOp::create(b, bits, flip);
    Value isNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, s, s);
    k = arith::SelectOp::create(b, isNan, i32(-1), k);
    Value isNegInf =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, s, negInf);
    k = arith::SelectOp::create(b, isNegInf, i32(0), k);
    scf::YieldOp::create(b, k);
    b.setInsertionPointToStart(load.elseBlock());
    scf::YieldOp::create(b, i32(0));
  }
  return load.getResult(0);
}

SmallVector<Value> Emitter::stepKeys(Value step) {
  SmallVector<Value> keys;
  for (int64_t u = 0; u < kUnroll; ++u)
    keys.push_back(key(arith::AddIOp::create(
        b, step, arith::AddIOp::create(b, tid, idx(u * kThreads)))));
  return keys;
}

Value Emitter::warpScan(Value x) {
  Value laneI32 = arith::IndexCastOp::create(b, b.getI32Type(), lane);
  for (int32_t d = 1; d < 32; d *= 2) {
    Value y = gpu::ShuffleOp::create(b, x, d, 32, gpu::ShuffleMode::UP)
                  .getShuffleResult();
    Value has = cmp(arith::CmpIPredicate::sge, laneI32, i32(d));
    x = arith::AddIOp::create(b, x, arith::SelectOp::create(b, has, y, i32(0)));
  }
  return x;
}

void Emitter::histogramPass(int64_t shift, Value prefix, Value mask,
                            Value remaining, Value entries) {
  gpu::BarrierOp::create(b); // the last readers of the bins are done
  ifThen(cmp(arith::CmpIPredicate::ult, tid, idx(kBins)),
         [&] { sharedStore(i32(0), kHist, tid); });
  gpu::BarrierOp::create(b);
  loop(
      idx(0), entries, idx(kUnroll * kThreads), ValueRange{},
      [&](Value step, ValueRange) -> SmallVector<Value> {
        for (Value k : stepKeys(step)) {
          Value listed = cmp(arith::CmpIPredicate::ne, k, i32(0));
          Value matches = cmp(arith::CmpIPredicate::eq,
                              arith::AndIOp::create(b, k, mask), prefix);
          ifThen(arith::AndIOp::create(b, listed, matches), [&] {
            Value digit = arith::AndIOp::create(
                b, arith::ShRUIOp::create(b, k, i32(shift)), i32(kBins - 1));
            memref::AtomicRMWOp::create(
                b, arith::AtomicRMWKind::addi, i32(1), shared,
                ValueRange{arith::AddIOp::create(b, idx(kHist),
                                                 toIndex(digit))});
          });
        }
        return {};
      });
  gpu::BarrierOp::create(b);
  // Thread i < 256 holds bin 255 - i: the scan counts the keys whose byte
  // is at least its bin's.
  Value holds = cmp(arith::CmpIPredicate::ult, tid, idx(kBins));
  Value bin = arith::SubIOp::create(
      b, idx(kBins - 1), arith::MinUIOp::create(b, tid, idx(kBins - 1)));
  Value count = arith::SelectOp::create(b, holds, sharedLoad(kHist, bin),
                                        i32(0));
  Value inclusive = warpScan(count);
  ifThen(arith::AndIOp::create(b, holds,
                               cmp(arith::CmpIPredicate::eq, lane, idx(31))),
         [&] { sharedStore(inclusive, kWarpTotals, warp); });
  gpu::BarrierOp::create(b);
  Value cum = inclusive;
  for (int64_t w = 0; w < kBins / 32; ++w) {
    Value earlier = cmp(arith::CmpIPredicate::ult, idx(w), warp);
    cum = arith::AddIOp::create(
        b, cum,
        arith::SelectOp::create(b, earlier, sharedLoad(kWarpTotals + w),
                                i32(0)));
  }
  // The bin where the remaining count is reached holds the k-th key.
  Value above = arith::SubIOp::create(b, cum, count);
  Value here = arith::AndIOp::create(
      b, holds,
      arith::AndIOp::create(
          b, cmp(arith::CmpIPredicate::sge, cum, remaining),
          cmp(arith::CmpIPredicate::slt, above, remaining)));
  ifThen(here, [&] {
    Value digit = arith::IndexCastOp::create(b, b.getI32Type(), bin);
    sharedStore(arith::OrIOp::create(
                    b, prefix, arith::ShLIOp::create(b, digit, i32(shift))),
                kState);
    sharedStore(arith::SubIOp::create(b, remaining, above), kState + 1);
    sharedStore(count, kState + 2);
  });
  gpu::BarrierOp::create(b);
}

std::pair<SmallVector<Value>, Value>
Emitter::stepPrefix(ArrayRef<Value> bits, int64_t table) {
  Type i32t = b.getI32Type();
  Value laneI32 = arith::IndexCastOp::create(b, i32t, lane);
  Value below = arith::SubIOp::create(
      b, arith::ShLIOp::create(b, i32(1), laneI32), i32(1));
  SmallVector<Value> ballots;
  for (auto [i, bit] : llvm::enumerate(bits)) {
    int64_t u = i;
    Value ballot = NVVM::VoteSyncOp::create(b, i32t, i32(-1), bit,
                                            NVVM::VoteSyncKind::ballot);
    ballots.push_back(ballot);
    ifThen(cmp(arith::CmpIPredicate::eq, lane, idx(0)), [&] {
      sharedStore(LLVM::CtPopOp::create(b, ballot), table,
                  arith::AddIOp::create(b, warp, idx(u * kWarps)));
    });
  }
  gpu::BarrierOp::create(b);
  // The table in order (entry u * kWarps + w: warp w's count of step entry
  // u's bits), four entries a lane: each lane's exclusive prefixes of its
  // four, from a scan of the lanes' sums.
  Value first = arith::MulIOp::create(b, lane, idx(4));
  Value entries[4], sums[4];
  for (int64_t i = 0; i < 4; ++i) {
    entries[i] = sharedLoad(table, arith::AddIOp::create(b, first, idx(i)));
    sums[i] = i ? arith::AddIOp::create(b, sums[i - 1], entries[i])
                : entries[i];
  }
  Value laneExclusive = arith::SubIOp::create(b, warpScan(sums[3]), sums[3]);
  // This warp's entries sit at position warp % 4 of lanes u * 4 + warp / 4.
  Value sub = arith::RemUIOp::create(b, warp, idx(4));
  Value mine = laneExclusive;
  for (int64_t i = 1; i < 4; ++i)
    mine = arith::SelectOp::create(
        b, cmp(arith::CmpIPredicate::eq, sub, idx(i)),
        arith::AddIOp::create(b, laneExclusive, sums[i - 1]), mine);
  Value total = gpu::ShuffleOp::create(b, arith::AddIOp::create(
                                              b, laneExclusive, sums[3]),
                                       31, 32, gpu::ShuffleMode::IDX)
                    .getShuffleResult();
  Value owner = arith::IndexCastOp::create(
      b, i32t, arith::DivUIOp::create(b, warp, idx(4)));
  SmallVector<Value> before;
  for (auto [u, ballot] : llvm::enumerate(ballots)) {
    Value from = arith::AddIOp::create(b, owner, i32(u * 4));
    Value warpBefore =
        gpu::ShuffleOp::create(b, mine, from, i32(32), gpu::ShuffleMode::IDX)
            .getShuffleResult();
    before.push_back(arith::AddIOp::create(
        b, warpBefore,
        LLVM::CtPopOp::create(b, arith::AndIOp::create(b, ballot, below))));
  }
  return {before, total};
}

void Emitter::referenceSelection(Value queue[3]) {
  Type i32t = b.getI32Type(), f32 = b.getF32Type();
  auto forEach = [&](Value ub, function_ref<void(Value)> body) {
    loop(idx(0), ub, idx(1), ValueRange{},
         [&](Value i, ValueRange) -> SmallVector<Value> {
           body(i);
           return {};
         });
  };
  auto at = [&](Value i) -> Value {
    return arith::AddIOp::create(b, queueBase, i);
  };
  forEach(n, [&](Value t) {
    Value s = memref::LoadOp::create(b, scores, ValueRange{rowB, rowS, t});
    if (!s.getType().isF32())
      s = arith::ExtFOp::create(b, f32, s);
    memref::StoreOp::create(b, s, queue[0], at(t));
    memref::StoreOp::create(b, arith::IndexCastOp::create(b, i32t, t),
                            queue[1], at(t));
    memref::StoreOp::create(b, arith::ConstantIntOp::create(b, b.getI8Type(), 0),
                            queue[2], at(t));
  });
  Value k = idx(op.getK());
  mnemo::buildTopKSelection(b, b.getLoc(), queue[0], queue[1], queueBase,
                            op.getTiesOrDefault(), n, k);
  Value negInf = f32Constant(b, -std::numeric_limits<double>::infinity());
  forEach(arith::MinSIOp::create(b, n, k), [&](Value j) {
    Value s = memref::LoadOp::create(b, queue[0], at(j));
    ifThen(arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, s, negInf),
           [&] {
             Value id = toIndex(memref::LoadOp::create(b, queue[1], at(j)));
             memref::StoreOp::create(
                 b, arith::ConstantIntOp::create(b, b.getI8Type(), 1),
                 queue[2], at(id));
           });
  });
}

void Emitter::emit(gpu::LaunchOp launch, Value scoresBuffer, Value lengths,
                   Value out, Value queue[3]) {
  b.setInsertionPointToStart(&launch.getBody().front());
  scores = scoresBuffer;
  shared = dynamicSharedView(b, kWords, b.getI32Type());
  Value row = launch.getBlockIds().x;
  Value seq = memref::DimOp::create(b, scores, 1);
  Value width = memref::DimOp::create(b, scores, 2);
  rowB = arith::DivUIOp::create(b, row, seq);
  rowS = arith::RemUIOp::create(b, row, seq);
  n = width;
  if (lengths) {
    Value len = arith::IndexCastOp::create(
        b, b.getIndexType(), memref::LoadOp::create(b, lengths, rowB));
    n = arith::MinSIOp::create(b, arith::MaxSIOp::create(b, len, idx(0)),
                               width);
  }
  tid = launch.getThreadIds().x;
  lane = arith::RemUIOp::create(b, tid, idx(32));
  warp = arith::DivUIOp::create(b, tid, idx(32));
  int64_t k = op.getK();

  // The select: four passes of a byte each, from the top.
  ifThen(cmp(arith::CmpIPredicate::eq, tid, idx(0)), [&] {
    sharedStore(i32(0), kState);
    sharedStore(i32(k), kState + 1);
    sharedStore(i32(0), kState + 2);
  });
  Value prefix = i32(0), remaining = i32(k), takeAll, entries = n;
  for (int64_t pass = 0; pass < 4; ++pass) {
    int64_t shift = 24 - 8 * pass;
    Value mask = i32(pass ? int32_t(~0u << (32 - 8 * pass)) : 0);
    histogramPass(shift, prefix, mask, remaining, entries);
    if (pass == 0) { // every key is counted once: the row's listed entries
      Value listed = i32(0);
      for (int64_t w = 0; w < kBins / 32; ++w)
        listed = arith::AddIOp::create(b, listed, sharedLoad(kWarpTotals + w));
      // Rows of at most k listed entries take them all (threshold 0: every
      // key above it): the other passes read none of their entries.
      takeAll = cmp(arith::CmpIPredicate::sle, listed, i32(k));
      entries = arith::SelectOp::create(b, takeAll, idx(0), n);
    }
    prefix = sharedLoad(kState);
    remaining = sharedLoad(kState + 1);
  }
  Value thr = arith::SelectOp::create(b, takeAll, i32(0), prefix);
  Value need = arith::SelectOp::create(b, takeAll, i32(0), remaining);
  Value equal = sharedLoad(kState + 2);
  Value marked;
  if (queue[0]) {
    // introselect ties across the cut: the reference selection's marks.
    Value tie = arith::AndIOp::create(
        b, arith::XOrIOp::create(b, takeAll, arith::ConstantIntOp::create(b, b.getI1Type(), 1)),
        cmp(arith::CmpIPredicate::sgt, equal, need));
    marked = tie;
    queueBase = arith::MulIOp::create(b, row, width);
    ifThen(tie, [&] {
      ifThen(cmp(arith::CmpIPredicate::eq, tid, idx(0)),
             [&] { referenceSelection(queue); });
      gpu::BarrierOp::create(b);
    });
  }

  // The indices in ascending order.
  Type i64 = b.getI64Type();
  scf::ForOp last = loop(
      idx(0), n, idx(kUnroll * kThreads), ValueRange{i32(0), i32(0)},
      [&](Value step, ValueRange seen) -> SmallVector<Value> {
        SmallVector<Value> keys = stepKeys(step);
        SmallVector<Value> ties;
        for (Value key : keys)
          ties.push_back(arith::AndIOp::create(
              b, cmp(arith::CmpIPredicate::eq, key, thr),
              cmp(arith::CmpIPredicate::ne, key, i32(0))));
        auto [tieRank, tiesHere] = stepPrefix(ties, kTables);
        SmallVector<Value> take;
        for (auto [u, key] : llvm::enumerate(keys)) {
          Value rank = arith::AddIOp::create(b, seen[0], tieRank[u]);
          Value byValue = arith::OrIOp::create(
              b, cmp(arith::CmpIPredicate::ugt, key, thr),
              arith::AndIOp::create(b, ties[u],
                                    cmp(arith::CmpIPredicate::slt, rank, need)));
          if (marked) {
            Value t = arith::AddIOp::create(
                b, step, arith::AddIOp::create(b, tid, idx(u * kThreads)));
            Value in = cmp(arith::CmpIPredicate::slt, t, n);
            auto mark = scf::IfOp::create(
                b, b.getI1Type(), arith::AndIOp::create(b, marked, in),
                /*withElseRegion=*/true);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(mark.thenBlock());
            Value at = arith::AddIOp::create(b, queueBase, t);
            Value m = memref::LoadOp::create(b, queue[2], at);
            scf::YieldOp::create(
                b, cmp(arith::CmpIPredicate::ne, m,
                       arith::ConstantIntOp::create(b, b.getI8Type(), 0)));
            b.setInsertionPointToStart(mark.elseBlock());
            scf::YieldOp::create(b, byValue);
            b.setInsertionPointAfter(mark);
            byValue = mark.getResult(0);
          }
          take.push_back(byValue);
        }
        SmallVector<Value> position;
        Value taken;
        std::tie(position, taken) = stepPrefix(take, kTables + kTableSize);
        for (int64_t u = 0; u < kUnroll; ++u) {
          ifThen(take[u], [&] {
            Value at = arith::IndexCastOp::create(
                b, b.getIndexType(), arith::AddIOp::create(b, seen[1], position[u]));
            Value i = arith::AddIOp::create(
                b, step, arith::AddIOp::create(b, tid, idx(u * kThreads)));
            memref::StoreOp::create(
                b, arith::IndexCastOp::create(b, i64, i), out,
                ValueRange{rowB, rowS, at});
          });
        }
        return {arith::AddIOp::create(b, seen[0], tiesHere),
                arith::AddIOp::create(b, seen[1], taken)};
      });
  // The rest of the k entries: -1.
  Value written =
      arith::IndexCastOp::create(b, b.getIndexType(), last.getResult(1));
  loop(arith::AddIOp::create(b, written, tid), idx(k), idx(kThreads),
       ValueRange{}, [&](Value j, ValueRange) -> SmallVector<Value> {
         memref::StoreOp::create(b, arith::ConstantIntOp::create(b, i64, -1),
                                 out, ValueRange{rowB, rowS, j});
         return {};
       });
}

/// Why `op` keeps the loops, or "" when the kernel takes it.
std::string unsupported(mnemo::TopKOp op) {
  Type elem = cast<RankedTensorType>(op.getScores().getType()).getElementType();
  if (!elem.isF32() && !elem.isBF16() && !elem.isF16())
    return "scores are neither f32, bf16 nor f16";
  if (op.getK() >= (int64_t(1) << 31))
    return "k past 2^31";
  return "";
}

void rewrite(mnemo::TopKOp op) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  Value scores = readOnlyBuffer(b, op.getScores());
  Value lengths = readOnlyBuffer(b, op.getLengths());
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  Value batch = memref::DimOp::create(b, scores, 0);
  Value seq = memref::DimOp::create(b, scores, 1);
  SmallVector<Value> dims;
  if (resultType.isDynamicDim(0))
    dims.push_back(batch);
  if (resultType.isDynamicDim(1))
    dims.push_back(seq);
  Value out = memref::AllocOp::create(
      b, MemRefType::get(resultType.getShape(), b.getI64Type()), dims,
      b.getI64IntegerAttr(64));
  Value rows = arith::MulIOp::create(b, batch, seq);
  // The reference selection's queue (scores, indices, marks), one row's
  // slice each: only introselect ties may need it.
  Value queue[3] = {};
  if (op.getTiesOrDefault() == mnemo::TopKTies::Introselect) {
    Value total =
        arith::MulIOp::create(b, rows, memref::DimOp::create(b, scores, 2));
    Type types[3] = {b.getF32Type(), b.getI32Type(), b.getI8Type()};
    for (int64_t i = 0; i < 3; ++i)
      queue[i] = memref::AllocOp::create(
          b, MemRefType::get({ShapedType::kDynamic}, types[i]),
          ValueRange{total});
  }
  gpu::LaunchOp launch =
      createKernelLaunch(b, "top_k", {1, 1, 1}, kThreads, 4 * kWords);
  launch.getGridSizeXMutable().assign(rows);
  {
    OpBuilder::InsertionGuard guard(b);
    Emitter(b, op).emit(launch, scores, lengths, out, queue);
  }
  Value result = bufferization::ToTensorOp::create(
      b, RankedTensorType::get(resultType.getShape(), b.getI64Type()), out,
      /*restrict=*/true, /*writable=*/true);
  op.replaceAllUsesWith(result);
  op.erase();
}

struct TopKKernelPass final
    : mnemo::impl::TopKKernelPassBase<TopKKernelPass> {
  using TopKKernelPassBase::TopKKernelPassBase;

  void runOnOperation() override {
    SmallVector<mnemo::TopKOp> ops;
    getOperation()->walk([&](mnemo::TopKOp op) { ops.push_back(op); });
    for (mnemo::TopKOp op : ops) {
      std::string why = unsupported(op);
      if (!why.empty()) {
        if (report)
          op.emitRemark("keeps the selection loops: ") << why;
        continue;
      }
      if (report)
        op.emitRemark("radix select kernel, ")
            << (op.getTiesOrDefault() == mnemo::TopKTies::Introselect
                    ? "the reference selection where the cut ties"
                    : "ties to the lower index");
      rewrite(op);
    }
  }
};

} // namespace

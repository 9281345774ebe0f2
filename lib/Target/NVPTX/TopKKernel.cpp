//===- TopKKernel.cpp - mnemo.top_k as a radix select per row ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo-gpu-top-k-kernel: each mnemo.top_k of f32, bf16 or f16 scores
// becomes a kernel, a block of 512 threads a row (or a chunk of a long row,
// then a merge kernel: below), that finds the row's
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
// Rows without such a tie never take that path.
//
// A few long rows would leave most multiprocessors idle (a decode step's
// one row of a million scores, 0.5 ms on one block): their entries are
// split into chunks, the first kernel selecting each chunk's top k into
// k candidate slots (the row's top k under (score, -index) lies within
// its chunks' top k), a merge kernel the row's top k of those, reading
// them through their indices. With `introselect` ties a chunk that left
// out keys equal to its k-th records that key; when it is the row's k-th,
// the merge runs the reference selection over the row and writes its
// marks from the row itself. docs/GPU.md, "Top-k".
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
// how many keys equal the prefix) and the merge's two flags (a chunk left
// keys out; one left out keys equal to the row's k-th).
constexpr int64_t kHist = 0;
constexpr int64_t kTables = kHist + kBins;
constexpr int64_t kTableSize = kUnroll * kWarps;
constexpr int64_t kWarpTotals = kTables + 2 * kTableSize;
constexpr int64_t kState = kWarpTotals + kBins / 32;
constexpr int64_t kWords = kState + 5;
// After those, a source of at most kCacheEntries entries keeps its keys
// (and a merge its candidates' row indices) from the first pass on.
constexpr int64_t kCache = kWords;
constexpr int64_t kCacheEntries = 16384;
static_assert(kTableSize == 4 * 32, "a table is four entries a lane");

/// Where a kernel reads its entries: the row's [lo, lo + count), or, in the
/// merge, `count` candidates of the row at `cand[base + t]` (key << 32 |
/// row index; key 0 and index -1: none).
struct Source {
  Value lo, count;
  Value cand, base;
};

/// The cut a select finds: every key above `thr` is taken (`thr` is 0 when
/// the row has at most k listed entries and `takeAll` is set), and the
/// first `need` keys equal to it, of `equal` in the source. The k-th key
/// lies in the bucket of the keys whose bits under `bits` are `bucket`'s:
/// `thr` is the k-th key when `bits` are all ones, else the bucket is
/// taken whole (`thr` is `bucket` - 1, `need` and `equal` 0).
struct Cut {
  Value thr, need, equal, takeAll, bucket, bits;
};

/// Emits the top-k kernels' bodies.
class Emitter {
public:
  Emitter(ImplicitLocOpBuilder &b, mnemo::TopKOp op) : b(b), op(op) {}

  /// The first kernel: block row * chunks + c selects chunk c's top k of
  /// the row's entries [c * chunk, (c + 1) * chunk). With one chunk it
  /// writes the row's indices to `out`; with several, the chunk's to its
  /// k slots of `cand` and, with `introselect` ties, to `dropped` the
  /// chunk's k-th key if it left keys equal to it out (else 0).
  void emitChunks(gpu::LaunchOp launch, Value out, Value chunks, Value chunk,
                  Value cand, Value dropped, Value queue[3]);
  /// The merge: block `row` selects the row's top k of its chunks'
  /// candidates.
  void emitMerge(gpu::LaunchOp launch, Value out, Value chunks, Value cand,
                 Value dropped, Value queue[3]);

  Value scores, lengths;
  /// Entries the cache holds (0: none): the keys of a chunk, the keys and
  /// row indices of a merge's candidates.
  int64_t cache = 0;

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
  /// `then` or `otherwise` under `cond`, each yielding one value of `type`.
  Value ifElse(Type type, Value cond, function_ref<Value()> then,
               function_ref<Value()> otherwise) {
    auto op = scf::IfOp::create(b, type, cond, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(op.thenBlock());
    scf::YieldOp::create(b, then());
    b.setInsertionPointToStart(op.elseBlock());
    scf::YieldOp::create(b, otherwise());
    return op.getResult(0);
  }

  /// Starts `launch`'s body: its shared memory (`words` i32 words) and
  /// the thread's lane and warp.
  void begin(gpu::LaunchOp launch, int64_t words);
  /// The block's row: its (batch, query) and listed length.
  void setRow(Value row);
  /// The order-preserving key of a loaded score.
  Value keyOf(Value score);
  /// Entry `t` of the source: its key (0 past the source or for a -1
  /// candidate) and its index in the row (i32).
  std::pair<Value, Value> entry(Value t);
  /// The keys and row indices of step `step`'s kUnroll entries of this
  /// thread.
  std::pair<SmallVector<Value>, SmallVector<Value>> stepEntries(Value step);
  /// Inclusive scan of `x` over the warp's lanes.
  Value warpScan(Value x);
  /// One histogram pass over the byte at `shift` of the keys matching
  /// `prefix` under `mask` among the source's first `entries`; updates
  /// the state in shared memory.
  void histogramPass(int64_t shift, Value prefix, Value mask, Value remaining,
                     Value entries);
  /// The four passes of the select over the source.
  Cut select();
  /// The ballots of `bits` (one per entry of the step), their counts in
  /// table `table`, and after a barrier each entry's count of set bits
  /// before it in the step; returns those and the step's total.
  std::pair<SmallVector<Value>, Value> stepPrefix(ArrayRef<Value> bits,
                                                  int64_t table);
  /// The reference selection of the row into `marks` (thread 0).
  void referenceSelection(Value queue[3]);
  /// Marks the row's reference selection when `tie` holds (thread 0, the
  /// block waiting for it).
  void referenceWhere(Value tie, Value queue[3]);
  /// Writes, in index order, the source's keys above `cut.thr` and the
  /// first `cut.need` equal to it, or with `marked` set those the
  /// reference marked; returns how many (i32).
  Value lastPass(const Cut &cut, Value marked, Value queue[3]);
  /// -1 to the rest of the k entries after the first `written`.
  void fill(Value written);

  /// Where entry() reads: the source; the source, keeping what it reads
  /// in the cache (the first pass); the cache.
  enum class Phase { Global, Fill, Cached };
  /// The select, then `finish` (given the cut, returning how many entries
  /// it wrote), reading the source through the cache where it fits.
  Value selectAndWrite(function_ref<Value(const Cut &)> finish);

  ImplicitLocOpBuilder &b;
  mnemo::TopKOp op;
  Value shared, row, rowB, rowS, n, tid, lane, warp;
  Phase phase = Phase::Global;
  Value queueBase;
  Source src;
  /// Writes the entry of key `key` and row index `at` (i32) to output
  /// slot `j` (index).
  std::function<void(Value j, Value key, Value at)> write;
};

void Emitter::begin(gpu::LaunchOp launch, int64_t words) {
  b.setInsertionPointToStart(&launch.getBody().front());
  shared = dynamicSharedView(b, words, b.getI32Type());
  tid = launch.getThreadIds().x;
  lane = arith::RemUIOp::create(b, tid, idx(32));
  warp = arith::DivUIOp::create(b, tid, idx(32));
}

void Emitter::setRow(Value r) {
  row = r;
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
  queueBase = arith::MulIOp::create(b, row, width);
}

Value Emitter::keyOf(Value s) {
  Type i32t = b.getI32Type();
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
  return arith::SelectOp::create(b, isNegInf, i32(0), k);
}

std::pair<Value, Value> Emitter::entry(Value t) {
  // No branches: every load is issued, from a clamped index where the entry
  // is outside the source (whose first entry exists whenever a step runs),
  // so that a thread's loads of a step are in flight together.
  Type i32t = b.getI32Type(), i64 = b.getI64Type();
  Value in = cmp(arith::CmpIPredicate::slt, t, src.count);
  Value slot = arith::SelectOp::create(b, in, t, idx(0));
  auto rowIndex = [&] {
    return arith::IndexCastOp::create(b, i32t,
                                      arith::AddIOp::create(b, src.lo, slot));
  };
  Value key, at;
  if (phase == Phase::Cached) {
    key = sharedLoad(kCache, slot);
    at = src.cand ? sharedLoad(kCache + cache, slot) : rowIndex();
  } else if (src.cand) {
    Value word = memref::LoadOp::create(
        b, src.cand, ValueRange{arith::AddIOp::create(b, src.base, slot)});
    key = arith::TruncIOp::create(
        b, i32t,
        arith::ShRUIOp::create(b, word,
                               arith::ConstantIntOp::create(b, i64, 32)));
    at = arith::TruncIOp::create(b, i32t, word);
  } else {
    at = rowIndex();
    key = keyOf(
        memref::LoadOp::create(b, scores, ValueRange{rowB, rowS, toIndex(at)}));
  }
  if (phase == Phase::Fill)
    ifThen(in, [&] {
      sharedStore(key, kCache, t);
      if (src.cand)
        sharedStore(at, kCache + cache, t);
    });
  if (src.cand) // a candidate of key 0 is none
    return {arith::SelectOp::create(b, in, key, i32(0)),
            arith::SelectOp::create(b, in, at, i32(-1))};
  return {arith::SelectOp::create(b, in, key, i32(0)), at};
}

std::pair<SmallVector<Value>, SmallVector<Value>>
Emitter::stepEntries(Value step) {
  SmallVector<Value> keys, at;
  for (int64_t u = 0; u < kUnroll; ++u) {
    auto [key, i] = entry(arith::AddIOp::create(
        b, step, arith::AddIOp::create(b, tid, idx(u * kThreads))));
    keys.push_back(key);
    at.push_back(i);
  }
  return {keys, at};
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
        for (Value k : stepEntries(step).first) {
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

Cut Emitter::select() {
  int64_t k = op.getK();
  Type i32t = b.getI32Type();
  ifThen(cmp(arith::CmpIPredicate::eq, tid, idx(0)), [&] {
    sharedStore(i32(0), kState);
    sharedStore(i32(k), kState + 1);
    sharedStore(i32(0), kState + 2);
  });
  Phase after = phase;
  if (phase == Phase::Cached)
    phase = Phase::Fill;
  histogramPass(24, i32(0), i32(0), i32(k), src.count);
  phase = after;
  // Every key is counted once by the first pass: the source's listed ones.
  // At most k listed entries are all taken (threshold 0: every key above
  // it), and the other passes are not needed.
  Value listed = i32(0);
  for (int64_t w = 0; w < kBins / 32; ++w)
    listed = arith::AddIOp::create(b, listed, sharedLoad(kWarpTotals + w));
  Value takeAll = cmp(arith::CmpIPredicate::sle, listed, i32(k));
  Value prefix = sharedLoad(kState), remaining = sharedLoad(kState + 1),
        count = sharedLoad(kState + 2);
  // Nor are they once the bucket of the k-th key holds exactly the keys
  // still to take: every key of the bucket is taken (a bucket of prefix 0
  // would need a threshold below 0, and goes on).
  auto whole = [&] {
    return arith::AndIOp::create(
        b, cmp(arith::CmpIPredicate::eq, count, remaining),
        cmp(arith::CmpIPredicate::ne, prefix, i32(0)));
  };
  Value stop = arith::OrIOp::create(b, takeAll, whole());
  Value bits = i32(int32_t(~0u << 24));
  for (int64_t pass = 1; pass < 4; ++pass) {
    int64_t shift = 24 - 8 * pass;
    auto ifOp = scf::IfOp::create(b, TypeRange{i32t, i32t, i32t}, stop,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, ValueRange{prefix, remaining, count});
      b.setInsertionPointToStart(ifOp.elseBlock());
      histogramPass(shift, prefix, i32(int32_t(~0u << (32 - 8 * pass))),
                    remaining, src.count);
      scf::YieldOp::create(b, ValueRange{sharedLoad(kState),
                                         sharedLoad(kState + 1),
                                         sharedLoad(kState + 2)});
    }
    prefix = ifOp.getResult(0);
    remaining = ifOp.getResult(1);
    count = ifOp.getResult(2);
    bits = arith::SelectOp::create(b, stop, bits, i32(int32_t(~0u << shift)));
    stop = arith::OrIOp::create(b, stop, whole());
  }
  Value all = whole();
  Value thr = arith::SelectOp::create(
      b, all, arith::SubIOp::create(b, prefix, i32(1)), prefix);
  Value need = arith::SelectOp::create(b, all, i32(0), remaining);
  return {arith::SelectOp::create(b, takeAll, i32(0), thr),
          arith::SelectOp::create(b, takeAll, i32(0), need),
          arith::SelectOp::create(b, all, i32(0), count),
          takeAll,
          prefix,
          bits};
}

void Emitter::referenceWhere(Value tie, Value queue[3]) {
  ifThen(tie, [&] {
    ifThen(cmp(arith::CmpIPredicate::eq, tid, idx(0)),
           [&] { referenceSelection(queue); });
    gpu::BarrierOp::create(b);
  });
}

Value Emitter::lastPass(const Cut &cut, Value marked, Value queue[3]) {
  Type i1 = b.getI1Type(), i8 = b.getI8Type();
  scf::ForOp last = loop(
      idx(0), src.count, idx(kUnroll * kThreads), ValueRange{i32(0), i32(0)},
      [&](Value step, ValueRange seen) -> SmallVector<Value> {
        SmallVector<Value> keys, at;
        std::tie(keys, at) = stepEntries(step);
        SmallVector<Value> ties;
        for (Value key : keys)
          ties.push_back(arith::AndIOp::create(
              b, cmp(arith::CmpIPredicate::eq, key, cut.thr),
              cmp(arith::CmpIPredicate::ne, key, i32(0))));
        auto [tieRank, tiesHere] = stepPrefix(ties, kTables);
        SmallVector<Value> take;
        for (auto [u, key] : llvm::enumerate(keys)) {
          Value rank = arith::AddIOp::create(b, seen[0], tieRank[u]);
          Value byValue = arith::OrIOp::create(
              b, cmp(arith::CmpIPredicate::ugt, key, cut.thr),
              arith::AndIOp::create(
                  b, ties[u], cmp(arith::CmpIPredicate::slt, rank, cut.need)));
          if (marked) {
            Value listed = cmp(arith::CmpIPredicate::ne, key, i32(0));
            Value i = at[u];
            byValue = ifElse(
                i1, arith::AndIOp::create(b, marked, listed),
                [&] {
                  Value m = memref::LoadOp::create(
                      b, queue[2],
                      ValueRange{arith::AddIOp::create(b, queueBase,
                                                       toIndex(i))});
                  return cmp(arith::CmpIPredicate::ne, m,
                             arith::ConstantIntOp::create(b, i8, 0));
                },
                [&] { return byValue; });
          }
          take.push_back(byValue);
        }
        SmallVector<Value> position;
        Value taken;
        std::tie(position, taken) = stepPrefix(take, kTables + kTableSize);
        for (int64_t u = 0; u < kUnroll; ++u) {
          ifThen(take[u], [&] {
            // A row's entry is read again here rather than kept from the
            // first read (registers): few entries are taken.
            Value key = keys[u], i = at[u];
            if (!src.cand) {
              Value t = arith::AddIOp::create(
                  b, step, arith::AddIOp::create(b, tid, idx(u * kThreads)));
              Value r = arith::AddIOp::create(b, src.lo, t);
              i = arith::IndexCastOp::create(b, b.getI32Type(), r);
              key = phase == Phase::Cached
                        ? sharedLoad(kCache, t)
                        : keyOf(memref::LoadOp::create(
                              b, scores, ValueRange{rowB, rowS, r}));
            }
            write(toIndex(arith::AddIOp::create(b, seen[1], position[u])), key,
                  i);
          });
        }
        return {arith::AddIOp::create(b, seen[0], tiesHere),
                arith::AddIOp::create(b, seen[1], taken)};
      });
  return last.getResult(1);
}

void Emitter::fill(Value written) {
  loop(arith::AddIOp::create(b, toIndex(written), tid), idx(op.getK()),
       idx(kThreads), ValueRange{},
       [&](Value j, ValueRange) -> SmallVector<Value> {
         write(j, i32(0), i32(-1));
         return {};
       });
}

void Emitter::emitChunks(gpu::LaunchOp launch, Value out, Value chunks,
                         Value chunk, Value cand, Value dropped,
                         Value queue[3]) {
  begin(launch, kWords + cache);
  Value block = launch.getBlockIds().x;
  std::optional<int64_t> known = getConstantIntValue(chunks);
  bool one = known && *known == 1;
  setRow(one ? block : arith::DivUIOp::create(b, block, chunks));
  Value c = one ? idx(0) : arith::RemUIOp::create(b, block, chunks);
  src.lo = arith::MulIOp::create(b, c, chunk);
  src.count = arith::MinSIOp::create(
      b, chunk,
      arith::MaxSIOp::create(b, arith::SubIOp::create(b, n, src.lo), idx(0)));
  Value split = one ? Value() : cmp(arith::CmpIPredicate::ugt, chunks, idx(1));
  Type i64 = b.getI64Type();
  auto toOut = [&](Value j, Value at) {
    memref::StoreOp::create(b, arith::ExtSIOp::create(b, i64, at), out,
                            ValueRange{rowB, rowS, j});
  };
  // A candidate is its key and row index in one word (key << 32 | index):
  // the merge reads it without a gather.
  auto toCand = [&](Value j, Value key, Value at) {
    Value slot = arith::AddIOp::create(
        b, arith::MulIOp::create(b, block, idx(op.getK())), j);
    Value word = arith::OrIOp::create(
        b,
        arith::ShLIOp::create(b, arith::ExtUIOp::create(b, i64, key),
                              arith::ConstantIntOp::create(b, i64, 32)),
        arith::ExtUIOp::create(b, i64, at));
    memref::StoreOp::create(b, word, cand, slot);
  };
  write = [&](Value j, Value key, Value at) {
    if (!split)
      return toOut(j, at);
    if (known) // several chunks, known when compiling
      return toCand(j, key, at);
    auto ifOp = scf::IfOp::create(b, split, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    toCand(j, key, at);
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    toOut(j, at);
  };

  fill(selectAndWrite([&](const Cut &cut) -> Value {
    Value marked;
    if (queue[0]) {
      // introselect ties across the cut. A row in one chunk takes the
      // reference selection's marks; a chunk of several tells the merge the
      // key whose equals it left out.
      Value tie = arith::AndIOp::create(
          b,
          arith::XOrIOp::create(
              b, cut.takeAll,
              arith::ConstantIntOp::create(b, b.getI1Type(), 1)),
          cmp(arith::CmpIPredicate::sgt, cut.equal, cut.need));
      marked = tie;
      if (split) {
        if (!known)
          marked = arith::AndIOp::create(
              b, tie, cmp(arith::CmpIPredicate::eq, chunks, idx(1)));
        else
          marked = {};
        auto report = [&] {
          ifThen(cmp(arith::CmpIPredicate::eq, tid, idx(0)), [&] {
            memref::StoreOp::create(
                b, arith::SelectOp::create(b, tie, cut.thr, i32(0)), dropped,
                block);
          });
        };
        if (known)
          report();
        else
          ifThen(split, report);
      }
      if (marked) {
        referenceWhere(marked, queue);
        // Apart, so that the rows without marks read none.
        return ifElse(
            b.getI32Type(), marked,
            [&] {
              return lastPass(cut,
                              arith::ConstantIntOp::create(b, b.getI1Type(), 1),
                              queue);
            },
            [&] { return lastPass(cut, {}, queue); });
      }
    }
    return lastPass(cut, {}, queue);
  }));
}

Value Emitter::selectAndWrite(function_ref<Value(const Cut &)> finish) {
  auto run = [&](bool cached) {
    phase = cached ? Phase::Cached : Phase::Global;
    Value written = finish(select());
    phase = Phase::Global;
    return written;
  };
  if (!cache)
    return run(false);
  return ifElse(
      b.getI32Type(), cmp(arith::CmpIPredicate::sle, src.count, idx(cache)),
      [&] { return run(true); }, [&] { return run(false); });
}

void Emitter::emitMerge(gpu::LaunchOp launch, Value out, Value chunks,
                        Value cand, Value dropped, Value queue[3]) {
  begin(launch, kWords + 2 * cache);
  setRow(launch.getBlockIds().x);
  Value k = idx(op.getK());
  src.count = arith::MulIOp::create(b, chunks, k);
  src.cand = cand;
  src.base = arith::MulIOp::create(b, row, src.count);
  Type i64 = b.getI64Type();
  write = [&](Value j, Value, Value at) {
    memref::StoreOp::create(b, arith::ExtSIOp::create(b, i64, at), out,
                            ValueRange{rowB, rowS, j});
  };
  if (!queue[0])
    return fill(selectAndWrite(
        [&](const Cut &cut) { return lastPass(cut, {}, queue); }));
  fill(selectAndWrite([&](const Cut &cut) -> Value {
    // introselect: the row's k-th key ties across the cut when more
    // candidates equal it than the selection takes, or when a chunk left out
    // keys equal to it. (Chunks that left out keys each hold k candidates, so
    // a row taking all its listed candidates has exactly k, those of that
    // one chunk, and its k-th key is that chunk's.)
    ifThen(cmp(arith::CmpIPredicate::eq, tid, idx(0)), [&] {
      sharedStore(i32(0), kState + 3);
      sharedStore(i32(0), kState + 4);
    });
    gpu::BarrierOp::create(b);
    loop(tid, chunks, idx(kThreads), ValueRange{},
         [&](Value c, ValueRange) -> SmallVector<Value> {
           Value thr = memref::LoadOp::create(
               b, dropped,
               ValueRange{arith::AddIOp::create(
                   b, arith::MulIOp::create(b, row, chunks), c)});
           ifThen(cmp(arith::CmpIPredicate::ne, thr, i32(0)),
                  [&] { sharedStore(i32(1), kState + 3); });
           // The chunk's k-th key is at most the row's, which is the least
           // candidate of the row's bucket: in that bucket, it is the row's.
           ifThen(arith::AndIOp::create(
                      b, cmp(arith::CmpIPredicate::ne, thr, i32(0)),
                      cmp(arith::CmpIPredicate::eq,
                          arith::AndIOp::create(b, thr, cut.bits), cut.bucket)),
                  [&] { sharedStore(i32(1), kState + 4); });
           return {};
         });
    gpu::BarrierOp::create(b);
    Value anyDropped =
        cmp(arith::CmpIPredicate::ne, sharedLoad(kState + 3), i32(0));
    Value droppedHere =
        cmp(arith::CmpIPredicate::ne, sharedLoad(kState + 4), i32(0));
    Value tie = arith::SelectOp::create(
        b, cut.takeAll, anyDropped,
        arith::OrIOp::create(
            b, cmp(arith::CmpIPredicate::sgt, cut.equal, cut.need),
            droppedHere));
    referenceWhere(tie, queue);
    // A tie may take keys no chunk kept: the marks are written from the row.
    return ifElse(
        b.getI32Type(), tie,
        [&] {
          Source candidates = src;
          Phase before = phase;
          src = Source{idx(0), n, {}, {}};
          phase = Phase::Global;
          Value w = lastPass(
              cut, arith::ConstantIntOp::create(b, b.getI1Type(), 1), queue);
          src = candidates;
          phase = before;
          return w;
        },
        [&] { return lastPass(cut, {}, queue); });
  }));
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

/// How many chunks each row's select is split into: about sqrt(n / k)
/// (the chunks' selects and the merge over their k candidates each then
/// read about sqrt(n k) entries), a power of two up to 64, no more than
/// fill two blocks a multiprocessor, and chunks of whole steps (4096
/// entries, so rows of at most 4096 entries keep one block).
std::pair<Value, Value> chunking(ImplicitLocOpBuilder &b, Value rows,
                                 Value width, int64_t k, int64_t smCount) {
  auto c = [&](int64_t v) { return indexConstant(b, v); };
  Value balanced = c(1);
  for (int64_t g = 2; g <= 64; g *= 2)
    balanced = b.createOrFold<arith::SelectOp>(
        b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::sle, c(g * g * k),
                                      width),
        c(g), balanced);
  Value fill = b.createOrFold<arith::CeilDivSIOp>(
      c(2 * smCount), b.createOrFold<arith::MaxSIOp>(rows, c(1)));
  Value want = b.createOrFold<arith::MaxSIOp>(
      c(1), b.createOrFold<arith::MinSIOp>(balanced, fill));
  Value step = c(kUnroll * kThreads);
  Value chunk = b.createOrFold<arith::MulIOp>(
      b.createOrFold<arith::CeilDivSIOp>(
          b.createOrFold<arith::CeilDivSIOp>(width, want), step),
      step);
  chunk = b.createOrFold<arith::MaxSIOp>(chunk, step);
  Value chunks = b.createOrFold<arith::MaxSIOp>(
      c(1), b.createOrFold<arith::CeilDivSIOp>(width, chunk));
  return {chunks, chunk};
}

void rewrite(mnemo::TopKOp op, int64_t smCount) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  Value scores = readOnlyBuffer(b, op.getScores());
  Value lengths = readOnlyBuffer(b, op.getLengths());
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  Value batch = b.createOrFold<memref::DimOp>(scores, indexConstant(b, 0));
  Value seq = b.createOrFold<memref::DimOp>(scores, indexConstant(b, 1));
  Value width = b.createOrFold<memref::DimOp>(scores, indexConstant(b, 2));
  SmallVector<Value> dims;
  if (resultType.isDynamicDim(0))
    dims.push_back(batch);
  if (resultType.isDynamicDim(1))
    dims.push_back(seq);
  Value out = memref::AllocOp::create(
      b, MemRefType::get(resultType.getShape(), b.getI64Type()), dims,
      b.getI64IntegerAttr(64));
  Value rows = b.createOrFold<arith::MulIOp>(batch, seq);
  bool intro = op.getTiesOrDefault() == mnemo::TopKTies::Introselect;
  // The reference selection's queue (scores, indices, marks), one row's
  // slice each: only introselect ties may need it.
  Value queue[3] = {};
  if (intro) {
    Value total = b.createOrFold<arith::MulIOp>(rows, width);
    Type types[3] = {b.getF32Type(), b.getI32Type(), b.getI8Type()};
    for (int64_t i = 0; i < 3; ++i)
      queue[i] = memref::AllocOp::create(
          b, MemRefType::get({ShapedType::kDynamic}, types[i]),
          ValueRange{total});
  }
  Value chunks, chunk;
  std::tie(chunks, chunk) = chunking(b, rows, width, op.getK(), smCount);
  std::optional<int64_t> known = getConstantIntValue(chunks);
  bool split = !known || *known > 1;
  // The chunks' candidates (and introselect's left-out keys); empty when a
  // row is one chunk.
  Value cand, dropped;
  if (split) {
    Value several = b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::sgt,
                                                  chunks, indexConstant(b, 1));
    auto buffer = [&](Value size, Type type) {
      size = b.createOrFold<arith::SelectOp>(several, size,
                                             indexConstant(b, 0));
      return memref::AllocOp::create(
          b, MemRefType::get({ShapedType::kDynamic}, type), ValueRange{size},
          b.getI64IntegerAttr(64));
    };
    Value slots = b.createOrFold<arith::MulIOp>(rows, chunks);
    cand = buffer(
        b.createOrFold<arith::MulIOp>(slots, indexConstant(b, op.getK())),
        b.getI64Type());
    if (intro)
      dropped = buffer(slots, b.getI32Type());
  }
  Value blocks = b.createOrFold<arith::MulIOp>(rows, chunks);
  Value mergeBlocks;
  if (split)
    mergeBlocks = b.createOrFold<arith::SelectOp>(
        b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::sgt, chunks,
                                      indexConstant(b, 1)),
        rows, indexConstant(b, 0));
  // The caches: as many entries as a block's source may have, at most
  // kCacheEntries (a chunk's, a merge's k candidates a chunk).
  auto cacheFor = [](Value most) {
    std::optional<int64_t> n = getConstantIntValue(most);
    return std::min(kCacheEntries, n ? *n : kCacheEntries);
  };
  int64_t chunkCache = cacheFor(b.createOrFold<arith::MinSIOp>(chunk, width));
  int64_t mergeCache = 0;
  if (split)
    mergeCache = cacheFor(
        b.createOrFold<arith::MulIOp>(chunks, indexConstant(b, op.getK())));
  // One kernel: `words` words of shared memory, `grid` blocks, its body
  // by `body` with a cache of `cache` entries. Two blocks a multiprocessor
  // (64 registers a thread): ptxas's own choice at 512 threads, but without
  // the cap it spills where a kernel has both the cached and the global
  // passes.
  auto kernel = [&](StringRef name, int64_t words, Value grid, int64_t cache,
                    function_ref<void(Emitter &, gpu::LaunchOp)> body) {
    gpu::LaunchOp launch =
        createKernelLaunch(b, name, {1, 1, 1}, kThreads, 4 * words);
    launch.getGridSizeXMutable().assign(grid);
    launch->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                    b.getI32IntegerAttr(65536 / (2 * kThreads)));
    OpBuilder::InsertionGuard guard(b);
    Emitter e(b, op);
    e.scores = scores;
    e.lengths = lengths;
    e.cache = cache;
    body(e, launch);
  };
  kernel("top_k", kWords + chunkCache, blocks, chunkCache,
         [&](Emitter &e, gpu::LaunchOp launch) {
           e.emitChunks(launch, out, chunks, chunk, cand, dropped, queue);
         });
  if (split)
    kernel("top_k_merge", kWords + 2 * mergeCache, mergeBlocks, mergeCache,
           [&](Emitter &e, gpu::LaunchOp launch) {
             e.emitMerge(launch, out, chunks, cand, dropped, queue);
           });
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
      rewrite(op, smCount);
    }
  }
};

} // namespace

//===- IndexerKernel.cpp - the lightning indexer on tensor cores -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo-gpu-indexer-kernel: a mnemo.lightning_indexer (DeepSeek-V3.2's key
// scores, sum_h w[h] * relu(scale * q[h] . k[t])) as one mma.sync kernel
// with the ReLU-weighted head reduction fused, so the [heads x keys] scores
// never leave the registers:
//
//  - a block of 4 warps scores 128 keys for one query position: the
//    position's Hi x Di queries and the 128 keys are converted to the
//    16-bit type on load (f32 operands of a 16-bit artifact, as the
//    attention's) and stored in shared memory;
//  - each warp multiplies all heads by its 32 keys (m16n8k16, ldmatrix
//    fragments, f32 accumulators), applies the scale, the ReLU and the
//    head's weight to its accumulators, sums its rows, then across the
//    lanes that share a column (shuffles), and writes its 32 scores;
//  - keys at or past the length, or after the position when causal (or
//    all of them for a padding query), are -inf; a tile that has none
//    left is written without being computed;
//  - a block scores a run of consecutive key tiles (up to 16: about two
//    blocks a multiprocessor in all), staging the position's queries and
//    weights once; keys already of the tiles' type arrive by cp.async,
//    up to kStages tiles in flight (as many as fit the block's shared
//    memory; zero-filled past the keys), the others are converted by the
//    threads tile by tile.
//
// docs/GPU.md, "Lightning indexer".
//
//===----------------------------------------------------------------------===//

#include "TensorCoreBuilder.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "mnemo/Target/NVPTX/Passes.h"

#include <limits>

namespace mlir::mnemo {
#define GEN_PASS_DEF_INDEXERKERNELPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace {

constexpr int64_t kWarps = 4;
constexpr int64_t kWarpKeys = 32;
constexpr int64_t kKeys = kWarps * kWarpKeys; // keys a block
constexpr int64_t kMaxHeads = 128;            // 64 accumulators a lane
constexpr int64_t kMaxDim = 256;
constexpr int64_t kStages = 3;           // most key tiles in flight (cp.async)
constexpr int64_t kMostTilesABlock = 16; // a block's run of key tiles

/// The shapes of one indexer.
struct Problem {
  Type elem; // the tiles' 16-bit type
  int64_t heads, dim;
  double scale;
  bool causal;
  int64_t pageSize = 0; // paged keys (a block table): P, else 0
  int64_t stages = 1;   // key tiles in flight (more than one: cp.async)
  bool async = false;   // keys of the tiles' type: cp.async
  int64_t sharedBytes() const { return (heads + stages * kKeys) * dim * 2; }
};

class Emitter : public TensorCoreBuilder {
public:
  Emitter(ImplicitLocOpBuilder &b, const Problem &p)
      : TensorCoreBuilder(b, p.elem), p(p) {}

  /// `perBlock`: the key tiles a block scores (grid.y covers them).
  void emit(gpu::LaunchOp launch, Value q, Value k, Value w, Value positions,
            Value lengths, Value table, Value out, Value perBlock);

private:
  /// Converts and stores `rows` rows of `width` features of `source` (row r
  /// at indices `at(r)`, a row of `limit` or more stored as zeros) to tile
  /// `tile`, 8 features a thread at a time.
  void stage(const SharedTile &tile, Value source,
             function_ref<SmallVector<Value>(Value)> at, Value limit);
  /// This warp's 32 scores: two per n8 block a lane, summed over the heads
  /// (valid in lanes 0-3; columns 8 j + 2 lane + i).
  SmallVector<Value> scores(ArrayRef<Value> headWeights);

  const Problem &p;
  SharedTile qTile, kTile;
  Value tid, warp, lane;
};

void Emitter::stage(const SharedTile &tile, Value source,
                    function_ref<SmallVector<Value>(Value)> at, Value limit) {
  int64_t chunks = tile.rows * tile.width / 8, perRow = tile.width / 8;
  auto vec = VectorType::get({8}, elem);
  for (int64_t c0 = 0; c0 < chunks; c0 += kWarps * 32) {
    Value c = add(tid, idx(c0));
    auto body = [&] {
      Value row = div(c, perRow), col = mul(rem(c, perRow), 8);
      Value inside = lt(row, limit);
      auto load = scf::IfOp::create(b, vec, inside, /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(load.thenBlock());
        SmallVector<Value> indices = at(row);
        indices.push_back(col);
        Type srcElem = cast<MemRefType>(source.getType()).getElementType();
        Value v = vector::LoadOp::create(b, VectorType::get({8}, srcElem),
                                         source, indices);
        if (srcElem != elem)
          v = arith::TruncFOp::create(b, vec, v);
        scf::YieldOp::create(b, v);
        b.setInsertionPointToStart(load.elseBlock());
        scf::YieldOp::create(
            b, Value(arith::ConstantOp::create(
                   b, DenseElementsAttr::get(vec, FloatAttr::get(elem, 0.0)))));
      }
      vector::StoreOp::create(b, load.getResult(0), tiles,
                              ValueRange{offset(tile, row, col)});
    };
    if (c0 + kWarps * 32 > chunks)
      ifThen(lt(c, idx(chunks)), body);
    else
      body();
  }
}

SmallVector<Value> Emitter::scores(ArrayRef<Value> headWeights) {
  int64_t mTiles = p.heads / 16;
  Value lane8 = rem(lane, 8), laneMid = rem(div(lane, 8), 2);
  Value laneHi = div(lane, 16);
  Value keyBase = mul(warp, kWarpKeys);
  // acc[m][j]: heads 16 m.., keys 8 j.. of this warp's 32.
  SmallVector<SmallVector<Accumulator>> acc(
      mTiles, SmallVector<Accumulator>(4, Accumulator(4, cf(0.0))));
  for (int64_t kk = 0; kk < p.dim / 16; ++kk) {
    Fragment keys[2];
    for (int64_t jp = 0; jp < 2; ++jp)
      keys[jp] = ldmatrix(kTile,
                          add(keyBase, add(idx(16 * jp), add(mul(laneHi, 8),
                                                             lane8))),
                          add(idx(16 * kk), mul(laneMid, 8)), false);
    for (int64_t m = 0; m < mTiles; ++m) {
      Fragment a = ldmatrix(qTile, add(idx(16 * m), rem(lane, 16)),
                            add(idx(16 * kk), mul(laneHi, 8)), false);
      for (int64_t jp = 0; jp < 2; ++jp) {
        acc[m][2 * jp] = mma(a, {keys[jp][0], keys[jp][1]}, acc[m][2 * jp]);
        acc[m][2 * jp + 1] =
            mma(a, {keys[jp][2], keys[jp][3]}, acc[m][2 * jp + 1]);
      }
    }
  }
  // Scale, ReLU, the head's weight; the sum over this lane's rows (heads
  // 16 m + lane / 4 and 8 more), then over the lanes of its column.
  Value scale = cf(p.scale), zero = cf(0.0);
  SmallVector<Value> sums;
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 2; ++i) {
      Value sum = zero;
      for (int64_t m = 0; m < mTiles; ++m)
        for (int64_t half = 0; half < 2; ++half) {
          Value x = fmul(acc[m][j][2 * half + i], scale);
          x = arith::MaximumFOp::create(b, x, zero);
          sum = fadd(sum, fmul(x, headWeights[2 * m + half]));
        }
      for (int32_t offset : {4, 8, 16})
        sum = fadd(sum, gpu::ShuffleOp::create(b, sum, offset, 32,
                                               gpu::ShuffleMode::XOR)
                            .getShuffleResult());
      sums.push_back(sum);
    }
  return sums;
}

void Emitter::emit(gpu::LaunchOp launch, Value q, Value k, Value w,
                   Value positions, Value lengths, Value table, Value out,
                   Value perBlock) {
  b.setInsertionPointToStart(&launch.getBody().front());
  tiles = dynamicSharedView(b, (p.heads + p.stages * kKeys) * p.dim, elem);
  qTile = {0, p.heads, p.dim};
  kTile = {p.heads * p.dim, kKeys, p.dim};

  Value row = launch.getBlockIds().x, group = launch.getBlockIds().y;
  Value seq = memref::DimOp::create(b, q, 1);
  // The keys: k's rows, or the table's capacity in tokens.
  Value width = table ? mul(memref::DimOp::create(b, table, 1), p.pageSize)
                      : memref::DimOp::create(b, k, 1).getResult();
  Value bi = arith::DivUIOp::create(b, row, seq);
  Value si = arith::RemUIOp::create(b, row, seq);
  tid = launch.getThreadIds().x;
  warp = div(tid, 32);
  lane = rem(tid, 32);
  // The keys this position sees: [0, limit).
  Value limit = width;
  if (lengths) {
    Value len = arith::IndexCastOp::create(
        b, b.getIndexType(), memref::LoadOp::create(b, lengths, bi));
    limit = arith::MinSIOp::create(b, limit,
                                   arith::MaxSIOp::create(b, len, idx(0)));
  }
  if (p.causal) {
    Value pos = si;
    if (positions)
      pos = arith::IndexCastOp::create(
          b, b.getIndexType(),
          memref::LoadOp::create(b, positions, ValueRange{bi, si}));
    // A padding query (position -1) sees no key.
    Value seen = arith::MaxSIOp::create(b, add(pos, idx(1)), idx(0));
    limit = arith::MinSIOp::create(b, limit, seen);
  }
  // This block's tiles [firstTile, endTile), of which those before
  // `computed` hold a key the position sees.
  auto ceilDiv = [&](Value x, int64_t d) {
    return arith::CeilDivSIOp::create(b, x, idx(d));
  };
  Value firstTile = arith::MulIOp::create(b, group, perBlock);
  Value endTile = arith::MinSIOp::create(b, add(firstTile, perBlock),
                                         ceilDiv(width, kKeys));
  Value computed = arith::MaxSIOp::create(
      b, arith::MinSIOp::create(b, endTile, ceilDiv(limit, kKeys)),
      firstTile);
  Value negInf = cf(-std::numeric_limits<double>::infinity());
  // Lanes 0-3 write the warp's scores of the tile from key `first`:
  // column 8 j + 2 lane + i.
  auto write = [&](Value first, ArrayRef<Value> values) {
    ifThen(lt(lane, idx(4)), [&] {
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t i = 0; i < 2; ++i) {
          Value t = add(first, add(mul(warp, kWarpKeys),
                                   add(idx(8 * j + i), mul(lane, 2))));
          Value v = values.empty() ? negInf
                                   : select(lt(t, limit), values[2 * j + i],
                                            negInf);
          ifThen(lt(t, width), [&] {
            memref::StoreOp::create(b, v, out, ValueRange{bi, si, t});
          });
        }
    });
  };
  // Key t of the sequence: k's row, or row t % P of page table[b, t / P].
  auto keyRow = [&](Value t) -> SmallVector<Value> {
    if (!table)
      return {bi, t};
    Value page = arith::IndexCastOp::create(
        b, b.getIndexType(),
        memref::LoadOp::create(b, table, ValueRange{bi, div(t, p.pageSize)}));
    return {page, idx(0), rem(t, p.pageSize)};
  };
  auto forTiles = [&](Value from, Value to, function_ref<void(Value)> body) {
    scf::ForOp::create(b, from, to, idx(1), ValueRange{},
                       [&](OpBuilder &nb, Location, Value j, ValueRange) {
                         OpBuilder::InsertionGuard guard(b);
                         b.setInsertionPoint(nb.getInsertionBlock(),
                                             nb.getInsertionPoint());
                         body(j);
                         scf::YieldOp::create(b);
                       });
  };
  // The queries, once (the barrier before the first tile's product
  // publishes them), and the weights of this lane's heads: 16 m + lane / 4
  // and 8 more.
  ifThen(lt(firstTile, computed), [&] {
    stage(qTile, q, [&](Value h) -> SmallVector<Value> { return {bi, si, h}; },
          idx(p.heads));
  });
  SmallVector<Value> headWeights;
  for (int64_t m = 0; m < p.heads / 16; ++m)
    for (int64_t half = 0; half < 2; ++half) {
      Value h = add(idx(16 * m + 8 * half), div(lane, 4));
      Value x = memref::LoadOp::create(b, w, ValueRange{bi, si, h});
      if (!x.getType().isF32())
        x = arith::ExtFOp::create(b, f32, x);
      headWeights.push_back(x);
    }
  if (!p.async) {
    // Keys converted as they are stored, a tile at a time.
    forTiles(firstTile, computed, [&](Value j) {
      Value first = mul(j, kKeys);
      stage(kTile, k, [&](Value r) { return keyRow(add(first, r)); },
            sub(width, first));
      gpu::BarrierOp::create(b);
      write(first, scores(headWeights));
      gpu::BarrierOp::create(b); // the tile is read before the next lands
    });
  } else {
    // Tile j in stage (j - firstTile) % stages; a cp.async group a tile,
    // zero-filled past the keys or the tiles computed (so every thread
    // commits as many groups).
    int64_t perThread = kKeys * p.dim / 8 / (kWarps * 32);
    int64_t perRow = p.dim / 8;
    auto slotOf = [&](Value i) {
      SharedTile t = kTile;
      t.shift = mul(rem(i, p.stages), kKeys * p.dim);
      return t;
    };
    auto issue = [&](Value i) {
      Value first = mul(add(firstTile, i), kKeys);
      Value inRun = lt(add(firstTile, i), computed);
      SharedTile slot = slotOf(i);
      SmallVector<Value> tokens;
      for (int64_t c0 = 0; c0 < perThread; ++c0) {
        Value c = add(tid, idx(c0 * kWarps * 32));
        Value r = div(c, perRow), col = mul(rem(c, perRow), 8);
        Value t = add(first, r);
        Value valid = both(inRun, lt(t, width));
        // An invalid row reads nothing; its index only has to exist.
        Value at = select(valid, t, idx(0));
        tokens.push_back(
            asyncCopy(slot, r, col, k, keyRow(at), col, valid));
      }
      commit(tokens);
    };
    for (int64_t i = 0; i + 1 < p.stages; ++i)
      issue(idx(i));
    forTiles(idx(0), sub(computed, firstTile), [&](Value i) {
      issue(add(i, idx(p.stages - 1)));
      // Tile i has landed once at most stages - 1 groups are pending. (The
      // empty group waitAll commits first makes that wait also cover tile
      // i + 1: one tile in flight during a product, not stages - 1; waiting
      // on the tile's own group is not measured yet.)
      waitAll(/*asyncProxy=*/false, p.stages - 1);
      SharedTile current = kTile;
      kTile = slotOf(i);
      write(mul(add(firstTile, i), kKeys), scores(headWeights));
      kTile = current;
      gpu::BarrierOp::create(b); // the stage is read before it is refilled
    });
    waitAll(); // nothing left in flight at exit
  }
  forTiles(computed, endTile,
           [&](Value j) { write(mul(j, kKeys), {}); });
}

/// The problem of `op` with tiles of `elem`, or why the kernel cannot
/// take it.
FailureOr<Problem> analyze(mnemo::LightningIndexerOp op, Type elem,
                           std::string &why) {
  auto q = cast<RankedTensorType>(op.getQ().getType());
  Problem p;
  p.elem = elem;
  p.heads = q.getDimSize(2);
  p.dim = q.getDimSize(3);
  p.scale = op.getEffectiveScale();
  p.causal = op.getCausal();
  if (op.getTable())
    p.pageSize = cast<RankedTensorType>(op.getK().getType()).getDimSize(2);
  if (p.heads % 16 || p.heads > kMaxHeads)
    return why = "indexer heads are not a multiple of 16 up to " +
                 std::to_string(kMaxHeads),
           failure();
  if (p.dim % 16 || p.dim > kMaxDim)
    return why = "indexer head dim is not a multiple of 16 up to " +
                 std::to_string(kMaxDim),
           failure();
  return p;
}

void rewrite(mnemo::LightningIndexerOp op, const Problem &p, int64_t smCount) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  Value q = readOnlyBuffer(b, op.getQ()), k = readOnlyBuffer(b, op.getK());
  Value w = readOnlyBuffer(b, op.getWeights());
  Value positions = readOnlyBuffer(b, op.getPositions());
  Value lengths = readOnlyBuffer(b, op.getLengths());
  Value table = readOnlyBuffer(b, op.getTable());
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  Value batch = memref::DimOp::create(b, q, 0);
  Value seq = memref::DimOp::create(b, q, 1);
  Value width =
      table ? arith::MulIOp::create(b, memref::DimOp::create(b, table, 1),
                                    indexConstant(b, p.pageSize))
                  .getResult()
            : memref::DimOp::create(b, k, 1).getResult();
  SmallVector<Value> dims;
  Value sizes[3] = {batch, seq, width};
  for (int64_t i = 0; i < 3; ++i)
    if (resultType.isDynamicDim(i))
      dims.push_back(sizes[i]);
  Value out = memref::AllocOp::create(
      b, MemRefType::get(resultType.getShape(), b.getF32Type()), dims,
      b.getI64IntegerAttr(64));
  Value rows = arith::MulIOp::create(b, batch, seq);
  auto c = [&](int64_t v) { return indexConstant(b, v); };
  Value keyTiles = b.createOrFold<arith::CeilDivSIOp>(width, c(kKeys));
  // A block's run of tiles: as many as leave about two blocks a
  // multiprocessor, at most kMostTilesABlock.
  Value perBlock = b.createOrFold<arith::MaxSIOp>(
      c(1), b.createOrFold<arith::MinSIOp>(
                c(kMostTilesABlock),
                b.createOrFold<arith::CeilDivSIOp>(
                    b.createOrFold<arith::MulIOp>(rows, keyTiles),
                    c(2 * smCount))));
  Value groups = b.createOrFold<arith::CeilDivSIOp>(keyTiles, perBlock);
  gpu::LaunchOp launch = createKernelLaunch(b, "lightning_indexer",
                                            {1, 1, 1}, kWarps * 32,
                                            p.sharedBytes());
  launch.getGridSizeXMutable().assign(rows);
  launch.getGridSizeYMutable().assign(groups);
  {
    OpBuilder::InsertionGuard guard(b);
    Emitter(b, p).emit(launch, q, k, w, positions, lengths, table, out,
                       perBlock);
  }
  op.replaceAllUsesWith(Value(bufferization::ToTensorOp::create(
      b, resultType, out, /*restrict=*/true, /*writable=*/true)));
  op.erase();
}

struct IndexerKernelPass final
    : mnemo::impl::IndexerKernelPassBase<IndexerKernelPass> {
  using IndexerKernelPassBase::IndexerKernelPassBase;

  void runOnOperation() override {
    SmallVector<mnemo::LightningIndexerOp> ops;
    getOperation()->walk(
        [&](mnemo::LightningIndexerOp op) { ops.push_back(op); });
    Type weightType = roundF32 ? sixteenBitWeightType(getOperation()) : Type();
    for (mnemo::LightningIndexerOp op : ops) {
      Type q = cast<RankedTensorType>(op.getQ().getType()).getElementType();
      Type k = cast<RankedTensorType>(op.getK().getType()).getElementType();
      // 16-bit keys (a 16-bit cache's pages: f32 queries rounded to their
      // type, as the paged attention rounds its query), 16-bit queries
      // over f32 keys, or both f32 in a 16-bit artifact.
      auto narrow = [](Type t) { return t.isBF16() || t.isF16(); };
      Type elem = narrow(k) && (q.isF32() || q == k) ? k
                  : narrow(q) && k.isF32()           ? q
                  : q.isF32() && k.isF32()           ? weightType
                                                     : Type();
      std::string why =
          q.isF32() && k.isF32()
              ? "f32 queries and keys outside a 16-bit artifact"
              : "queries and keys of types it does not take together";
      FailureOr<Problem> p = failure();
      if (elem)
        p = analyze(op, elem, why);
      if (failed(p)) {
        if (report)
          op.emitRemark("keeps the decomposition: ") << why;
        continue;
      }
      if (report)
        op.emitRemark("tensor-core indexer kernel, ")
            << (q.isF32() || k.isF32() ? "f32 operands rounded to "
                                       : "operands in ")
            << elem;
      // cp.async for keys of the tiles' type, as many stages as fit (one
      // stage, of (heads + 128) x dim, fits any chip at 128 x 256).
      p->async = k == elem;
      for (p->stages = p->async ? kStages : 1;
           p->stages > 1 && p->sharedBytes() > sharedBytesLimit; --p->stages)
        ;
      rewrite(op, *p, smCount);
    }
  }
};

} // namespace

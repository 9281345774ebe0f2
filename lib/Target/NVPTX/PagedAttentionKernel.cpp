//===- PagedAttentionKernel.cpp - attention over a paged cache -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.paged_attention on the tensor-core attention kernel
// (mnemo-gpu-attention-kernel, AttentionKernel.cpp): what differs from a
// contiguous K and V. Each block reads its sequence's context length and
// its rows' query positions; K and V rows come from the pages the block
// table names; FP8 E4M3 pools are copied raw into a ring of slots and
// dequantized into the bf16 tile. docs/GPU.md, "Paged decode attention".
//
//===----------------------------------------------------------------------===//

#include "AttentionKernelEmitter.h"

#include "mlir/IR/IRMapping.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace mlir::mnemo::nvptx::attention {

/// Whether the decode kernel takes problem `p` (sizes and pools set) with
/// `sq` query tokens: FP8 pools on a chip with FP8 conversions (sm_90a
/// here; 16-bit pools too when `sixteenBit`), all query rows in one
/// 16-row tile, and head dims that are powers of two from 16 (V: 32 with
/// FP8 pools, so that a lane's columns of a row fill words) to 128: a
/// lane's pieces of a row (a quarter of its k-steps, 16 bytes at most)
/// and the ring's copies (half a row each) are then aligned loads of 4,
/// 8 or 16 bytes. (An absorbed MLA's 48 / 32, DeepSeek's 576 / 512 keep
/// the general kernel or the decomposition; above 128 the warps' rings
/// would leave one block a multiprocessor.)
static bool takesDecodeKernel(const Problem &p, int64_t sq, bool sm90,
                              bool sixteenBit) {
  auto dim = [](int64_t x, int64_t least) {
    return llvm::isPowerOf2_64(x) && x >= least && x <= 128;
  };
  return (p.fp8 || (sixteenBit && !p.tf32())) && sm90 &&
         !ShapedType::isDynamic(sq) && sq >= 1 && p.group * sq <= 16 &&
         dim(p.d, 16) && dim(p.dv, p.fp8 ? 32 : 16);
}

/// Whether `op`'s value pool is the leading features of its key pool (an
/// MLA layer's latent, cached once): then the kernel reads the values'
/// rows from the key pool, whose row stride is the keys'.
static bool valuesInKeys(mnemo::PagedAttentionOp op) {
  auto slice = op.getValuePool().getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSource() != op.getKeyPool() ||
      !slice.hasUnitStride() || !slice.hasZeroOffset())
    return false;
  // Heads and rows whole (the pages' count may be any: a page the table
  // names is the same page of either).
  RankedTensorType pool = op.getKeyPool().getType();
  for (int64_t i = 1; i < 3; ++i)
    if (slice.getStaticSizes()[i] != pool.getDimSize(i))
      return false;
  return true;
}

/// Why a paged attention keeps the decomposition, or the problem to
/// generate. Its queries have the pools' type here (the pass rounds an f32
/// query over 16-bit pools first; f32 pools run as TF32 with
/// f32-precision=3xtf32|tf32); pages are gathered by cp.async, except in
/// the decode kernel over FP8 pools with `tma` (Problem::decodeTma).
FailureOr<Problem> analyze(mnemo::PagedAttentionOp op, int64_t blockQ,
                           int64_t blockKV, bool wgmma, bool tma,
                           int64_t splitKV, int64_t smCount,
                           int64_t sharedLimit, bool decodeKernel,
                           bool decodeKernel16, F32Precision f32Precision,
                           std::string &why) {
  RankedTensorType q = op.getQuery().getType(),
                   k = op.getKeyPool().getType(),
                   v = op.getValuePool().getType(),
                   r = op.getResult().getType();
  Type pool = k.getElementType();
  bool fp8 = isa<Float8E4M3FNType>(pool);
  // FP8 rows are dequantized into bf16 tiles.
  Type elem = fp8 ? q.getElementType() : pool;
  if (!pool.isBF16() && !pool.isF16() && !fp8 && !pool.isF32())
    return why = "pools hold neither bf16, f16, FP8 nor f32", failure();
  // f32 pools as TF32 (mma.sync, Problem::tf32): not an MLA's values in
  // its keys' tile, nor selected keys.
  if (pool.isF32() && f32Precision == F32Precision::cudaCores)
    return why = "f32 pools (f32-precision=f32)", failure();
  if (pool.isF32() && op.getIndices())
    return why = "f32 pools with selected keys", failure();
  if (fp8 && !elem.isBF16())
    return why = "the query of FP8 pools is not bf16", failure();
  if (q.getElementType() != elem || v.getElementType() != pool ||
      r.getElementType() != elem)
    return why = "query, pools and result differ in element type",
           failure();
  // A mask is read by the general kernel (the decode kernel has none).
  if (failed(checkSink(op.getSink(), why)) ||
      failed(checkMask(op.getMask(), why)))
    return failure();
  double scale =
      op.getScaleAttr()
          ? op.getScaleAttr().getValueAsDouble()
          : 1.0 / std::sqrt(static_cast<double>(q.getDimSize(3)));
  std::optional<double> softcap;
  if (FloatAttr cap = op.getSoftcapAttr())
    softcap = cap.getValueAsDouble();
  if (scale <= 0 && !softcap)
    return why = "non-positive scale", failure();
  if (k.getDimSize(0) == 0 || op.getBlockTable().getType().getDimSize(1) == 0)
    return why = "empty pool or block table", failure();
  Problem p;
  p.paged = true;
  p.fp8 = fp8;
  p.dynamic = true;
  p.pageSize = op.getPageSize();
  p.elem = elem;
  p.singleTf32 = f32Precision == F32Precision::tf32;
  setSizes(p, q, k, v);
  p.skv = ShapedType::kDynamic;
  p.group = op.getGroupSize();
  if (IntegerAttr w = op.getWindowAttr())
    p.window = w.getInt();
  // The query tokens: static in Q or in the positions (a decode step's
  // [B, 1] positions beside a Q whose length shape inference left open).
  int64_t sq = q.getDimSize(2);
  if (ShapedType::isDynamic(sq))
    sq = op.getQPositions().getType().getDimSize(1);
  p.selected = static_cast<bool>(op.getIndices());
  if (decodeKernel && !p.selected && !op.getMask() &&
      takesDecodeKernel(p, sq, wgmma, decodeKernel16)) {
    // One query tile of the group's heads times the tokens, 64-key tiles
    // of 16 keys a warp.
    p.decode = true;
    p.blockQ = 16;
    p.blockKV = 64;
    p.rowsPerHead = sq;
    p.splitKV = splitKV;
    p.smCount = smCount;
    // TMA boxes of whole rows within a page; values a pool of their own
    // (a slice of the keys' pool has no identity layout to map).
    p.decodeTma = tma && p.fp8 && (p.pageSize == 8 || p.pageSize % 16 == 0) &&
                  !valuesInKeys(op);
    if (p.sharedBytes() > sharedLimit)
      return why = "tiles exceed the shared memory limit", failure();
  } else {
    // configure keeps it where the tiles take it. FP8 values are scaled
    // by their key row's scale there.
    p.sharedValues = !p.tf32() && valuesInKeys(op) &&
                     op.getValueScales() == op.getKeyScales();
    if (failed(configure(p, blockQ, blockKV, wgmma, /*tma=*/false, splitKV,
                         smCount, sharedLimit, why)))
      return failure();
    // Each query position selects its own keys.
    if (p.selected)
      p.rowsPerHead = 1;
  }
  p.scale = scale;
  p.softcap = softcap;
  p.causal = op.getCausal();
  return p;
}

Value KernelEmitter::pageEntry(Value key) {
  Value slot = arith::MinUIOp::create(b, div(key, p.pageSize),
                                      sub(div(capacity, p.pageSize), idx(1)));
  return memref::LoadOp::create(b, table, ValueRange{batch, slot});
}

std::tuple<Value, Value, Value> KernelEmitter::pagedKey(Value key,
                                                        Value entry) {
  // Key t is row t % P of page table[b, t / P]; a key past the length
  // reads no table entry the runtime filled, so its (zero-byte) copy names
  // page 0.
  Value valid;
  if (p.selected)
    std::tie(key, valid) = selectedToken(key);
  else
    valid = lt(key, skv());
  Value page = arith::IndexCastOp::create(b, b.getIndexType(),
                                          entry ? entry : pageEntry(key));
  return {select(valid, page, idx(0)),
          select(valid, rem(key, p.pageSize), idx(0)), valid};
}

std::pair<Value, Value> KernelEmitter::selectedToken(Value slot) {
  // The block's rows share query q0 (rowsPerHead 1).
  Value listed = lt(slot, n.skv);
  Value entry = arith::MinUIOp::create(b, slot, sub(n.skv, idx(1)));
  Value token = arith::IndexCastOp::create(
      b, b.getIndexType(),
      memref::LoadOp::create(b, indices, ValueRange{batch, q0, entry}));
  Value valid = both(listed, both(ge(token, idx(0)), lt(token, len)));
  return {select(valid, token, idx(0)), valid};
}

void KernelEmitter::stageRaw(Value t, bool isV, Value slot) {
  Value pool = isV ? v : k, scales = isV ? vScales : kScales;
  int64_t width = isV ? p.dv : p.d, perRow = width / 16;
  int64_t chunks = p.blockKV * perRow;
  Value exists = lt(t, tHi), kv0 = mul(t, p.blockKV);
  Value slotBase = arith::MulIOp::create(b, slot, idx(p.ringSlotBytes()));
  SmallVector<Value> copies;
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  forEachChunk(chunks, [&](Value c, bool guarded) {
    Value row = div(c, perRow), col = mul(rem(c, perRow), 16);
    auto [page, inPage, valid] = pagedKey(add(kv0, row));
    valid = both(valid, exists);
    Value token = nvgpu::DeviceAsyncCopyOp::create(
        b, tokenType, ringRows,
        ValueRange{add(slotBase, add(mul(row, width), col))}, pool,
        ValueRange{page, kvHead, inPage, col}, b.getIndexAttr(16),
        select(valid, idx(16), idx(0)), b.getUnitAttr());
    if (!guarded)
      copies.push_back(token);
  });
  // One scale per row (4 bytes, through L1).
  for (int64_t r0 = 0; r0 < p.blockKV; r0 += p.threads()) {
    Value r = add(tid, idx(r0));
    OpBuilder::InsertionGuard guard(b);
    auto inRange = scf::IfOp::create(b, lt(r, idx(p.blockKV)), false);
    b.setInsertionPoint(inRange.thenBlock()->getTerminator());
    auto [page, inPage, valid] = pagedKey(add(kv0, r));
    valid = both(valid, exists);
    nvgpu::DeviceAsyncCopyOp::create(
        b, tokenType, ringScales,
        ValueRange{add(arith::MulIOp::create(b, slot, idx(p.blockKV)), r)},
        scales, ValueRange{page, kvHead, inPage}, b.getIndexAttr(1),
        select(valid, idx(1), idx(0)), UnitAttr());
  }
  commit(copies);
}

void KernelEmitter::dequantize(const SharedTile &tile, Value slot) {
  // E4M3 byte e = s|eeee|mmm placed as bf16 s|0000eeee|mmm0000 is e's value
  // times 2^-120 exactly (subnormals included: both formats' smallest
  // exponent field is 0). A byte permute (PRMT) moves two bytes of a word
  // into the high bytes of its halves; an and, a shift and an and-or place
  // each half's exponent and mantissa under its sign. A bf16 multiply by
  // 2^120 gives e's value (exact: at most 448, four significant bits), and
  // an f32 multiply by the row's scale the product, rounded once to bf16.
  // (Rounding the scale to bf16 instead skews a whole row alike: up to
  // 2^-9 of each score, which an MLA's large scores, tens of units, made
  // a 3% error in its softmax.) With scaledColumns the product is left to
  // S's and P's columns, and the scales are copied beside the tile.
  int64_t width = tile.width, perRow = width / 16;
  int64_t chunks = p.blockKV * perRow;
  Type i32 = b.getI32Type();
  auto bf16x16 = VectorType::get({16}, b.getBF16Type());
  auto bf16Splat = [&](Value x) {
    return vector::BroadcastOp::create(
        b, bf16x16, arith::TruncFOp::create(b, b.getBF16Type(), x));
  };
  Value slotBase = arith::MulIOp::create(b, slot, idx(p.ringSlotBytes()));
  Value scaleBase = arith::MulIOp::create(b, slot, idx(p.blockKV));
  Value zero = i32c(0), signs = i32c(0x80008000), bits = i32c(0x7f007f00);
  forEachChunk(chunks, [&](Value c, bool) {
    Value row = div(c, perRow), col = mul(rem(c, perRow), 16);
    Value raw = vector::LoadOp::create(
        b, VectorType::get({16}, b.getType<Float8E4M3FNType>()), ringRows,
        ValueRange{add(slotBase, add(mul(row, width), col))});
    Value w = vector::BitCastOp::create(
        b, VectorType::get({4}, i32),
        arith::BitcastOp::create(b, VectorType::get({16}, b.getI8Type()),
                                 raw));
    SmallVector<Value> halves;
    for (int64_t i = 0; i < 4; ++i) {
      Value word = vector::ExtractOp::create(b, w, i);
      // Bytes 0, 1 (then 2, 3) to bits 8-15 and 24-31; selector nibble 4
      // picks a byte of the zero operand.
      for (int64_t selector : {0x1404, 0x3424}) {
        Value x = NVVM::PermuteOp::create(b, i32, word, zero, i32c(selector),
                                          NVVM::PermuteMode::DEFAULT);
        Value placed = arith::ShRUIOp::create(
            b, arith::AndIOp::create(b, x, bits), i32c(4));
        halves.push_back(arith::OrIOp::create(
            b, placed, arith::AndIOp::create(b, x, signs)));
      }
    }
    Value x = vector::BitCastOp::create(
        b, bf16x16,
        vector::FromElementsOp::create(b, VectorType::get({8}, i32), halves));
    x = arith::MulFOp::create(b, x, bf16Splat(cf(std::ldexp(1.0, 120))));
    if (!p.scaledColumns()) {
      Value scale = memref::LoadOp::create(b, ringScales,
                                           ValueRange{add(scaleBase, row)});
      auto f32x16 = VectorType::get({16}, f32);
      x = arith::TruncFOp::create(
          b, bf16x16,
          arith::MulFOp::create(b, arith::ExtFOp::create(b, f32x16, x),
                                vector::BroadcastOp::create(b, f32x16, scale)));
    }
    for (int64_t h = 0; h < 2; ++h) {
      SmallVector<int64_t> lanes;
      for (int64_t i = 0; i < 8; ++i)
        lanes.push_back(8 * h + i);
      Value half = vector::ShuffleOp::create(b, x, x, lanes);
      vector::StoreOp::create(b, half, tiles,
                              ValueRange{offset(tile, row,
                                                add(col, idx(8 * h)))});
    }
  });
  if (!p.scaledColumns())
    return;
  for (int64_t r0 = 0; r0 < p.blockKV; r0 += p.threads()) {
    Value r = add(tid, idx(r0));
    ifThen(lt(r, idx(p.blockKV)), [&] {
      memref::StoreOp::create(
          b,
          memref::LoadOp::create(b, ringScales, ValueRange{add(scaleBase, r)}),
          keyScales, ValueRange{r});
    });
  }
}

SmallVector<Value> KernelEmitter::namedColumns(Value kv0) {
  // The lane's keys 2t, 2t + 1 of each n8 block.
  if (p.splitScores())
    kv0 = add(kv0, mul(warpgroup, p.blockKV / 2));
  Value keyBase = add(kv0, mul(quadCol, 2));
  int64_t n = p.splitScores() ? p.blockKV / 2 : p.blockKV;
  SmallVector<Value> out;
  for (int64_t c = 0; c < n; c += 8)
    for (int64_t e = 0; e < 2; ++e)
      out.push_back(selectedToken(add(keyBase, idx(c + e))).second);
  return out;
}

void KernelEmitter::scaleColumns(SmallVectorImpl<Accumulator> &s) {
  // The lane's keys 2t, 2t + 1 of n8 block j (of rows A: c0, c1; B: c2,
  // c3), from the warpgroup's first key: one 8-byte load a block.
  Value first = p.splitScores() ? mul(warpgroup, p.blockKV / 2) : idx(0);
  auto pair = VectorType::get({2}, f32);
  for (auto [j, acc] : llvm::enumerate(s)) {
    Value key = add(first, add(idx(8 * j), mul(quadCol, 2)));
    Value scales =
        vector::LoadOp::create(b, pair, keyScales, ValueRange{key},
                               /*nontemporal=*/false, llvm::MaybeAlign(8));
    for (int64_t e = 0; e < 4; ++e)
      acc[e] = fmul(acc[e], vector::ExtractOp::create(b, scales, e % 2));
  }
}

void KernelEmitter::ringStep(const SharedTile &tile, Value j, Value t,
                             int64_t ahead, bool nextIsV) {
  // Groups committed after tile j's: two tiles and two waits' empty
  // groups (waitAll commits one before it waits).
  waitAll(p.wgmma, /*pending=*/4);
  dequantize(tile, rem(j, Problem::kRing));
  publish();
  stageRaw(add(t, idx(ahead)), nextIsV, rem(add(j, idx(3)), Problem::kRing));
}

void KernelEmitter::sharedRingStep(Value j) {
  // Groups committed after tile j's: the previous wait's empty group,
  // tile j + 1's and this wait's. The wait's barrier tells that every
  // thread's copies of tile j (rows and scales) are done and that every
  // warp is done with the K tile (V of tile t - 1) and its scales (P of
  // tile t - 1); the publish, that the slot's raw rows and scales are
  // read (kvStep then copies tile j + 2 into it while S is computed).
  waitAll(p.wgmma, /*pending=*/2);
  dequantize(kTile, rem(j, 2));
  publish();
}

Value KernelEmitter::rowPosition(Value r) {
  Value i = arith::MinUIOp::create(b, rowQuery(r), sub(sq(), idx(1)));
  return arith::IndexCastOp::create(
      b, b.getIndexType(),
      memref::LoadOp::create(b, qpos, ValueRange{batch, i}));
}

std::pair<Value, Value> KernelEmitter::positionRange() {
  Value end = arith::MinUIOp::create(b, add(q0, idx(p.rowsPerHead)), sq());
  auto loop = scf::ForOp::create(
      b, q0, end, idx(1), ValueRange{idx(int64_t(1) << 62), idx(-1)},
      [&](OpBuilder &ob, Location loc, Value i, ValueRange range) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ob.getInsertionBlock(), ob.getInsertionPoint());
        Value pos = arith::IndexCastOp::create(
            b, b.getIndexType(),
            memref::LoadOp::create(b, qpos, ValueRange{batch, i}));
        Value lo = select(ge(pos, idx(0)),
                          arith::MinSIOp::create(b, range[0], pos), range[0]);
        Value hi = arith::MaxSIOp::create(b, range[1], pos);
        scf::YieldOp::create(b, ValueRange{lo, hi});
      });
  return {loop.getResult(0), loop.getResult(1)};
}

/// Replaces a paged `op` with buffers, the kernel launches and the result.
void rewrite(mnemo::PagedAttentionOp op, const Problem &p) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto buffer = [&](Value tensor) { return readOnlyBuffer(b, tensor); };
  Buffers in;
  in.q = buffer(op.getQuery());
  in.k = buffer(op.getKeyPool());
  in.v = valuesInKeys(op) ? in.k : buffer(op.getValuePool());
  in.sink = buffer(op.getSink());
  in.table = buffer(op.getBlockTable());
  in.lens = buffer(op.getContextLens());
  in.qpos = buffer(op.getQPositions());
  in.kScales = buffer(op.getKeyScales());
  in.vScales = buffer(op.getValueScales());
  if (op.getIndices())
    in.indices = buffer(op.getIndices());
  in.mask = buffer(op.getMask());
  op.replaceAllUsesWith(launchKernels(b, p, in, op.getResult().getType()));
  op.erase();
}

/// A paged attention with an f32 query and result over 16-bit pools as one
/// with the query rounded to the pools' type (the result widened back) when
/// `takes` accepts it; else `op`, unchanged.
mnemo::PagedAttentionOp
roundQuery(mnemo::PagedAttentionOp op,
           function_ref<bool(mnemo::PagedAttentionOp)> takes) {
  Type elem = op.getKeyPool().getType().getElementType();
  // FP8 rows are dequantized into bf16 tiles.
  if (isa<Float8E4M3FNType>(elem))
    elem = BFloat16Type::get(op.getContext());
  if ((!elem.isBF16() && !elem.isF16()) ||
      !op.getQuery().getType().getElementType().isF32() ||
      !op.getResult().getType().getElementType().isF32())
    return op;
  OpBuilder b(op);
  Value rounded = convertElements(b, op.getLoc(), op.getQuery(), elem);
  IRMapping map;
  map.map(op.getQuery(), rounded);
  return cast<mnemo::PagedAttentionOp>(keepNarrowed(
      op, map, {rounded.getDefiningOp<linalg::GenericOp>()}, elem,
      [&](Operation *clone) {
        return takes(cast<mnemo::PagedAttentionOp>(clone));
      }));
}

} // namespace mlir::mnemo::nvptx::attention

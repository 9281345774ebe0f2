//===- AttentionKernel.cpp - tensor-core attention kernels ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites a 16-bit mnemo.attention into one gpu.launch of a
// FlashAttention-style kernel (plus a combine kernel with split-KV): the
// online softmax on the accumulators in registers, K/V tiles in shared
// memory. sm_80: cp.async staging, ldmatrix, mma.sync m16n8k16. sm_90a: TMA
// loads on mbarriers, wgmma (P from registers). docs/GPU-TensorCores.md has
// the design; the fragment layouts are those of the PTX ISA ("Matrix
// fragments for mma.m16n8k16", "wgmma register fragments"). A RoPE feeding
// Q (or K, when a single query tile reads each K tile) is applied to the
// tile in shared memory (RopeOnLoad.h). A mnemo.paged_attention takes the
// same kernel (PagedAttentionKernel.cpp). On sm_90a a Dv past 256 (an
// absorbed MLA's 512) is split between two warpgroups that share the
// block's rows, and a group of more heads than rows takes several blocks.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernelEmitter.h"

#include "mnemo/Target/NVPTX/Chips.h"

#include <cmath>
#include <functional>
#include <limits>

namespace mlir::mnemo {
#define GEN_PASS_DEF_ATTENTIONKERNELPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace mlir::mnemo::nvptx::attention {

/// The tile configuration both ops share, from the facts `analyze` filled
/// in (element type, sizes, group); fails with `why` when the kernel cannot
/// take them.
LogicalResult configure(Problem &p, int64_t blockQ, int64_t blockKV,
                        bool wgmma, bool tma, int64_t splitKV,
                        int64_t smCount, int64_t sharedLimit,
                        std::string &why) {
  if (p.d % 16 || p.dv % 16)
    return why = "head dim not a multiple of 16", failure();
  p.blockQ = blockQ;
  // One warpgroup owns the 64 rows of a block on sm_90a; its PV product
  // (one wgmma of N = Dv) keeps Dv / 2 accumulators per thread. The panels
  // of the 128-byte swizzle are 64 columns wide.
  // TF32 takes mma.sync alone: wgmma's TF32 reads both operands K-major,
  // and V is not.
  p.wgmma =
      wgmma && !p.tf32() && blockQ == 64 && p.d % 64 == 0 && p.dv % 64 == 0;
  // Q fragments (mma.sync) and O accumulators live in registers: Dv / 2
  // f32 a thread with wgmma (128 at Dv 256), Dv / 2 + D / 4 with mma.sync.
  // A wider Dv is split between two warpgroups (each half a whole number
  // of panels), and a wider D only lengthens S's K loop (mma.sync: Q's
  // fragments then loaded a k-step at a time). Without wgmma that takes
  // values in the keys' tile: K, V and Q tiles of an MLA's 576 / 512
  // exceed sm_80's shared memory.
  if (!p.wgmma && (p.d > kMaxHeadDim || p.dv > kMaxHeadDim) &&
      (!p.sharedValues || p.d % 64 || p.dv > p.d))
    return why = "head dim above " + std::to_string(kMaxHeadDim) +
                 " without wgmma",
           failure();
  if (p.dv > kMaxSplitValueDim || (p.dv > kMaxHeadDim && p.dv % (2 * 64) != 0))
    return why = "value head dim above " + std::to_string(kMaxHeadDim) +
                 " that is not a multiple of 128 up to " +
                 std::to_string(kMaxSplitValueDim),
           failure();
  p.dvParts = p.dv > kMaxHeadDim ? 2 : 1;
  // TMA boxes cover the packed heads of a Q tile: 64 / G positions each.
  p.tma = p.wgmma && tma;
  // 64-key tiles: with mma.sync the S accumulators share the registers
  // with Q's fragments; with wgmma, 128 keys measured slower on an H200
  // (502 against 538 TFLOP/s, GQA 32/8 D128 S4096 causal).
  // 128-key tiles are for wgmma only; other ops keep 64.
  p.blockKV = blockKV && p.wgmma ? blockKV : 64;
  // A group larger than a block's rows (MQA over an absorbed MLA's latent:
  // 128 heads) is split into blocks of blockQ heads, one position each.
  p.headTiles = 1;
  if (p.group > p.blockQ) {
    if (p.group % p.blockQ)
      return why = "more query heads per KV head than rows per block, "
                   "and not a multiple of them",
             failure();
    p.headTiles = p.group / p.blockQ;
  }
  // Values in the keys take K's second buffer where it fits (else V is
  // staged from the key pool into a tile of its own).
  p.sharedValues = p.sharedValues && (p.wgmma || p.wide()) && p.dv <= p.d;
  if (p.sharedValues && p.sharedBytes() > sharedLimit)
    p.sharedValues = false;
  if (p.sharedBytes() > sharedLimit)
    return why = "tiles exceed the shared memory limit", failure();
  p.rowsPerHead = p.blockQ / p.blockHeads();
  p.splitKV = splitKV;
  p.smCount = smCount;
  return success();
}

/// The sizes of query `q`, keys `k` (or a key pool: its head count and
/// head dim) and values `v` into `p` (the key length too; a pool's is set
/// by the caller).
void setSizes(Problem &p, RankedTensorType q, RankedTensorType k,
              RankedTensorType v) {
  p.batch = q.getDimSize(0);
  p.hq = q.getDimSize(1);
  p.sq = q.getDimSize(2);
  p.d = q.getDimSize(3);
  p.hkv = k.getDimSize(1);
  p.skv = k.getDimSize(2);
  p.dv = v.getDimSize(3);
}

/// Checks a sink operand the kernel reads: static, at most 32 bits.
LogicalResult checkSink(Value sink, std::string &why) {
  if (!sink)
    return success();
  auto t = cast<RankedTensorType>(sink.getType());
  if (!t.hasStaticShape() || t.getElementTypeBitWidth() > 32)
    return why = "sink of dynamic shape or wider than f32", failure();
  return success();
}

LogicalResult checkMask(Value mask, std::string &why) {
  if (!mask)
    return success();
  Type m = cast<RankedTensorType>(mask.getType()).getElementType();
  if (!m.isF32() && !m.isBF16() && !m.isF16())
    return why = "mask is not f32, bf16 or f16", failure();
  return success();
}

/// Why `op` keeps the tiled path, or the problem to generate.
FailureOr<Problem> analyze(mnemo::AttentionOp op, int64_t blockQ,
                           int64_t blockKV, bool wgmma, bool tma,
                           int64_t splitKV, int64_t smCount,
                           int64_t sharedLimit, F32Precision f32Precision,
                           std::string &why) {
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto k = cast<RankedTensorType>(op.getKey().getType());
  auto v = cast<RankedTensorType>(op.getValue().getType());
  auto r = cast<RankedTensorType>(op.getResult().getType());
  Type elem = q.getElementType();
  if (!elem.isBF16() && !elem.isF16() && !elem.isF32())
    return why = "element type is not bf16, f16 or f32", failure();
  if (k.getElementType() != elem || v.getElementType() != elem ||
      r.getElementType() != elem)
    return why = "Q, K, V and result differ in element type", failure();
  if (elem.isF32() && f32Precision == F32Precision::cudaCores)
    return why = "f32 (f32-precision=f32)", failure();
  // Batch and sequence lengths may be dynamic; head counts and head dims
  // are static (the op's verifier).
  if (failed(checkMask(op.getMask(), why)) ||
      failed(checkSink(op.getSink(), why)))
    return failure();
  if ((q.hasStaticShape() && q.getNumElements() == 0) ||
      (k.hasStaticShape() && k.getNumElements() == 0))
    return why = "empty tensor", failure();
  // Without a softcap the scale is folded into the exponent after the row
  // maximum, which needs scale > 0.
  if (op.getEffectiveScale() <= 0 && !op.getSoftcapValue())
    return why = "non-positive scale", failure();
  Problem p;
  p.elem = elem;
  p.singleTf32 = f32Precision == F32Precision::tf32;
  setSizes(p, q, k, v);
  p.dynamic = !q.hasStaticShape() || !k.hasStaticShape() ||
              !v.hasStaticShape();
  p.group = op.getGroupSize();
  p.window = op.getWindowSize();
  if (failed(configure(p, blockQ, blockKV, wgmma, tma, splitKV, smCount,
                       sharedLimit, why)))
    return failure();
  // RoPE on the tiles: a block loads its Q tile once, but each K tile once
  // per query tile, so K's rotation joins the kernel only where there is
  // one query tile (every block would otherwise rotate the same tile).
  // Tables and positions of a dynamic shape stay a kernel of their own.
  // TF32 tiles are rotated by no one (rotate() takes 16-bit elements).
  if (!p.dynamic && !p.tf32())
    p.rope[0] = matchRopeOnLoad(op.getQuery(), elem, p.ropeWhy[0]);
  if (!p.dynamic && !p.tf32() && p.queryTiles() == 1)
    p.rope[1] = matchRopeOnLoad(op.getKey(), elem, p.ropeWhy[1]);
  for (int64_t i = 0; i < 2; ++i) {
    Value operand = i ? op.getKey() : op.getQuery();
    if (p.rope[i] || !isa_and_nonnull<mnemo::RopeOp, mnemo::RopeTablesOp>(
                         operand.getDefiningOp()))
      continue;
    if (p.tf32())
      p.ropeWhy[i] = "the tiles are f32";
    else if (p.dynamic)
      p.ropeWhy[i] = "the shape is dynamic";
    else if (i == 1 && p.queryTiles() > 1)
      p.ropeWhy[1] = "each K tile is read by " +
                     std::to_string(p.queryTiles()) + " query tiles";
  }
  p.scale = op.getEffectiveScale();
  p.softcap = op.getSoftcapValue();
  p.causal = op.getCausal();
  return p;
}

/// Computes `Sizes` of buffer `q` and `skv` keys (an index: K's length, or
/// a paged cache's capacity) before the launch, folding what is static, and
/// sets `p.splits` (kDynamic when known at run time only).
///
/// Flash-decoding: when there are fewer blocks than multiprocessors, each
/// query tile's KV range is split over enough blocks for about two per
/// multiprocessor (at least 2 KV tiles each, at most 64 splits) and a
/// second kernel combines their partial results. A window bounds the range
/// a block sees; a paged attention fills the blocks resident at once instead.
/// grid.z is batch x splits, at most 65535.
Sizes computeSizes(ImplicitLocOpBuilder &b, Problem &p, Value q, Value skv) {
  auto c = [&](int64_t v) { return indexConstant(b, v); };
  auto dim = [&](Value m, int64_t d) {
    return b.createOrFold<memref::DimOp>(m, c(d));
  };
  auto min = [&](Value x, Value y) {
    return b.createOrFold<arith::MinSIOp>(x, y);
  };
  auto max = [&](Value x, Value y) {
    return b.createOrFold<arith::MaxSIOp>(x, y);
  };
  auto ceilDiv = [&](Value x, Value y) {
    return b.createOrFold<arith::CeilDivSIOp>(x, y);
  };
  auto mul = [&](Value x, Value y) {
    return b.createOrFold<arith::MulIOp>(x, y);
  };
  Sizes s;
  s.batch = dim(q, 0);
  s.sq = dim(q, 2);
  s.skv = skv;
  s.queryTiles = ceilDiv(s.sq, c(p.rowsPerHead));
  Value blocks = mul(mul(s.queryTiles, c(p.hkv * p.headTiles)), s.batch);
  Value visible = s.skv;
  if (p.window)
    visible = min(visible, c(*p.window + p.rowsPerHead + p.blockKV));
  Value kvTiles = ceilDiv(visible, c(p.blockKV));
  Value splits = c(p.splitKV);
  if (!p.splitKV && p.paged) {
    // Decode is bound by memory: the splits fill one or two waves of the
    // blocks resident at once (Problem::residentBlocks), whichever keeps
    // more of them busy (256 blocks and 396 places: 3 splits, two waves
    // 97% full, not 1 and one wave 65% full), never a short last wave.
    int64_t resident = p.residentBlocks() * p.smCount;
    Value most = min(b.createOrFold<arith::DivSIOp>(kvTiles, c(2)), c(64));
    Value atLeastOne = max(blocks, c(1));
    Value one = max(c(1), min(b.createOrFold<arith::DivSIOp>(c(resident),
                                                              atLeastOne),
                              most));
    Value two = max(c(1), min(b.createOrFold<arith::DivSIOp>(
                                  c(2 * resident), atLeastOne),
                              most));
    // Busy places: blocks x splits over one wave's or two waves' places.
    Value busyOne = mul(mul(atLeastOne, one), c(2));
    Value busyTwo = mul(atLeastOne, two);
    Value fitsOne = b.createOrFold<arith::CmpIOp>(
        arith::CmpIPredicate::sle, mul(atLeastOne, two), c(resident));
    Value better = b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::sgt,
                                                 busyTwo, busyOne);
    // (Selects, not an or: the launch plan's expressions have no or.)
    splits = b.createOrFold<arith::SelectOp>(
        fitsOne, two, b.createOrFold<arith::SelectOp>(better, two, one));
  } else if (!p.splitKV) {
    Value wanted = min(ceilDiv(c(2 * p.smCount), max(blocks, c(1))),
                       min(b.createOrFold<arith::DivSIOp>(kvTiles, c(2)),
                           c(64)));
    Value few = b.createOrFold<arith::CmpIOp>(arith::CmpIPredicate::slt,
                                              blocks, c(p.smCount));
    splits = b.createOrFold<arith::SelectOp>(few, wanted, c(1));
  }
  Value most = max(c(1), min(kvTiles, b.createOrFold<arith::DivSIOp>(
                                          c(65535), max(s.batch, c(1)))));
  s.splits = min(max(splits, c(1)), most);
  std::optional<int64_t> known = getConstantIntValue(s.splits);
  // A dynamic problem whose split count folds to 1 (a paged attention of
  // a static batch with enough blocks) needs no partials nor combine.
  p.splits = known && (!p.dynamic || *known == 1) ? *known
                                                  : ShapedType::kDynamic;
  return s;
}

Value KernelEmitter::quadReduce(Value x, bool isMax) {
  for (int32_t offset : {1, 2}) {
    Value o = gpu::ShuffleOp::create(b, x, offset, 32, gpu::ShuffleMode::XOR)
                  .getShuffleResult();
    x = isMax ? Value(arith::MaximumFOp::create(b, x, o)) : fadd(x, o);
  }
  return x;
}

void KernelEmitter::forEachChunk(int64_t chunks,
                                 function_ref<void(Value, bool)> body) {
  for (int64_t c0 = 0; c0 < chunks; c0 += p.threads()) {
    Value c = add(tid, idx(c0));
    OpBuilder::InsertionGuard guard(b);
    bool guarded = c0 + p.threads() > chunks;
    if (guarded) {
      auto inRange = scf::IfOp::create(b, lt(c, idx(chunks)), false);
      b.setInsertionPoint(inRange.thenBlock()->getTerminator());
    }
    body(c, guarded);
  }
}

void KernelEmitter::stage(const SharedTile &r,
                          function_ref<RowSource(Value)> source,
                          SmallVectorImpl<Value> &tokens) {
  int64_t chunksPerRow = r.width / 8;
  int64_t perRow = p.threads() / r.rows;
  if (p.wide() && p.threads() % r.rows == 0 && chunksPerRow % perRow == 0) {
    // Wide rows: `perRow` threads share a row, each taking every perRow-th
    // chunk, so that a thread's copies share one source row (one block
    // table entry) and their addresses differ by constants.
    Value row = div(tid, perRow), lead = rem(tid, perRow);
    RowSource src = source(row);
    for (int64_t i = 0; i < chunksPerRow; i += perRow) {
      Value chunk = add(lead, idx(i));
      tokens.push_back(asyncCopy(r, row, mul(chunk, 8), src.memref, src.indices,
                                 mul(chunk, 8 / p.units()), src.valid));
    }
    return;
  }
  forEachChunk(r.rows * chunksPerRow, [&](Value c, bool guarded) {
    Value row = div(c, chunksPerRow);
    Value chunk = rem(c, chunksPerRow);
    RowSource src = source(row);
    // A missing row copies 0 bytes (zero fill) from a valid address.
    Value token = asyncCopy(r, row, mul(chunk, 8), src.memref, src.indices,
                            mul(chunk, 8 / p.units()), src.valid);
    // A copy under the guard needs no token: waitAll waits for all groups.
    if (!guarded)
      tokens.push_back(token);
  });
}

void KernelEmitter::rotate(const SharedTile &t, const RopeOnLoad &rope,
                           function_ref<Value(Value)> seqOf, int64_t seqLen) {
  int64_t half = rope.rotaryDim / 2, pairs = t.rows * half;
  // Adjacent threads take adjacent pairs of a row.
  auto rounds = scf::ForOp::create(b, idx(0), idx(pairs), idx(p.threads()));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(rounds.getBody()->getTerminator());
  Value c = add(tid, rounds.getInductionVar());
  ifThen(lt(c, idx(pairs)), [&] {
    Value row = div(c, half), k = rem(c, half);
    // Rows past the sequence hold zeros and stay zeros; their index is
    // clamped only to keep the table reads in bounds.
    Value s = arith::MinUIOp::create(b, seqOf(row), idx(seqLen - 1));
    auto [colX, colY] = ropePairColumns(b, rope, k);
    auto element = [&](Value col) {
      return add(offset(t, row, mul(div(col, 8), 8)), rem(col, 8));
    };
    Value at[2] = {element(colX), element(colY)}, v[2];
    for (int64_t i = 0; i < 2; ++i) {
      Value raw = memref::LoadOp::create(b, tiles, ValueRange{at[i]});
      v[i] = arith::ExtFOp::create(b, f32, raw);
    }
    auto [x, y] = rotatePair(b, rope, batch, s, k, v[0], v[1]);
    memref::StoreOp::create(b, arith::TruncFOp::create(b, elem, x), tiles,
                            ValueRange{at[0]});
    memref::StoreOp::create(b, arith::TruncFOp::create(b, elem, y), tiles,
                            ValueRange{at[1]});
  });
}

void KernelEmitter::publish() {
  if (p.wgmma)
    fenceAsyncShared();
  gpu::BarrierOp::create(b);
}

void KernelEmitter::tmaLoad(Value pred, int64_t barrier,
                            ArrayRef<TmaTile> loads) {
  ifThen(pred, [&] { tmaIssue(barrier, loads); });
}

void KernelEmitter::tmaIssue(int64_t barrier, ArrayRef<TmaTile> loads) {
  int64_t bytes = 0;
  for (const TmaTile &t : loads)
    bytes += 2 * t.rows * t.region.width;
  expectBytes(barriers[barrier], bytes);
  for (const TmaTile &t : loads) {
    for (int64_t panel = 0; panel < t.region.width / 64; ++panel) {
      int64_t element = t.region.base + panel * t.region.rows * 64;
      SmallVector<Value> coords = {i32c(64 * panel)};
      for (Value c : t.coords)
        coords.push_back(toI32(c));
      tmaCopy(t.map, coords, add(tilesAddress, idx(2 * element)),
              barriers[barrier]);
    }
  }
}

void KernelEmitter::tmaWait(int64_t barrier, Value parity) {
  waitPhase(barriers[barrier], parity);
}

Value KernelEmitter::sharedAddress(int64_t element, Value extraBytes) {
  Value a = add(tilesAddress, idx(2 * element));
  if (extraBytes)
    a = add(a, extraBytes);
  return arith::IndexCastUIOp::create(b, b.getI64Type(), a);
}

Value KernelEmitter::tileAddress(const SharedTile &t, Value bytes) {
  return sharedAddress(t.base, t.shift ? add(bytes, mul(t.shift, 2)) : bytes);
}

SmallVector<Accumulator>
KernelEmitter::wgmmaScores(function_ref<void()> meanwhile) {
  // K-major A (Q) and B (K): 8-row groups 1024 bytes apart (stride); a
  // k16 step is 32 bytes within a 128-byte row, a 64-column panel further.
  // With splitScores, warpgroup w's keys are rows n w to n w + n - 1 of the
  // K tile (a whole number of 8-row groups further).
  int64_t n = p.splitScores() ? p.blockKV / 2 : p.blockKV;
  Value keysBytes;
  if (p.splitScores())
    keysBytes = mul(warpgroup, n * 128);
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               SmallVector<Type>(n / 2, f32));
  wgmmaBegin();
  Value acc = LLVM::UndefOp::create(b, type);
  for (int64_t kk = 0; kk < p.d / 16; ++kk) {
    int64_t panel = kk / 4, step = 32 * (kk % 4);
    Value a = descriptor(
        sharedAddress(qTile.base, idx(panel * qTile.panelBytes() + step)), 16,
        1024);
    Value at = idx(panel * kTile.panelBytes() + step);
    if (keysBytes)
      at = add(at, keysBytes);
    Value bDesc = descriptor(tileAddress(kTile, at), 16, 1024);
    acc = wgmmaStep(type, acc, a, bDesc, n, /*bKMajor=*/true,
                    /*zero=*/kk == 0);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  if (meanwhile)
    meanwhile();
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  // Warp w holds rows 16w + g and 16w + g + 8 of each n8 block, as the
  // mma.sync accumulators do.
  SmallVector<Accumulator> s(n / 8);
  for (int64_t i = 0; i < n / 2; ++i)
    s[i / 4].push_back(
        LLVM::ExtractValueOp::create(b, acc, ArrayRef<int64_t>{i}));
  return s;
}

SmallVector<Accumulator>
KernelEmitter::wgmmaValues(ArrayRef<Fragment> pa, ArrayRef<Accumulator> o) {
  // P in registers (TensorCoreBuilder::wgmmaRegisterA). V is MN-major
  // (transposed B): 8 key rows of 128 bytes are 1024 bytes apart (stride),
  // 64-column panels one panel apart (leading); a k16 step is 16 key rows.
  // With Dv in parts, a warpgroup's columns start dvFirst / 64 panels in.
  int64_t regs = p.oCols() / 2;
  Value partBytes;
  if (dvFirst)
    partBytes = mul(div(dvFirst, 64), vTile.panelBytes());
  SmallVector<Value> acc;
  for (const Accumulator &a : o)
    acc.append(a.begin(), a.end());
  Value one = arith::ConstantOp::create(b, b.getI32IntegerAttr(1));
  // V's k16 step of keys from `key0` (a row of the tile).
  auto valueDesc = [&](Value key0) {
    Value at = mul(key0, 128);
    if (partBytes)
      at = add(at, partBytes);
    return descriptor(tileAddress(vTile, at), vTile.panelBytes(), 1024);
  };
  wgmmaBegin();
  // With splitScores `pa` holds this warpgroup's keys; the other's P is
  // read from the P tile (K-major A, as Q in wgmmaScores).
  int64_t own = p.splitScores() ? p.blockKV / 2 : 0;
  Value ownFirst = own ? mul(warpgroup, own) : idx(0);
  Value result;
  for (int64_t c = 0; c < int64_t(pa.size()); ++c) {
    result = wgmmaRegisterA(acc, pa[c], valueDesc(add(ownFirst, idx(16 * c))),
                            one, p.oCols());
    if (c + 1 < int64_t(pa.size()))
      for (int64_t i = 0; i < regs; ++i)
        acc[i] = LLVM::ExtractValueOp::create(b, result, ArrayRef<int64_t>{i});
  }
  if (own) {
    Value otherFirst = sub(idx(own), ownFirst);
    for (int64_t c = 0; c < own / 16; ++c) {
      Value key0 = add(otherFirst, idx(16 * c));
      // Key key0 of the P tile: its 64-column panel, 32 bytes a k16 step
      // within the panel's 128-byte rows.
      Value at =
          add(mul(div(key0, 64), pTile.panelBytes()), mul(rem(key0, 64), 2));
      Value a = descriptor(sharedAddress(pTile.base, at), 16, 1024);
      result = wgmmaStep(result.getType(), result, a, valueDesc(key0),
                         p.oCols(), /*bKMajor=*/false);
    }
  }
  for (int64_t i = 0; i < regs; ++i)
    acc[i] = LLVM::ExtractValueOp::create(b, result, ArrayRef<int64_t>{i});
  wgmmaEnd(0);
  SmallVector<Accumulator> out(regs / 4);
  for (int64_t i = 0; i < regs; ++i)
    out[i / 4].push_back(acc[i]);
  return out;
}

SmallVector<Accumulator> KernelEmitter::maskKeys(
    ArrayRef<Accumulator> s, Value k0, int64_t keys,
    function_ref<std::pair<Value, Value>(int64_t, int64_t)> keyAndPos) {
  // Uniform over the threads that share the keys: do they cross the end
  // of the keys, the causal diagonal or the window's edge?
  Value need = lt(skv(), add(k0, idx(keys)));
  if (p.causal)
    need = either(need, lt(firstPos, add(k0, idx(keys - 1))));
  if (p.window)
    need = either(need, ge(sub(lastPos, k0), idx(*p.window)));

  SmallVector<Type> types(s.size() * 4, f32);
  auto ifOp = scf::IfOp::create(b, types, need, /*withElseRegion=*/true);
  SmallVector<Value> flat;
  for (const Accumulator &acc : s)
    flat.append(acc.begin(), acc.end());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, flat);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value negInf = cf(-INFINITY);
    SmallVector<Value> masked;
    for (auto [j, acc] : llvm::enumerate(s)) {
      for (int64_t e = 0; e < 4; ++e) {
        auto [key, pos] = keyAndPos(j, e);
        Value hidden = ge(key, skv());
        if (p.causal)
          hidden = either(hidden, lt(pos, key));
        if (p.window)
          hidden = either(hidden, ge(sub(pos, key), idx(*p.window)));
        masked.push_back(select(hidden, negInf, acc[e]));
      }
    }
    scf::YieldOp::create(b, masked);
  }
  SmallVector<Accumulator> out(s.size());
  for (auto [i, r] : llvm::enumerate(ifOp.getResults()))
    out[i / 4].push_back(r);
  return out;
}

SmallVector<Accumulator> KernelEmitter::maskScores(ArrayRef<Accumulator> s,
                                                   Value kv0) {
  // Row (query) by column (key): the lane's keys 2t, 2t + 1 of each n8
  // block, its rows posA and posB (the block's keys from kv0).
  Value keyBase = add(kv0, mul(quadCol, 2));
  if (p.selected) {
    // Every row's entries: a column is masked where its entry names no
    // cached token (namedColumns, loaded while S was computed).
    SmallVector<Accumulator> out(s.begin(), s.end());
    for (auto [j, acc] : llvm::enumerate(out))
      for (int64_t e = 0; e < 4; ++e)
        acc[e] = select(named[2 * j + e % 2], acc[e], cf(-INFINITY));
    return out;
  }
  return maskKeys(s, kv0, 8 * int64_t(s.size()), [&](int64_t j, int64_t e) {
    return std::pair(add(keyBase, idx(8 * j + e % 2)), e < 2 ? posA : posB);
  });
}

void KernelEmitter::emit(gpu::LaunchOp launch, Value q, Value k, Value v,
                         Value out, Value sink, Value qOffset,
                         ArrayRef<Value> tensorMaps) {
  b.setInsertionPoint(launch.getBody().front().getTerminator());
  this->k = k;
  this->v = v;
  setUp(launch, qOffset, tensorMaps);
  prologue(q);
  auto loop = scf::ForOp::create(b, tLo, tHi, idx(1), initialState(sink));
  if (p.wide()) {
    // Every k-step's descriptors and every copy's addresses are loop
    // invariants: hoisted, they took 255 registers and spilled 600 bytes
    // at D 576 / Dv 512; computed in the loop, each is an add or two.
    MLIRContext *ctx = b.getContext();
    loop->setAttr(
        "llvm.loop_annotation",
        LLVM::LoopAnnotationAttr::get(
            ctx, {}, {}, {}, {}, {},
            LLVM::LoopLICMAttr::get(ctx, BoolAttr::get(ctx, true), {}), {}, {},
            {}, {}, {}, {}, {}, {}, {}));
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(b, kvStep(loop.getInductionVar(),
                                   loop.getRegionIterArgs()));
  }
  storeResults(loop.getResults(), out);
}

void KernelEmitter::setUp(gpu::LaunchOp launch, Value qOffset,
                          ArrayRef<Value> tensorMaps) {
  // The tiles (and mbarriers) in dynamic shared memory, 1024-byte aligned
  // (mnemo-gpu-extern-dynamic-shared).
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  Value raw = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                         MemRefLayoutAttrInterface(), workgroup));
  // The decode kernel lays out its own shared memory (the warps' rings,
  // then their results).
  tiles = raw;
  // With splitScores the view reaches the P tile after the tiles.
  int64_t elements = p.splitScores() ? p.statsOffset() / 2 : p.sharedElements();
  if (!p.decode)
    tiles = memref::ViewOp::create(b,
                                   MemRefType::get({elements}, elem,
                                                   MemRefLayoutAttrInterface(),
                                                   workgroup),
                                   raw, idx(0), ValueRange{});
  // TF32: the f32 view of the same memory, which cp.async copies f32 rows
  // into and V's elements are read from.
  if (p.tf32())
    wideTiles = memref::ViewOp::create(
        b,
        MemRefType::get({elements / 2}, f32, MemRefLayoutAttrInterface(),
                        workgroup),
        raw, idx(0), ValueRange{});
  if (p.splitScores()) {
    pTile = {p.exchangeOffset() / 2, p.blockQ, p.blockKV};
    rowStats = memref::ViewOp::create(
        b,
        MemRefType::get({2 * p.blockQ}, f32, MemRefLayoutAttrInterface(),
                        workgroup),
        raw, idx(p.statsOffset()), ValueRange{});
  }
  kTile = {p.kBase(), p.blockKV, p.d * p.units()};
  vTile = {p.vBase(), p.blockKV, p.dv * p.units()};
  if (p.fp8 && !p.decode) {
    ringRows = memref::ViewOp::create(
        b,
        MemRefType::get({p.ringSlots() * p.ringSlotBytes()},
                        b.getType<Float8E4M3FNType>(),
                        MemRefLayoutAttrInterface(), workgroup),
        raw, idx(p.ringOffset()), ValueRange{});
    ringScales = memref::ViewOp::create(
        b,
        MemRefType::get({p.ringSlots() * p.blockKV}, f32,
                        MemRefLayoutAttrInterface(), workgroup),
        raw, idx(p.ringScalesOffset()), ValueRange{});
    if (p.scaledColumns())
      keyScales = memref::ViewOp::create(
          b,
          MemRefType::get({p.blockKV}, f32, MemRefLayoutAttrInterface(),
                          workgroup),
          raw, idx(p.keyScalesOffset()), ValueRange{});
  }
  qTile = {p.qBase(), p.blockQ, p.d * p.units()};
  if (p.wgmma)
    tilesAddress = memref::ExtractAlignedPointerAsIndexOp::create(b, tiles);
  if (p.tma) {
    for (int64_t i = 0; i < 3; ++i)
      maps[i] = tensorMaps[i];
    for (int64_t i = 0; i < 2; ++i)
      barriers[i] =
          sharedPointer(add(tilesAddress, idx(p.barrierOffset() + 8 * i)));
  }

  tid = launch.getThreadIds().x;
  lane = rem(tid, 32);
  warp = div(tid, 32);
  lane8 = rem(lane, 8);
  laneMid = rem(div(lane, 8), 2);
  laneHi = div(lane, 16);
  quadCol = rem(lane, 4);
  Value quadRow = div(lane, 4);

  // Causal blocks run longest first: the last query tile sees most keys.
  Value qBlock = launch.getBlockIds().x;
  if (p.causal)
    qBlock = sub(sub(launch.getGridSize().x, idx(1)), qBlock);
  // grid.y is KV head x head tile.
  kvHead = launch.getBlockIds().y;
  Value headTile;
  if (p.headTiles > 1) {
    headTile = arith::RemUIOp::create(b, kvHead, idx(p.headTiles));
    kvHead = arith::DivUIOp::create(b, kvHead, idx(p.headTiles));
  }
  // With split-KV, blockIdx.z is batch x split.
  batch = launch.getBlockIds().z;
  if (p.splits != 1) {
    split = arith::RemUIOp::create(b, batch, splits());
    batch = arith::DivUIOp::create(b, batch, splits());
  }
  headBase = mul(kvHead, p.group);
  if (headTile)
    headBase = add(headBase, mul(headTile, p.blockHeads()));
  q0 = mul(qBlock, p.rowsPerHead);
  // Decode: every warp holds the block's 16 rows. With Dv in parts, warp
  // w of each warpgroup holds rows 16w to 16w + 15.
  Value rowWarp = warp;
  if (p.dvParts > 1) {
    rowWarp = rem(warp, 4);
    warpgroup = div(warp, 4);
    dvFirst = mul(warpgroup, p.oCols());
  }
  rowA = p.decode ? quadRow : add(mul(rowWarp, 16), quadRow);
  rowB = add(rowA, idx(8));
  if (p.paged) {
    // The sequence's own length (clamped to the table's capacity) and
    // query positions.
    Value l = arith::IndexCastOp::create(
        b, b.getIndexType(),
        memref::LoadOp::create(b, lens, ValueRange{batch}));
    // (selected: skv is the entries a query has, K.)
    capacity = p.selected
                   ? mul(memref::DimOp::create(b, table, idx(1)).getResult(),
                         p.pageSize)
                   : n.skv;
    len = arith::MaxSIOp::create(b, arith::MinSIOp::create(b, l, capacity),
                                 idx(0));
    std::tie(firstPos, lastPos) = positionRange();
    posA = rowPosition(rowA);
    posB = rowPosition(rowB);
  } else {
    if (p.selected)
      len = memref::DimOp::create(b, k, idx(2));
    qOff = qOffset ? qOffset : idx(0);
    firstPos = add(q0, qOff);
    Value lastQuery =
        sub(arith::MinUIOp::create(b, add(q0, idx(p.rowsPerHead)), sq()),
            idx(1));
    lastPos = add(lastQuery, qOff);
    posA = add(rowQuery(rowA), qOff);
    posB = add(rowQuery(rowB), qOff);
  }

  // KV tiles any row of the block can see.
  Value kvHi = skv();
  if (p.causal)
    kvHi = arith::MinSIOp::create(b, kvHi, add(lastPos, idx(1)));
  Value kvLo = idx(0);
  if (p.window)
    kvLo = arith::MaxSIOp::create(
        b, kvLo, sub(firstPos, idx(*p.window - 1)));
  tLo = div(kvLo, p.blockKV);
  tHi = arith::CeilDivSIOp::create(b, kvHi, idx(p.blockKV));
  if (split) {
    // This block's share: ceil(n / splits) tiles from tLo (maybe none).
    Value n = arith::MaxSIOp::create(b, sub(tHi, tLo), idx(0));
    Value chunk = arith::CeilDivSIOp::create(b, n, splits());
    tLo = add(tLo, arith::MulIOp::create(b, split, chunk));
    tHi = arith::MinSIOp::create(b, tHi, add(tLo, chunk));
  }
}

std::function<RowSource(Value)> KernelEmitter::kvRow(Value memref,
                                                      Value kv0) {
  if (p.paged)
    return [this, memref, kv0](Value r) {
      auto [page, row, valid] = pagedKey(add(kv0, r));
      return RowSource{memref, {page, kvHead, row}, valid};
    };
  return [this, memref, kv0](Value r) {
    Value key = add(kv0, r);
    if (p.selected) {
      auto [token, named] = selectedToken(key);
      return RowSource{memref, {batch, kvHead, token}, named};
    }
    return RowSource{memref, {batch, kvHead, key}, lt(key, skv())};
  };
}

SmallVector<Value> KernelEmitter::kvCoords(Value t) {
  return {mul(t, p.blockKV), kvHead, batch};
}

void KernelEmitter::prologue(Value q) {
  // The Q tile and the first K tile; then (mma.sync) this warp's 16 rows
  // of Q as A fragments for all of D.
  first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, idx(0));
  // Row r of the Q tile (cp.async staging).
  auto queryRow = [&](Value r) {
    return RowSource{q, {batch, rowHead(r), rowQuery(r)}, rowValid(r)};
  };
  // TMA coordinates past the column, innermost first; a Q box holds the
  // packed heads' positions.
  if (p.tma) {
    ifThen(first, [&] {
      for (Value bar : barriers)
        NVVM::MBarrierInitOp::create(b, bar, i32c(1), /*predicate=*/nullptr);
      NVVM::FenceMbarrierInitOp::create(b);
    });
    gpu::BarrierOp::create(b);
    // Nothing is loaded for a block without KV tiles: no copy may be in
    // flight when it exits.
    tmaLoad(both(first, lt(tLo, tHi)), 0,
            {TmaTile{qTile,
                     maps[0],
                     {q0, headBase, batch},
                     p.blockHeads() * p.rowsPerHead},
             TmaTile{kTile, maps[1], kvCoords(tLo), p.blockKV}});
  } else if (p.fp8 && p.sharedValues) {
    // Q, then the ring's first two tiles K(tLo), K(tLo + 1), a group each;
    // the first step awaits them.
    stage(qTile, queryRow, tokens);
    commit(tokens);
    stageRaw(tLo, /*isV=*/false, idx(0));
    stageRaw(add(tLo, idx(1)), /*isV=*/false, idx(1));
  } else if (p.fp8) {
    // Q, then the ring's first three tiles K(tLo), V(tLo), K(tLo + 1), a
    // group each; Q and K(tLo) are awaited (the wait's own empty group,
    // GK1 and GV0 may pend).
    stage(qTile, queryRow, tokens);
    commit(tokens);
    stageRaw(tLo, /*isV=*/false, idx(0));
    stageRaw(tLo, /*isV=*/true, idx(1));
    stageRaw(add(tLo, idx(1)), /*isV=*/false, idx(2));
    waitAll(p.wgmma, /*pending=*/3);
  } else {
    stage(qTile, queryRow, tokens);
    stage(kTile, kvRow(k, mul(tLo, p.blockKV)), tokens);
    commit(tokens);
    waitAll(p.wgmma);
    if (p.rope[0]) {
      rotate(qTile, p.rope[0], [&](Value r) { return rowQuery(r); }, p.sq);
      publish();
    }
  }
  // With wgmma, Q stays in shared memory as the A operand; with mma.sync
  // above D 256 too, read a k-step at a time (queryFragment).
  // TF32 too: Q's rounded values and rests would take 4 D registers.
  for (int64_t kk = 0; !p.wgmma && !p.wide() && !p.tf32() && kk < p.d / 16;
       ++kk)
    qFrag.push_back(queryFragment(kk));
}

Fragment KernelEmitter::queryFragment(int64_t kk) {
  // This warp's 16 rows (of its warpgroup's 64 with Dv in parts).
  Value rowWarp = p.dvParts > 1 ? rem(warp, 4) : warp;
  Value qRow = add(mul(rowWarp, 16), rem(lane, 16));
  return ldmatrix(qTile, qRow, add(idx(16 * kk), mul(laneHi, 8)), false);
}

void KernelEmitter::scoresTf32(int64_t kk, SmallVectorImpl<Accumulator> &s) {
  Fragment aHi, aLo, bHi, bLo;
  splitFragment(queryFragment(kk), aHi, aLo, !p.singleTf32);
  for (int64_t jp = 0; jp < p.blockKV / 16; ++jp) {
    // K's rows are the n dimension: two n8 blocks an ldmatrix.x4, as for
    // 16-bit tiles (16 units are the k8 step's 8 floats).
    Value row = add(idx(16 * jp), add(mul(laneHi, 8), lane8));
    Fragment f =
        ldmatrix(kTile, row, add(idx(16 * kk), mul(laneMid, 8)), false);
    bHi.clear();
    bLo.clear();
    splitFragment(f, bHi, bLo, !p.singleTf32);
    for (int64_t h = 0; h < 2; ++h)
      s[2 * jp + h] =
          mmaSplit(aHi, aLo, ArrayRef<Value>(bHi).slice(2 * h, 2),
                   bLo.empty() ? ArrayRef<Value>()
                               : ArrayRef<Value>(bLo).slice(2 * h, 2),
                   s[2 * jp + h]);
  }
}

void KernelEmitter::valuesTf32(ArrayRef<Accumulator> s,
                               SmallVectorImpl<Accumulator> &o) {
  auto bits = [&](Value x) { return arith::BitcastOp::create(b, i32, x); };
  // V's element (row, col), col in floats: its 16-byte chunk's offset in
  // units (offset() takes whole chunks) and the float within it.
  auto valueAt = [&](Value row, Value col) {
    Value units = mul(col, 2);
    Value within = rem(units, 8);
    Value at = add(offset(vTile, row, sub(units, within)), within);
    return bits(memref::LoadOp::create(b, wideTiles, ValueRange{div(at, 2)}));
  };
  // The lane's column of each n8 block of O: g of the block (with Dv in
  // parts, from the warpgroup's first column).
  Value laneCol = div(lane, 4);
  if (dvFirst)
    laneCol = add(laneCol, dvFirst);
  for (int64_t j = 0; j < int64_t(s.size()); ++j) {
    // Keys 2t and 2t + 1 of block j, in slots t and t + 4.
    Fragment a = {bits(s[j][0]), bits(s[j][2]), bits(s[j][1]), bits(s[j][3])};
    Fragment aHi, aLo;
    splitFragment(a, aHi, aLo, !p.singleTf32);
    Value key = add(idx(8 * j), mul(quadCol, 2));
    for (int64_t nb = 0; nb < int64_t(o.size()); ++nb) {
      Value col = add(laneCol, idx(8 * nb));
      Fragment bHi, bLo;
      splitFragment({valueAt(key, col), valueAt(add(key, idx(1)), col)}, bHi,
                    bLo, !p.singleTf32);
      o[nb] = mmaSplit(aHi, aLo, bHi, bLo, o[nb]);
    }
  }
}

Value KernelEmitter::maskAt(Value row, Value key) {
  auto type = cast<MemRefType>(mask.getType());
  // Its dims aligned on the right of [B, Hq, Sq, Skv]; an extent of 1 is
  // broadcast (as the reference decomposition reads it). Rows and keys
  // outside the sequences read element 0 and add nothing.
  Value valid = both(rowValid(row), lt(key, skv()));
  Value full[4] = {batch, rowHead(row), rowQuery(row), key};
  int64_t lead = 4 - type.getRank();
  SmallVector<Value> indices;
  for (int64_t i = 0; i < type.getRank(); ++i)
    indices.push_back(type.getDimSize(i) == 1
                          ? idx(0)
                          : select(valid, full[lead + i], idx(0)));
  Value m = memref::LoadOp::create(b, mask, indices);
  if (m.getType() != f32)
    m = arith::ExtFOp::create(b, f32, m);
  return select(valid, m, cf(0.0));
}

SmallVector<Value> KernelEmitter::initialState(Value sink) {
  // Loop state: O accumulators, then the running max (log2 units) and the
  // lane's partial sum of rows A and B.
  int64_t oBlocks = p.oCols() / 8;
  SmallVector<Value> init(oBlocks * 4, cf(0.0));
  Value mA = cf(-INFINITY), mB = mA, lA = cf(0.0), lB = lA;
  if (sink) {
    Value lastHead = idx(p.hq - 1);
    auto sinkOf = [&](Value row) {
      Value h = arith::MinUIOp::create(b, rowHead(row), lastHead);
      Value s = memref::LoadOp::create(b, sink, ValueRange{h});
      if (s.getType() != f32)
        s = arith::ExtFOp::create(b, f32, s);
      return fmul(s, cf(M_LOG2E));
    };
    mA = sinkOf(rowA);
    mB = sinkOf(rowB);
    // exp(sink) joins the denominator once per row: in lane 0 of the quad,
    // and with split-KV in the first split only.
    Value quadLead = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                           quadCol, idx(0));
    // With splitScores the rows' sums add both warpgroups': the first's.
    if (p.splitScores())
      quadLead =
          both(quadLead, arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                               warpgroup, idx(0)));
    if (split) {
      Value firstSplit =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, split, idx(0));
      mA = select(firstSplit, mA, cf(-INFINITY));
      mB = select(firstSplit, mB, cf(-INFINITY));
      quadLead = both(quadLead, firstSplit);
    }
    lA = lB = select(quadLead, cf(1.0), cf(0.0));
  }
  init.append({mA, mB, lA, lB});
  return init;
}

void KernelEmitter::stageKeys(Value next, const SharedTile &tile) {
  ifThen(lt(next, tHi), [&] {
    tokens.clear();
    stage(tile, kvRow(k, mul(next, p.blockKV)), tokens);
    commit(tokens);
  });
}

void KernelEmitter::stageNextKeys(Value next, const SharedTile &tile) {
  auto more = scf::IfOp::create(b, lt(next, tHi), /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(more.thenBlock()->getTerminator());
  tokens.clear();
  stage(tile, kvRow(k, mul(next, p.blockKV)), tokens);
  commit(tokens);
  waitAll(p.wgmma, /*pending=*/2);
  b.setInsertionPoint(more.elseBlock()->getTerminator());
  waitAll(p.wgmma);
}

SmallVector<Value> KernelEmitter::kvStep(Value t, ValueRange state) {
  int64_t oBlocks = p.oCols() / 8;
  Value kv0 = mul(t, p.blockKV);

  // FlashAttention-2's schedule with one buffer each for K and V: K(t)
  // is in flight from the last iteration; V(t) loads during S = QK^T and
  // the softmax, K(t + 1) during O += PV. Each barrier also tells that
  // every warp is done with the buffer the next copy overwrites.
  // Phase of this iteration's use of both mbarriers.
  Value parity = rem(sub(t, tLo), 2);
  if (p.tma) {
    gpu::BarrierOp::create(b);
    tmaLoad(first, 1, {TmaTile{vTile, maps[2], kvCoords(t), p.blockKV}});
    tmaWait(0, parity);
    // Q arrived with the first K tile.
    if (p.rope[0])
      ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, tLo), [&] {
        rotate(qTile, p.rope[0], [&](Value r) { return rowQuery(r); }, p.sq);
        if (!p.rope[1])
          publish();
      });
  } else if (p.fp8 && p.sharedValues) {
    sharedRingStep(sub(t, tLo));
  } else if (p.fp8) {
    // K(t) is ring tile 2 (t - tLo); V(t + 1) comes three tiles later.
    ringStep(kTile, mul(sub(t, tLo), 2), t, /*ahead=*/1, /*nextIsV=*/true);
  } else if (p.sharedValues) {
    // V is the K tile's leading columns. K(t), the one group in flight, is
    // awaited; the barrier also tells that every warp is done with the
    // other buffer (K and V of tile t - 1), into which K(t + 1) loads while
    // S is computed (below) and during the rest of the step. (One buffer,
    // mma.sync: K(t) loaded after PV(t - 1), below.)
    if (p.kBuffers() == 2) {
      Value buffer = rem(sub(t, tLo), 2);
      kTile.shift = vTile.shift = mul(buffer, p.blockKV * p.d);
    }
    waitAll(p.wgmma);
  } else if (p.paged) {
    // Decode reads each tile once and computes little on it: V(t) loads
    // while K(t) is awaited, and K(t + 1) (below) while V(t) is, so two
    // tiles are in flight. waitAll commits an empty group before it waits:
    // pending 2 leaves the last real group in flight.
    gpu::BarrierOp::create(b); // every warp is done with V(t - 1)
    tokens.clear();
    stage(vTile, kvRow(v, kv0), tokens);
    commit(tokens);
    waitAll(p.wgmma, /*pending=*/2);
  } else {
    waitAll(p.wgmma);
    tokens.clear();
    stage(vTile, kvRow(v, kv0), tokens);
    commit(tokens);
  }
  if (p.rope[1]) {
    rotate(kTile, p.rope[1], [&](Value r) { return add(kv0, r); }, p.skv);
    publish();
  }

  // S = Q K^T: K's rows are the n dimension, read untransposed. With
  // values in the keys, the next K tile's copies (their block-table and
  // index loads first) are issued while the tensor cores compute S; with
  // selected keys, the loads of which columns name a token too.
  auto meanwhile = [&] {
    Value next = add(t, idx(1));
    if (p.sharedValues && p.fp8) {
      // Ring slot (t - tLo) % 2, just dequantized, takes K(t + 2).
      stageRaw(add(t, idx(2)), /*isV=*/false, rem(sub(t, tLo), 2));
    } else if (p.sharedValues && p.kBuffers() == 2) {
      SharedTile nextTile = kTile;
      nextTile.shift = mul(sub(idx(1), rem(sub(t, tLo), 2)), p.blockKV * p.d);
      stageKeys(next, nextTile);
    }
    if (p.selected)
      named = namedColumns(kv0);
  };
  SmallVector<Accumulator> s;
  if (p.wgmma) {
    s = wgmmaScores(meanwhile);
  } else if (p.tf32()) {
    s.assign(p.blockKV / 8, Accumulator(4, cf(0.0)));
    for (int64_t kk = 0; kk < p.d * p.units() / 16; ++kk)
      scoresTf32(kk, s);
    meanwhile();
  } else {
    s.assign(p.blockKV / 8, Accumulator(4, cf(0.0)));
    for (int64_t kk = 0; kk < p.d / 16; ++kk)
      for (int64_t jp = 0; jp < p.blockKV / 16; ++jp) {
        Value row = add(idx(16 * jp), add(mul(laneHi, 8), lane8));
        Fragment f = ldmatrix(kTile, row,
                              add(idx(16 * kk), mul(laneMid, 8)), false);
        Fragment a = qFrag.empty() ? queryFragment(kk) : qFrag[kk];
        s[2 * jp] = mma(a, {f[0], f[1]}, s[2 * jp]);
        s[2 * jp + 1] = mma(a, {f[2], f[3]}, s[2 * jp + 1]);
      }
    meanwhile();
  }

  // Online softmax of rows A (c0, c1) and B (c2, c3): s becomes P. With
  // scaledColumns the keys' scales apply to S, then to P (not to the
  // rows' sums).
  if (p.scaledColumns())
    scaleColumns(s);
  Value m[2] = {state[oBlocks * 4], state[oBlocks * 4 + 1]};
  Value l[2] = {state[oBlocks * 4 + 2], state[oBlocks * 4 + 3]};
  Value alpha[2];
  onlineSoftmax(s, kv0, m, l, alpha);
  if (p.scaledColumns())
    scaleColumns(s);
  if (p.splitScores())
    storeSharedP(s);

  Value next = add(t, idx(1));
  if (p.tma) {
    gpu::BarrierOp::create(b);
    tmaLoad(both(first, lt(next, tHi)), 0,
            {TmaTile{kTile, maps[1], kvCoords(next), p.blockKV}});
    tmaWait(1, parity);
  } else if (p.sharedValues) {
    // K(t + 1) is in flight since the step began (16-bit pools: into the
    // other buffer; FP8: raw, with K(t + 2)); V(t) is in K(t)'s tile.
  } else if (p.fp8) {
    // V(t) takes the tile K(t) used: the wait's barrier orders it after
    // every warp's S. K(t + 2) comes three tiles later.
    ringStep(vTile, add(mul(sub(t, tLo), 2), idx(1)), t, /*ahead=*/2,
             /*nextIsV=*/false);
  } else if (p.paged) {
    gpu::BarrierOp::create(b); // every warp is done with K(t)
    stageNextKeys(next, kTile);
  } else {
    waitAll(p.wgmma);
    stageKeys(next, kTile);
  }

  // O = alpha O + P V, P repacked from the S accumulators as A fragments.
  SmallVector<Accumulator> o(oBlocks);
  for (int64_t j = 0; j < oBlocks; ++j)
    for (int64_t e = 0; e < 4; ++e)
      o[j].push_back(fmul(state[4 * j + e], alpha[e / 2]));
  SmallVector<Fragment> pa;
  for (int64_t c = 0; !p.tf32() && c < int64_t(s.size()) / 2; ++c)
    pa.push_back({pack(s[2 * c][0], s[2 * c][1]),
                  pack(s[2 * c][2], s[2 * c][3]),
                  pack(s[2 * c + 1][0], s[2 * c + 1][1]),
                  pack(s[2 * c + 1][2], s[2 * c + 1][3])});
  if (p.wgmma) {
    o = wgmmaValues(pa, o);
  } else if (p.tf32()) {
    valuesTf32(s, o);
  } else {
    for (int64_t c = 0; c < p.blockKV / 16; ++c)
      for (int64_t jp = 0; jp < oBlocks / 2; ++jp) {
        Value row = add(idx(16 * c), add(mul(laneMid, 8), lane8));
        Value col = add(idx(16 * jp), mul(laneHi, 8));
        if (dvFirst)
          col = add(col, dvFirst);
        Fragment f = ldmatrix(vTile, row, col, true);
        o[2 * jp] = mma(pa[c], {f[0], f[1]}, o[2 * jp]);
        o[2 * jp + 1] = mma(pa[c], {f[2], f[3]}, o[2 * jp + 1]);
      }
  }
  // One K buffer (mma.sync): K(t + 1) takes it once every warp's PV(t) is
  // done.
  if (p.sharedValues && !p.fp8 && p.kBuffers() == 1) {
    gpu::BarrierOp::create(b);
    stageKeys(next, kTile);
  }
  SmallVector<Value> yields;
  for (const Accumulator &acc : o)
    yields.append(acc.begin(), acc.end());
  yields.append({m[0], m[1], l[0], l[1]});
  return yields;
}

void KernelEmitter::onlineSoftmax(SmallVectorImpl<Accumulator> &s, Value kv0,
                                  Value m[2], Value l[2], Value alpha[2]) {
  // Scores in log2 units are `unit * x`. Without a softcap or an additive
  // mask the scale is folded into the exponent (one fma per score); with
  // either, the scores are computed first. The limits (keys, causal,
  // window) set -inf either way. The tanh is the
  // hardware's approximation (tanh.approx.f32, relative error 2^-11, below
  // the 16-bit tiles' rounding; FlashAttention's softcap uses it too): the
  // polynomial with its IEEE division took half the kernel's time.
  double unit = p.scale * M_LOG2E;
  // With splitScores the warpgroup's keys start n further.
  if (p.splitScores())
    kv0 = add(kv0, mul(warpgroup, p.blockKV / 2));
  // With a softcap or a mask the scores are put in log2 units here: scale
  // s, capped, plus the mask.
  if (p.softcap || mask) {
    unit = 1.0;
    // A finite score stays finite in log2 units: a mask of f32's lowest
    // (an export's "masked") would overflow to -inf, and a row masked
    // that way whole would give zeros instead of the mean of its values.
    Value lowest = cf(-std::numeric_limits<float>::max() / M_LOG2E);
    // (f32 tiles keep f32's accuracy: the polynomial tanh.)
    auto tanhFlags =
        p.tf32() ? arith::FastMathFlags::none : arith::FastMathFlags::afn;
    for (auto [j, acc] : llvm::enumerate(s))
      for (int64_t e = 0; e < 4; ++e) {
        Value x = acc[e];
        if (p.softcap) {
          x = math::TanhOp::create(b, fmul(x, cf(p.scale / *p.softcap)),
                                   tanhFlags);
          if (!mask) {
            acc[e] = fmul(x, cf(*p.softcap * M_LOG2E));
            continue;
          }
          x = fmul(x, cf(*p.softcap));
        } else {
          x = fmul(x, cf(p.scale));
        }
        // The lane's keys 2t, 2t + 1 of each n8 block, rows A (c0, c1)
        // and B (c2, c3).
        Value key = add(kv0, add(idx(8 * j + e % 2), mul(quadCol, 2)));
        x = fadd(x, maskAt(e < 2 ? rowA : rowB, key));
        Value finite = arith::CmpFOp::create(b, arith::CmpFPredicate::ONE, x,
                                             cf(-INFINITY));
        x = select(finite, arith::MaximumFOp::create(b, x, lowest), x);
        acc[e] = fmul(x, cf(M_LOG2E));
      }
  }
  s = maskScores(s, kv0);

  // Row state: m is kept in log2 units (scale > 0, so the unit commutes
  // with the maximum), l is this lane's partial sum. With splitScores the
  // rows' maxima are both warpgroups' (the same m in each), l this lane's
  // sum over its warpgroup's keys.
  if (!p.splitScores()) {
    for (int64_t h = 0; h < 2; ++h)
      softmaxRow(s, h, cf(unit), m[h], l[h], alpha[h]);
    return;
  }
  Value mx[2] = {rowMax(s, 0), rowMax(s, 1)};
  auto [otherA, otherB] = exchangeRows(mx[0], mx[1]);
  mx[0] = arith::MaximumFOp::create(b, mx[0], otherA);
  mx[1] = arith::MaximumFOp::create(b, mx[1], otherB);
  for (int64_t h = 0; h < 2; ++h)
    softmaxFrom(s, h, cf(unit), mx[h], m[h], l[h], alpha[h]);
}

Value KernelEmitter::rowMax(ArrayRef<Accumulator> s, int64_t h) {
  Value mx = cf(-INFINITY);
  for (const Accumulator &acc : s)
    for (int64_t e = 2 * h; e < 2 * h + 2; ++e)
      mx = arith::MaximumFOp::create(b, mx, acc[e]);
  return quadReduce(mx, /*isMax=*/true);
}

std::pair<Value, Value> KernelEmitter::exchangeRows(Value x, Value y) {
  // Lane 0 of each quad writes its rows; slot w * blockQ + row.
  Value own = mul(warpgroup, p.blockQ);
  Value other = mul(sub(idx(1), warpgroup), p.blockQ);
  ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, quadCol, idx(0)),
         [&] {
           memref::StoreOp::create(b, x, rowStats, ValueRange{add(own, rowA)});
           memref::StoreOp::create(b, y, rowStats, ValueRange{add(own, rowB)});
         });
  gpu::BarrierOp::create(b);
  return {memref::LoadOp::create(b, rowStats, ValueRange{add(other, rowA)}),
          memref::LoadOp::create(b, rowStats, ValueRange{add(other, rowB)})};
}

void KernelEmitter::storeSharedP(ArrayRef<Accumulator> s) {
  // The lane's keys 2t, 2t + 1 of n8 block j are columns n w + 8 j + 2t of
  // rows A (c0, c1) and B (c2, c3): a 4-byte pair within its 16-byte chunk.
  Value first = mul(warpgroup, p.blockKV / 2);
  auto pair = VectorType::get({2}, p.elem);
  for (auto [j, acc] : llvm::enumerate(s))
    for (int64_t h = 0; h < 2; ++h) {
      Value row = h ? rowB : rowA;
      Value at =
          add(offset(pTile, row, add(first, idx(8 * j))), mul(quadCol, 2));
      Value v = vector::FromElementsOp::create(
          b, VectorType::get({2}, f32), ValueRange{acc[2 * h], acc[2 * h + 1]});
      vector::StoreOp::create(b, arith::TruncFOp::create(b, pair, v), tiles,
                              ValueRange{at}, /*nontemporal=*/false,
                              llvm::MaybeAlign(4));
    }
  publish();
}

void KernelEmitter::softmaxRow(SmallVectorImpl<Accumulator> &s, int64_t h,
                               Value unit, Value &m, Value &l, Value &alpha) {
  softmaxFrom(s, h, unit, rowMax(s, h), m, l, alpha);
}

void KernelEmitter::softmaxFrom(SmallVectorImpl<Accumulator> &s, int64_t h,
                                Value unit, Value mx, Value &m, Value &l,
                                Value &alpha) {
  mx = arith::MaximumFOp::create(b, m, fmul(mx, unit));
  // A row that has seen no key yet keeps -inf and subtracts 0.
  Value none =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mx, cf(-INFINITY));
  Value base = select(none, cf(0.0), mx);
  alpha = exp2(fsub(m, base));
  Value negBase = arith::NegFOp::create(b, base);
  Value sum = cf(0.0);
  for (Accumulator &acc : s)
    for (int64_t e = 2 * h; e < 2 * h + 2; ++e) {
      acc[e] = exp2(math::FmaOp::create(b, acc[e], unit, negBase));
      sum = fadd(sum, acc[e]);
    }
  l = fadd(fmul(l, alpha), sum);
  m = mx;
}

void KernelEmitter::storeResults(ValueRange result, Value out) {
  int64_t oBlocks = p.oCols() / 8;
  // O / l (0 for a row that saw no key), stored as 16-bit pairs; with
  // split-KV as f32 partials with their log2-sum-exp (-inf: no key). With
  // splitScores a row's sum is both warpgroups'.
  Value sums[2];
  if (p.splitScores()) {
    for (int64_t h = 0; h < 2; ++h)
      sums[h] = quadReduce(result[oBlocks * 4 + 2 + h], /*isMax=*/false);
    auto [otherA, otherB] = exchangeRows(sums[0], sums[1]);
    sums[0] = fadd(sums[0], otherA);
    sums[1] = fadd(sums[1], otherB);
  }
  for (int64_t h = 0; h < 2; ++h) {
    Value l = sums[h] ? sums[h]
                      : quadReduce(result[oBlocks * 4 + 2 + h],
                                   /*isMax=*/false);
    Value seen = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l,
                                       cf(0.0));
    // A paged attention's padding query (position -1) yields zeros.
    if (p.paged)
      seen = both(seen, ge(h ? posB : posA, idx(0)));
    Value inv = select(seen, arith::DivFOp::create(b, cf(1.0), l), cf(0.0));
    Value row = h ? rowB : rowA;
    ifThen(rowValid(row), [&] {
      if (!split)
        return storeRow(result, h, row, l, seen, inv, out, false);
      if (p.splits != ShapedType::kDynamic)
        return storeRow(result, h, row, l, seen, inv, out, true);
      // A split count chosen at run time: partials only where there are
      // several splits (the combine kernel then runs).
      auto ifOp = scf::IfOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, splits(),
                                   idx(1)),
          /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      storeRow(result, h, row, l, seen, inv, out, true);
      b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
      storeRow(result, h, row, l, seen, inv, out, false);
    });
  }
}

void KernelEmitter::storeRow(ValueRange result, int64_t h, Value row, Value l,
                             Value seen, Value inv, Value out, bool partial) {
  int64_t oBlocks = p.oCols() / 8;
  Value head = rowHead(row), query = rowQuery(row);
  if (partial) {
    Value log2l = LLVM::CallIntrinsicOp::create(
                      b, f32, b.getStringAttr("llvm.nvvm.lg2.approx.f"),
                      ValueRange{l})
                      .getResult(0);
    Value m = result[oBlocks * 4 + h];
    Value rowLse = select(seen, fadd(m, log2l), cf(-INFINITY));
    // One thread of the row stores it (the first warpgroup's, with Dv in
    // parts).
    Value writes =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, quadCol, idx(0));
    if (warpgroup)
      writes = both(writes, arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                                  warpgroup, idx(0)));
    ifThen(writes,
           [&] {
             memref::StoreOp::create(b, rowLse, lse,
                                     ValueRange{split, batch, head, query});
           });
  }
  for (int64_t j = 0; j < oBlocks; ++j) {
    Value pair = vector::FromElementsOp::create(
        b, VectorType::get({2}, f32),
        ValueRange{fmul(result[4 * j + 2 * h], inv),
                   fmul(result[4 * j + 2 * h + 1], inv)});
    Value col = add(idx(8 * j), mul(quadCol, 2));
    if (dvFirst)
      col = add(col, dvFirst);
    // Dv is a multiple of 16 and the column even: a pair is 4-byte aligned
    // in 16 bits, 8-byte aligned in f32.
    if (partial) {
      vector::StoreOp::create(b, pair, part,
                              ValueRange{split, batch, head, query, col},
                              /*nontemporal=*/false, llvm::MaybeAlign(8));
      continue;
    }
    if (!p.tf32())
      pair = arith::TruncFOp::create(b, VectorType::get({2}, p.elem), pair);
    vector::StoreOp::create(b, pair, out, ValueRange{batch, head, query, col},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(p.tf32() ? 8 : 4));
  }
}

/// The kernel launches over `in` before `b`'s insertion point; returns the
/// result tensor of type `resultType`.
Value launchKernels(ImplicitLocOpBuilder &b, Problem p, const Buffers &in,
                    RankedTensorType resultType) {
  Value q = in.q, k = in.k, v = in.v;
  // Keys: a paged attention's table capacity (selected: the entries a
  // query has).
  Value skv = p.selected ? b.createOrFold<memref::DimOp>(in.indices, 2)
              : p.paged  ? b.createOrFold<arith::MulIOp>(
                              b.createOrFold<memref::DimOp>(in.table, 1),
                              indexConstant(b, p.pageSize))
                        : b.createOrFold<memref::DimOp>(k, 2);
  Sizes n = computeSizes(b, p, q, skv);
  // The result is [B, Hq, Sq, Dv]: Q's batch and length.
  SmallVector<Value> outDims;
  if (resultType.isDynamicDim(0))
    outDims.push_back(n.batch);
  if (resultType.isDynamicDim(2))
    outDims.push_back(n.sq);
  Value out = memref::AllocOp::create(
      b, MemRefType::get(resultType.getShape(), p.elem), outDims,
      b.getI64IntegerAttr(64));

  // TMA: a tensor map per operand, 64-column boxes with the 128B swizzle
  // (box sizes in memref order). The plan builder turns each into a
  // `tensormap` buffer that the executor encodes; the kernel takes its
  // address as a memref<128xi8>.
  SmallVector<Value> maps;
  if (p.tma) {
    auto map = [&](Value buffer, ArrayRef<int64_t> box) {
      return createTensorMap(b, buffer, box, p.elem);
    };
    maps = {map(q, {1, p.blockHeads(), p.rowsPerHead, 64}),
            map(k, {1, 1, p.blockKV, 64}), map(v, {1, 1, p.blockKV, 64})};
  }
  // decodeTma: boxes of R rows of one page and head, from the pools
  // [Pages, Hkv, P, D] and their scales [Pages, Hkv, P].
  if (p.decodeTma) {
    int64_t rows = p.decodeBoxRows();
    auto pool = [&](Value buffer, int64_t width) {
      return createTensorMap(
          b, buffer, {1, 1, rows, width},
          cast<MemRefType>(buffer.getType()).getElementType(),
          Problem::tmaSwizzle(width * p.poolBytes()));
    };
    auto scales = [&](Value buffer) {
      return createTensorMap(b, buffer, {1, 1, rows}, b.getF32Type(),
                             /*swizzle=*/0);
    };
    maps = {pool(k, p.d), pool(v, p.dv), scales(in.kScales),
            scales(in.vScales)};
  }
  // Split-KV partials and their log2-sum-exp; with a split count chosen at
  // run time, empty when it is 1.
  Value part, lse;
  if (p.splits > 1) {
    part = memref::AllocOp::create(
        b,
        MemRefType::get({p.splits, p.batch, p.hq, p.sq, p.dv}, b.getF32Type()),
        b.getI64IntegerAttr(64));
    lse = memref::AllocOp::create(
        b, MemRefType::get({p.splits, p.batch, p.hq, p.sq}, b.getF32Type()),
        b.getI64IntegerAttr(64));
  } else if (p.splits == ShapedType::kDynamic) {
    Value several = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                                          n.splits, indexConstant(b, 1));
    Value rows = arith::SelectOp::create(b, several, n.splits,
                                         indexConstant(b, 0));
    int64_t dyn = ShapedType::kDynamic;
    part = memref::AllocOp::create(
        b, MemRefType::get({dyn, dyn, p.hq, dyn, p.dv}, b.getF32Type()),
        ValueRange{rows, n.batch, n.sq}, b.getI64IntegerAttr(64));
    lse = memref::AllocOp::create(
        b, MemRefType::get({dyn, dyn, p.hq, dyn}, b.getF32Type()),
        ValueRange{rows, n.batch, n.sq}, b.getI64IntegerAttr(64));
  }
  Value gridZ = p.dynamic ? arith::MulIOp::create(b, n.batch, n.splits)
                          : Value();
  auto launch =
      createKernelLaunch(b, "attention_mma",
                         {p.dynamic ? 1 : p.queryTiles(), p.hkv * p.headTiles,
                          p.dynamic ? 1 : p.batch * p.splits},
                         p.threads(), p.sharedBytes());
  if (p.paged)
    launch->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(p.residentBlocks()));
  if (p.dynamic) {
    launch.getGridSizeXMutable().assign(n.queryTiles);
    launch.getGridSizeZMutable().assign(gridZ);
  }
  {
    OpBuilder::InsertionGuard guard(b);
    KernelEmitter emitter(b, p, n);
    emitter.part = part;
    emitter.lse = lse;
    emitter.table = in.table;
    emitter.lens = in.lens;
    emitter.qpos = in.qpos;
    emitter.kScales = in.kScales;
    emitter.vScales = in.vScales;
    emitter.indices = in.indices;
    emitter.mask = in.mask;
    if (p.decode) {
      for (auto [i, map] : llvm::enumerate(maps))
        emitter.decodeMaps[i] = map;
      emitter.emitDecode(launch, q, k, v, out, in.sink);
    } else
      emitter.emit(launch, q, k, v, out, in.sink, in.qOffset, maps);
  }
  if (p.splits != 1)
    emitCombine(b, p, n, part, lse, out);
  return bufferization::ToTensorOp::create(b, resultType, out,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

/// Replaces `op` with buffers, the kernel launches and the result tensor.
void rewrite(mnemo::AttentionOp op, Problem p) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto buffer = [&](Value tensor) { return readOnlyBuffer(b, tensor); };
  // A rope applied on the tiles: the kernel loads its input.
  Value operands[2] = {op.getQuery(), op.getKey()};
  for (int64_t i = 0; i < 2; ++i)
    if (p.rope[i]) {
      createRopeBuffers(b, p.rope[i]);
      operands[i] = p.rope[i].input;
    }
  Buffers in;
  in.q = buffer(operands[0]);
  in.k = buffer(operands[1]);
  in.v = buffer(op.getValue());
  in.sink = buffer(op.getSink());
  in.mask = buffer(op.getMask());
  in.qOffset = op.getQOffset();
  op.replaceAllUsesWith(launchKernels(b, p, in, op.getResult().getType()));
  op.erase();
  for (const RopeOnLoad &rope : p.rope)
    if (rope)
      rope.op->erase();
}

/// An f32 attention of a 16-bit artifact as one in `elem` (Q, K and V
/// rounded, an additive mask read as it is, the result widened back) when
/// `takes` accepts the rounded op; else `op`, unchanged (also when it is
/// not all f32).
mnemo::AttentionOp
roundToWeightType(mnemo::AttentionOp op, Type elem,
                  function_ref<bool(mnemo::AttentionOp)> takes) {
  return cast<mnemo::AttentionOp>(
      roundOperands(op, {op.getQuery(), op.getKey(), op.getValue()}, elem,
                    [&](Operation *clone) {
                      return takes(cast<mnemo::AttentionOp>(clone));
                    }));
}

Operation *roundOperands(Operation *op, ArrayRef<Value> operands, Type elem,
                         function_ref<bool(Operation *)> takes) {
  auto f32 = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType().isF32();
  };
  if (!llvm::all_of(operands, f32) || !f32(op->getResult(0)))
    return op;
  OpBuilder b(op);
  IRMapping map;
  SmallVector<linalg::GenericOp> narrow;
  for (Value operand : operands) {
    Value rounded = convertElements(b, op->getLoc(), operand, elem);
    narrow.push_back(rounded.getDefiningOp<linalg::GenericOp>());
    map.map(operand, rounded);
  }
  return keepNarrowed(op, map, narrow, elem, takes);
}

Operation *keepNarrowed(Operation *op, IRMapping &map,
                        ArrayRef<linalg::GenericOp> conversions, Type elem,
                        function_ref<bool(Operation *)> takes) {
  OpBuilder b(op);
  Operation *narrow = b.clone(*op, map);
  Value result = narrow->getResult(0);
  result.setType(cast<RankedTensorType>(result.getType()).clone(elem));
  if (!takes(narrow)) {
    narrow->erase();
    for (linalg::GenericOp c : conversions)
      eraseConversion(c);
    return op;
  }
  op->getResult(0).replaceAllUsesWith(
      convertElements(b, op->getLoc(), result, b.getF32Type()));
  op->erase();
  return narrow;
}

} // namespace mlir::mnemo::nvptx::attention

namespace {
using namespace mlir::mnemo::nvptx::attention;

struct AttentionKernelPass
    : mnemo::impl::AttentionKernelPassBase<AttentionKernelPass> {
  using Base::Base;

  /// Each `OpTy` of the function after `round` (which may narrow it to a
  /// clone the kernel takes): its `plan` and rewrite, with a remark (under
  /// `report`) of why it keeps its decomposition (`kept`) or of what the
  /// kernel does (`taken`).
  template <typename OpTy>
  void lowerEach(function_ref<FailureOr<Problem>(OpTy, std::string &)> plan,
                 function_ref<OpTy(OpTy)> round, StringRef kept,
                 function_ref<std::string(const Problem &)> taken) {
    SmallVector<OpTy> ops;
    getOperation()->walk([&](OpTy op) { ops.push_back(op); });
    for (OpTy op : ops) {
      op = round(op);
      std::string why;
      FailureOr<Problem> p = plan(op, why);
      if (failed(p)) {
        if (report)
          op.emitRemark(kept) << why;
        continue;
      }
      if (report)
        op.emitRemark(taken(*p));
      rewrite(op, *p);
    }
  }

  void runOnOperation() override {
    if (blockQ != 64 && blockQ != 128) {
      getOperation().emitError("mnemo-gpu-attention-kernel: block-q must be "
                               "64 or 128, not ")
          << static_cast<int64_t>(blockQ);
      return signalPassFailure();
    }
    if (blockKV != 0 && blockKV != 64 && blockKV != 128) {
      getOperation().emitError("mnemo-gpu-attention-kernel: block-kv must be "
                               "0 (automatic), 64 or 128, not ")
          << static_cast<int64_t>(blockKV);
      return signalPassFailure();
    }
    const mnemo::ChipInfo *gpu = mnemo::lookupChip(chip);
    if (!gpu) {
      getOperation().emitError("mnemo-gpu-attention-kernel: unknown chip '")
          << chip << "'";
      return signalPassFailure();
    }
    std::optional<F32Precision> precision = parseF32Precision(f32Precision);
    if (!precision) {
      getOperation().emitError("mnemo-gpu-attention-kernel: f32-precision '")
          << f32Precision << "' is not 3xtf32, tf32 or f32";
      return signalPassFailure();
    }
    SmallVector<mnemo::AttentionOp> ops;
    getOperation()->walk([&](mnemo::AttentionOp op) { ops.push_back(op); });
    Type weightType =
        roundF32 ? sixteenBitWeightType(getOperation()) : Type();
    for (mnemo::AttentionOp op : ops) {
      std::string why;
      if (weightType)
        op = roundToWeightType(op, weightType, [&](mnemo::AttentionOp r) {
          std::string ignored;
          return succeeded(analyze(r, blockQ, blockKV, gpu->warpgroupMma,
                                   useTma, splitKV, smCount, sharedBytesLimit,
                                   *precision, ignored));
        });
      FailureOr<Problem> p =
          analyze(op, blockQ, blockKV, gpu->warpgroupMma, useTma, splitKV,
                  smCount, sharedBytesLimit, *precision, why);
      if (failed(p)) {
        if (report)
          op.emitRemark("keeps the tiled path: ") << why;
        continue;
      }
      if (report)
        for (int64_t i = 0; i < 2; ++i) {
          const char *name = i ? "K" : "Q";
          if (p->rope[i])
            op.emitRemark("applies the rope of ") << name << " on its tiles";
          else if (!p->ropeWhy[i].empty())
            op.emitRemark("the rope of ")
                << name << " stays a kernel: " << p->ropeWhy[i];
        }
      rewrite(op, *p);
    }

    auto plan = [&](mnemo::PagedAttentionOp op, std::string &why) {
      return analyze(op, /*blockQ=*/64, blockKV, gpu->warpgroupMma,
                     useTma && decodeTma, splitKV, smCount, sharedBytesLimit,
                     decodeKernel, decodeKernel16, *precision, why);
    };
    lowerEach<mnemo::PagedAttentionOp>(
        plan,
        [&](mnemo::PagedAttentionOp op) {
          if (!roundF32)
            return op;
          return roundQuery(op, [&](mnemo::PagedAttentionOp r) {
            std::string ignored;
            return succeeded(plan(r, ignored));
          });
        },
        "keeps the paged decomposition: ",
        [](const Problem &p) {
          return std::string(p.decode ? "reads its pages in the decode kernel"
                                      : "reads its pages in the kernel") +
                 (p.selected ? ", selected keys" : "") +
                 (p.sharedValues ? ", values in the keys' tile" : "");
        });

    // A prompt's attention over selected keys (V3.2): rounded to a 16-bit
    // artifact's type as mnemo.attention is.
    auto planSparse = [&](mnemo::SparseAttentionOp op, std::string &why) {
      return analyze(op, /*blockQ=*/64, blockKV, gpu->warpgroupMma, splitKV,
                     smCount, sharedBytesLimit, why);
    };
    lowerEach<mnemo::SparseAttentionOp>(
        planSparse,
        [&](mnemo::SparseAttentionOp op) {
          if (!weightType)
            return op;
          return roundToWeightType(op, weightType,
                                   [&](mnemo::SparseAttentionOp r) {
                                     std::string ignored;
                                     return succeeded(planSparse(r, ignored));
                                   });
        },
        "keeps the decomposition: ",
        [](const Problem &) {
          return std::string("reads its selected keys in the kernel");
        });
  }
};

} // namespace

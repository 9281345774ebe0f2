//===- PagedDecodeKernel.cpp - paged decode over FP8 pools ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The decode kernel of mnemo.paged_attention over FP8 E4M3 pools
// (Problem::decode): a generation step's few query rows (the GQA group's
// heads times the query tokens, at most 16) against a long paged context.
// The general kernel computes 64 query rows of which a decode step fills
// 4 or 8 and stages every tile through shared memory and barriers; here
//
// - each of the 4 warps owns 16 keys of a block's 64-key tile and keeps
//   its own running max, sum and O; the warps' results are combined once,
//   through shared memory, at the end (no block barrier in the loop);
// - each warp copies its keys' raw rows and scales into its own ring of
//   4 stages in shared memory (cp.async, 16-byte pieces; rows past the
//   length zero-filled), three tiles in flight, and waits for them with
//   the warp's own barrier; a lane then loads its fragments' bytes;
// - `cvt.rn.f16x2.e4m3x2` converts a byte pair into an f16 pair exactly
//   (every E4M3 value is an f16); the per-row scales stay out of the
//   tiles: K's multiply the scores' columns, V's the probabilities' (P's
//   columns), relative to a power of two per tile so that P stays in
//   [0, 1] in f16, and the query row is scaled by a power of two into
//   f16's range, undone in the softmax's unit;
// - the block-table entries a step's copies name are loaded two steps
//   before, and the ring's 16-byte chunks are swizzled within their row so
//   that the lanes' fragment loads meet no bank conflict (swizzleChunk).
//
// Fragment layouts (lane = 4 g + t): S = Q K^T has the queries as rows and
// the warp's 16 keys as two n8 blocks. A lane's B fragment of K is key g
// (and 8 + g) at four head-dim places; the head dim is permuted the same
// way in Q and K so that those places are four consecutive bytes: k-step
// kk = 4 i + w reads bytes 16 (4 i + t) + 4 w .. + 3 of the row, so a
// lane loads 16-byte pieces. Its accumulators are keys 2t, 2t + 1, 8 + 2t,
// 9 + 2t, which are also the k index of P's A fragment, so the lane loads
// those four V rows; output column (Dv / 8) n + j is column n of O's n8
// block j, so a lane's V bytes are Dv / 8 consecutive ones of each row,
// byte-permuted (PRMT) into pairs of rows. docs/GPU.md, "Paged decode
// attention".
//
//===----------------------------------------------------------------------===//

#include "AttentionKernelEmitter.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace mlir::mnemo::nvptx::attention {

namespace {
/// Keys a warp takes of each 64-key tile.
constexpr int64_t kWarpKeys = 16;
/// Offsets of a lane's four keys (its accumulator columns) from 2t.
constexpr int64_t kLaneKeys[4] = {0, 1, 8, 9};
} // namespace

/// Byte offset of this warp's stage `slot` in the ring, and the f32 index
/// of its scales.
static std::pair<Value, Value>
stageBase(ImplicitLocOpBuilder &b, const Problem &p, Value warp, Value slot) {
  Value i = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warp, indexConstant(b, p.decodeStages())),
      slot);
  return {
      arith::MulIOp::create(b, i, indexConstant(b, p.decodeStageBytes())),
      arith::AddIOp::create(b, indexConstant(b, p.decodeScalesOffset() / 4),
                            arith::MulIOp::create(b, i, indexConstant(b, 32)))};
}

/// Where logical 16-byte chunk `chunk` of row `row` (0..15, a stage's K or
/// V rows) of `chunks` lives in the ring: XORed with ((row / 2) % 4 ^ 2 (row
/// % 2)) * 2 (mod `chunks`), so that the lanes of a quarter warp hit
/// distinct banks: reading K, rows g and g + 1 (2 q and 2 q + 1) at chunks
/// 4 i + t (bit 2 of the XOR tells them apart); reading V, rows 2 t (+ 1,
/// 8, 9) at chunks 2 q and 2 q + 1 (bits 1 and 2 differ across the four
/// rows). (The copies that fill the ring then write 2 lanes a bank.)
static Value swizzleChunk(ImplicitLocOpBuilder &b, Value row, Value chunk,
                          int64_t chunks) {
  if (chunks <= 1) // a row of one chunk (or less) stays as it is
    return chunk;
  auto c = [&](int64_t v) { return indexConstant(b, v); };
  Value pair =
      arith::RemUIOp::create(b, arith::DivUIOp::create(b, row, c(2)), c(4));
  Value odd =
      arith::MulIOp::create(b, arith::RemUIOp::create(b, row, c(2)), c(2));
  Value mask = arith::RemUIOp::create(
      b, arith::MulIOp::create(b, arith::XOrIOp::create(b, pair, odd), c(2)),
      c(chunks));
  return arith::XOrIOp::create(b, chunk, mask);
}

// Lane l copies half of row l / 2 of K and of V (16-byte pieces) and,
// below 16, K's scale of row l, else V's of row l - 16.
SmallVector<Value, 2> KernelEmitter::decodeEntries(Value t) {
  Value kw0 = add(mul(t, p.blockKV), mul(warp, kWarpKeys));
  SmallVector<Value, 2> entries{pageEntry(add(kw0, div(lane, 2)))};
  if (p.fp8)
    entries.push_back(pageEntry(add(kw0, rem(lane, 16))));
  return entries;
}

Value KernelEmitter::decodeIssue(Value t, Value slot, ValueRange entries) {
  // A row past the length, or of a tile at or past the block's last,
  // copies zero bytes: its bytes and scale read as zeros (V's may be any,
  // NaN included).
  auto [bytes0, scales] = stageBase(b, p, warp, slot);
  int64_t eb = p.poolBytes();
  Value rows = div(bytes0, eb);
  Value kw0 = add(mul(t, p.blockKV), mul(warp, kWarpKeys));
  Value exists = lt(t, tHi);
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  SmallVector<Value> copies;
  Value half = rem(lane, 2);
  {
    Value r = div(lane, 2);
    auto [page, inPage, valid] = pagedKey(add(kw0, r), entries[0]);
    valid = both(valid, exists);
    for (auto [pool, width, base] :
         {std::tuple{k, p.d, int64_t(0)}, std::tuple{v, p.dv, 16 * p.d}}) {
      // Half a row, in copies of 16 bytes (or the half of a short row).
      int64_t perPiece = std::min<int64_t>(16, width * eb / 2) / eb;
      int64_t pieces = width / (2 * perPiece);
      Value elements = select(valid, idx(perPiece), idx(0));
      int64_t chunks = width * eb / 16;
      for (int64_t i = 0; i < pieces; ++i) {
        // Piece i of the lane's half is the row's chunk half * pieces + i
        // (its 16-byte pieces go where the swizzle puts the chunk).
        // Copying pieces in another order, so that each copy of the warp
        // wrote distinct banks and read whole 32-byte sectors, ran about 5%
        // slower (H100, 2026-12-05).
        Value col = mul(add(mul(half, pieces), idx(i)), perPiece), at = col;
        if (perPiece * eb == 16)
          at = mul(swizzleChunk(b, r, div(col, perPiece), chunks), perPiece);
        copies.push_back(nvgpu::DeviceAsyncCopyOp::create(
            b, tokenType, ringRows,
            ValueRange{add(rows, add(idx(base), add(mul(r, width), at)))}, pool,
            ValueRange{page, kvHead, inPage, col}, b.getIndexAttr(perPiece),
            elements, b.getUnitAttr()));
      }
    }
  }
  if (!p.fp8)
    return nvgpu::DeviceAsyncCreateGroupOp::create(b, tokenType, copies);
  Value r = rem(lane, 16);
  auto [page, inPage, exists16] = pagedKey(add(kw0, r), entries[1]);
  Value count = select(both(exists16, exists), idx(1), idx(0));
  Value isK = lt(lane, idx(16));
  SmallVector<Value> source{page, kvHead, inPage};
  Value scaleBase = scales;
  auto scaleCopy = [&](Value pool, int64_t first) {
    nvgpu::DeviceAsyncCopyOp::create(
        b, tokenType, ringScales,
        ValueRange{add(scaleBase, add(idx(first), r))}, pool, source,
        b.getIndexAttr(1), count, UnitAttr());
  };
  auto ifOp = scf::IfOp::create(b, isK, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    scaleCopy(kScales, 0);
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    scaleCopy(vScales, 16);
  }
  return nvgpu::DeviceAsyncCreateGroupOp::create(b, tokenType, copies);
}

KernelEmitter::DecodeTile KernelEmitter::decodeRead(Value slot) {
  auto [bytes0, scales] = stageBase(b, p, warp, slot);
  int64_t eb = p.poolBytes(), pieceBytes = p.decodePieceBytes();
  int64_t perPiece = pieceBytes / eb;
  Value rows = div(bytes0, eb);
  Type pool = cast<MemRefType>(ringRows.getType()).getElementType();
  // `bytes` bytes from element `at` as i32 words.
  auto words = [&](Value at, int64_t bytes) {
    Value raw = vector::LoadOp::create(
        b, VectorType::get({bytes / eb}, pool), ringRows, ValueRange{at},
        /*nontemporal=*/false, llvm::MaybeAlign(bytes));
    if (p.fp8)
      raw = arith::BitcastOp::create(b, VectorType::get({bytes}, b.getI8Type()),
                                     raw);
    Value w =
        vector::BitCastOp::create(b, VectorType::get({bytes / 4}, i32), raw);
    SmallVector<Value> out;
    for (int64_t i = 0; i < bytes / 4; ++i)
      out.push_back(vector::ExtractOp::create(b, w, i));
    return out;
  };
  // Element `at` of row `key` (of `width` elements) where the ring holds
  // it: its 16-byte chunk swizzled.
  auto swizzled = [&](Value key, Value at, int64_t width) {
    int64_t perChunk = 16 / eb;
    Value chunk = swizzleChunk(b, key, div(at, perChunk), width / perChunk);
    return add(mul(chunk, perChunk), rem(at, perChunk));
  };
  DecodeTile tile;
  // K: keys g and 8 + g, pieces 4 i + t of the row.
  for (int64_t j = 0; j < 2; ++j) {
    Value key = add(rowA, idx(8 * j));
    Value row = add(rows, mul(key, p.d));
    for (int64_t i = 0; i < p.d / (4 * perPiece); ++i)
      llvm::append_range(
          tile.k,
          words(add(row, swizzled(key, mul(add(idx(4 * i), quadCol), perPiece),
                                  p.d)),
                pieceBytes));
  }
  // V and both scales: keys 2t + {0, 1, 8, 9}, bytes (Dv / 8) g .. + Dv / 8
  // of each V row.
  int64_t run = p.dv / 8, piece = std::min<int64_t>(run, 16 / eb);
  for (int64_t r = 0; r < 4; ++r) {
    Value key = add(mul(quadCol, 2), idx(kLaneKeys[r]));
    Value row = add(rows, add(idx(16 * p.d), mul(key, p.dv)));
    for (int64_t c = 0; c < run; c += piece)
      llvm::append_range(
          tile.v,
          words(add(row, swizzled(key, add(mul(rowA, run), idx(c)), p.dv)),
                piece * eb));
    if (!p.fp8)
      continue;
    tile.kScale[r] =
        memref::LoadOp::create(b, ringScales, ValueRange{add(scales, key)});
    tile.vScale[r] = memref::LoadOp::create(
        b, ringScales, ValueRange{add(scales, add(idx(16), key))});
  }
  return tile;
}

SmallVector<Fragment> KernelEmitter::decodeQuery(Value q, Value rowScale[2]) {
  // Row h (g, g + 8) of the tile; padding rows read row 0 and are zero.
  int64_t rows = decodeTwoRows() ? 2 : 1, steps = p.d / 16;
  auto f32x4 = VectorType::get({4}, f32);
  SmallVector<SmallVector<Value>> vals(rows);
  Value amax[2];
  for (int64_t h = 0; h < rows; ++h) {
    Value row = h ? rowB : rowA;
    Value valid = rowValid(row);
    Value head = arith::MinUIOp::create(b, rowHead(row), idx(p.hq - 1));
    Value query = arith::MinUIOp::create(b, rowQuery(row), sub(sq(), idx(1)));
    amax[h] = cf(0.0);
    for (int64_t kk = 0; kk < steps; ++kk) {
      // k-step kk = (E / 4) i + w of the lane's E-element pieces.
      int64_t elements = p.decodePieceBytes() / p.poolBytes();
      int64_t perStep = elements / 4;
      Value d0 = add(mul(add(idx(4 * (kk / perStep)), quadCol), elements),
                     idx(4 * (kk % perStep)));
      Value x =
          vector::LoadOp::create(b, VectorType::get({4}, p.elem), q,
                                 ValueRange{batch, head, query, d0},
                                 /*nontemporal=*/false, llvm::MaybeAlign(8));
      x = arith::ExtFOp::create(b, f32x4, x);
      x = select(
          valid, x,
          arith::ConstantOp::create(b, DenseElementsAttr::get(f32x4, 0.0f)));
      vals[h].push_back(x);
      for (int64_t e = 0; e < 4; ++e)
        amax[h] = arith::MaximumFOp::create(
            b, amax[h],
            math::AbsFOp::create(b, vector::ExtractOp::create(b, x, e)));
    }
  }
  // The row's power of two 2^(141 - E) puts its largest magnitude (of
  // exponent field E) in [2^14, 2^15): in f16's range, exact. E is at
  // least 15, so that both factors are normal f32.
  Value factor[2];
  for (int64_t h = 0; h < rows && !p.fp8; ++h)
    factor[h] = rowScale[h] = cf(1.0);
  for (int64_t h = 0; h < rows && p.fp8; ++h) {
    Value bits = arith::BitcastOp::create(b, i32, quadReduce(amax[h], true));
    Value e = arith::MaxSIOp::create(
        b, arith::ShRUIOp::create(b, bits, i32c(23)), i32c(15));
    factor[h] = arith::BitcastOp::create(
        b, f32,
        arith::ShLIOp::create(b, arith::SubIOp::create(b, i32c(268), e),
                              i32c(23)));
    rowScale[h] = arith::BitcastOp::create(
        b, f32,
        arith::ShLIOp::create(b, arith::SubIOp::create(b, e, i32c(14)),
                              i32c(23)));
  }
  if (rows == 1)
    rowScale[1] = rowScale[0];
  // 16-bit pools: the query's own pairs (f16 for FP8 pools).
  Type mmaType = decodeMmaType();
  Value zeroPair = pack(cf(0.0), cf(0.0), mmaType);
  auto half = [&](int64_t h, int64_t kk, int64_t e) {
    if (h >= rows)
      return zeroPair;
    Value x = vals[h][kk];
    Value lo = fmul(vector::ExtractOp::create(b, x, e), factor[h]);
    Value hi = fmul(vector::ExtractOp::create(b, x, e + 1), factor[h]);
    return pack(lo, hi, mmaType);
  };
  // A fragment: (g, 2t..), (g + 8, 2t..), (g, 2t + 8..), (g + 8, 2t + 8..),
  // k indices 2t, 2t + 1 being bytes d0, d0 + 1 and 2t + 8, 2t + 9 bytes
  // d0 + 2, d0 + 3 of the row.
  SmallVector<Fragment> frags;
  for (int64_t kk = 0; kk < steps; ++kk)
    frags.push_back(
        {half(0, kk, 0), half(1, kk, 0), half(0, kk, 2), half(1, kk, 2)});
  return frags;
}

/// The f16 pair of E4M3 bytes 2 `hi`, 2 `hi` + 1 of i32 `word`.
static Value convertPair(ImplicitLocOpBuilder &b, Value word, int64_t hi) {
  Value bytes = vector::BitCastOp::create(
      b, VectorType::get({4}, b.getI8Type()),
      vector::BroadcastOp::create(b, VectorType::get({1}, b.getI32Type()),
                                  word));
  Value pair = vector::ShuffleOp::create(b, bytes, bytes,
                                         ArrayRef<int64_t>{2 * hi, 2 * hi + 1});
  return NVVM::ConvertF8x2ToF16x2Op::create(
      b, VectorType::get({2}, b.getF16Type()), pair, /*relu=*/false,
      b.getType<Float8E4M3FNType>());
}

SmallVector<Value> KernelEmitter::decodeStep(Value kw0, const DecodeTile &tile,
                                             ArrayRef<Fragment> qf,
                                             Value unit[2], ValueRange state) {
  bool two = decodeTwoRows();
  int64_t rows = two ? 2 : 1, oBlocks = p.dv / 8, perBlock = 2 * rows;
  // FP8 tiles multiply as f16, 16-bit ones in their own type; a 16-bit
  // word (two elements) is an MMA register as it is.
  Type mmaType = decodeMmaType();
  auto asReg = [&](Value word) {
    if (reg == word.getType())
      return word;
    return Value(vector::BitCastOp::create(
        b, reg,
        vector::BroadcastOp::create(b, VectorType::get({1}, i32), word)));
  };
  // S = Q K^T, keys 8j + g of the lane's B fragments: k-step kk is word kk
  // of the row's (two pairs of bytes), or words 2 kk and 2 kk + 1.
  SmallVector<Accumulator> s(2, Accumulator(4, cf(0.0)));
  int64_t steps = p.d / 16;
  for (int64_t j = 0; j < 2; ++j)
    for (int64_t kk = 0; kk < steps; ++kk) {
      Fragment f;
      if (p.fp8) {
        Value word = tile.k[j * steps + kk];
        f = {convertPair(b, word, 0), convertPair(b, word, 1)};
      } else {
        f = {asReg(tile.k[2 * (j * steps + kk)]),
             asReg(tile.k[2 * (j * steps + kk) + 1])};
      }
      s[j] = mma(qf[kk], f, s[j], mmaType);
    }
  // The scores (the query's power of two is in `unit`): accumulator e of
  // block j is key 2t + kLaneKeys[2 j + e % 2].
  for (int64_t j = 0; j < 2; ++j)
    for (int64_t e = 0; e < 4; ++e) {
      Value &x = s[j][e];
      if (p.fp8)
        x = fmul(x, tile.kScale[2 * j + e % 2]);
      if (p.softcap) {
        Value t = math::TanhOp::create(b, fmul(x, unit[e / 2]),
                                       arith::FastMathFlags::afn);
        x = fmul(t, cf(*p.softcap * M_LOG2E));
      }
    }
  s = maskScores(s, kw0);

  // Online softmax per row, in log2 units (m); l is the lane's part.
  Value m[2], l[2], alpha[2];
  for (int64_t h = 0; h < rows; ++h) {
    m[h] = state[oBlocks * perBlock + h];
    l[h] = state[oBlocks * perBlock + rows + h];
    softmaxRow(s, h, p.softcap ? cf(1.0) : unit[h], m[h], l[h], alpha[h]);
  }

  // V's scales relative to the tile's largest, rounded up to a power of
  // two (at least 2^-100: a tile of zero scales), so that P times them
  // stays in [0, 1]; O is kept in units of that power (`c`).
  // (16-bit pools have no scales: P as it is, in their type.)
  Value one = cf(1.0), unitV = one, ratio = one, vf[4] = {one, one, one, one};
  if (p.fp8) {
    Value vmax = cf(std::ldexp(1.0, -100));
    for (Value x : tile.vScale)
      vmax = arith::MaximumFOp::create(b, vmax, x);
    Value bits = arith::BitcastOp::create(b, i32, quadReduce(vmax, true));
    bits = arith::AndIOp::create(
        b, arith::AddIOp::create(b, bits, i32c(0x7fffff)), i32c(0x7f800000));
    unitV = arith::BitcastOp::create(b, f32, bits);
    Value invV = arith::BitcastOp::create(
        b, f32, arith::SubIOp::create(b, i32c(0x7f000000), bits));
    Value c = state[oBlocks * perBlock + 2 * rows];
    ratio = fmul(c, invV);
    for (int64_t r = 0; r < 4; ++r)
      vf[r] = fmul(tile.vScale[r], invV);
  }
  Value zeroPair = pack(cf(0.0), cf(0.0), mmaType);
  auto pPair = [&](int64_t j, int64_t h) {
    if (h >= rows)
      return zeroPair;
    return pack(fmul(s[j][2 * h], vf[2 * j]),
                fmul(s[j][2 * h + 1], vf[2 * j + 1]), mmaType);
  };
  Fragment pa = {pPair(0, 0), pPair(0, 1), pPair(1, 0), pPair(1, 1)};

  // O = O alpha c / 2^e + P' V. V rows r0, r1 (keys 2t, 2t + 1) and r2, r3
  // (8 + 2t, 9 + 2t): byte i of each of a lane's words is column 4 w + i of
  // its run; PRMT interleaves two rows' bytes 0, 1 (then 2, 3) into pairs.
  // 16-bit rows: element i of a word is column 2 w + i; PRMT pairs two
  // rows' low (then high) halves.
  int64_t wordsPerRow = p.dv * p.poolBytes() / 32;
  Value rescale[2];
  for (int64_t h = 0; h < rows; ++h)
    rescale[h] = fmul(alpha[h], ratio);
  SmallVector<Value> next;
  auto accumulate = [&](int64_t j, Fragment f) {
    Accumulator o;
    for (int64_t e = 0; e < 4; ++e)
      o.push_back(e / 2 < rows ? fmul(state[j * perBlock + e], rescale[e / 2])
                               : cf(0.0));
    o = mma(pa, f, o, mmaType);
    next.append(o.begin(), o.begin() + perBlock);
  };
  for (int64_t w = 0; w < wordsPerRow && !p.fp8; ++w)
    for (int64_t i = 0; i < 2; ++i) {
      Fragment f;
      for (int64_t pr = 0; pr < 2; ++pr)
        f.push_back(asReg(NVVM::PermuteOp::create(
            b, i32, tile.v[(2 * pr) * wordsPerRow + w],
            tile.v[(2 * pr + 1) * wordsPerRow + w], i32c(i ? 0x7632 : 0x5410),
            NVVM::PermuteMode::DEFAULT)));
      accumulate(2 * w + i, f);
    }
  for (int64_t w = 0; w < wordsPerRow && p.fp8; ++w) {
    Value inter[2][2];
    for (int64_t pr = 0; pr < 2; ++pr)
      for (int64_t sel = 0; sel < 2; ++sel)
        inter[pr][sel] = NVVM::PermuteOp::create(
            b, i32, tile.v[(2 * pr) * wordsPerRow + w],
            tile.v[(2 * pr + 1) * wordsPerRow + w], i32c(sel ? 0x7362 : 0x5140),
            NVVM::PermuteMode::DEFAULT);
    for (int64_t i = 0; i < 4; ++i)
      accumulate(4 * w + i, {convertPair(b, inter[0][i / 2], i % 2),
                             convertPair(b, inter[1][i / 2], i % 2)});
  }
  next.append(m, m + rows);
  next.append(l, l + rows);
  next.push_back(unitV);
  return next;
}

void KernelEmitter::decodeStore(ValueRange state, Value out) {
  bool two = decodeTwoRows();
  int64_t rows = two ? 2 : 1, oBlocks = p.dv / 8, perBlock = 2 * rows;
  int64_t stride = p.decodeRowStride(), stats = p.decodeStatsOffset();
  int64_t run = p.dv / 8, warps = Problem::kDecodeWarps;
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value shared = memref::ViewOp::create(
      b,
      MemRefType::get({p.sharedBytes() / 4}, f32, MemRefLayoutAttrInterface(),
                      workgroup),
      tiles, idx(0), ValueRange{});
  // Each warp's O (times its unit c), in fragment order: row r, block j,
  // column n at r * stride + 8 j + n; its maxima and sums.
  Value c = state[oBlocks * perBlock + 2 * rows];
  Value warpRow0 = mul(warp, 16);
  for (int64_t h = 0; h < rows; ++h) {
    Value row = add(warpRow0, h ? rowB : rowA);
    for (int64_t j = 0; j < oBlocks; ++j) {
      Value pair = vector::FromElementsOp::create(
          b, VectorType::get({2}, f32),
          ValueRange{fmul(state[j * perBlock + 2 * h], c),
                     fmul(state[j * perBlock + 2 * h + 1], c)});
      vector::StoreOp::create(
          b, pair, shared,
          ValueRange{add(mul(row, stride), add(idx(8 * j), mul(quadCol, 2)))},
          /*nontemporal=*/false, llvm::MaybeAlign(8));
    }
    Value sum = quadReduce(state[oBlocks * perBlock + rows + h], false);
    ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, quadCol, idx(0)),
           [&] {
             memref::StoreOp::create(b, state[oBlocks * perBlock + h], shared,
                                     ValueRange{add(idx(stats), row)});
             memref::StoreOp::create(
                 b, sum, shared, ValueRange{add(idx(stats + warps * 16), row)});
           });
  }
  gpu::BarrierOp::create(b);

  // Element e of the used rows x Dv: O = sum_w 2^(m_w - M) O_w over
  // L = sum_w 2^(m_w - M) l_w.
  int64_t used = p.group * p.rowsPerHead, elements = used * p.dv;
  forEachChunk(elements, [&](Value e, bool) {
    Value row = div(e, p.dv), col = rem(e, p.dv);
    Value at = add(mul(rem(col, run), 8), div(col, run));
    Value ms[Problem::kDecodeWarps];
    Value top = cf(-INFINITY);
    for (int64_t w = 0; w < warps; ++w) {
      ms[w] = memref::LoadOp::create(b, shared,
                                     ValueRange{add(idx(stats + 16 * w), row)});
      top = arith::MaximumFOp::create(b, top, ms[w]);
    }
    Value none =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, top, cf(-INFINITY));
    Value base = select(none, cf(0.0), top);
    Value o = cf(0.0), lsum = cf(0.0);
    for (int64_t w = 0; w < warps; ++w) {
      Value wt = exp2(fsub(ms[w], base));
      Value lw = memref::LoadOp::create(
          b, shared, ValueRange{add(idx(stats + warps * 16 + 16 * w), row)});
      Value ow = memref::LoadOp::create(
          b, shared, ValueRange{add(mul(add(idx(16 * w), row), stride), at)});
      o = fadd(o, fmul(wt, ow));
      lsum = fadd(lsum, fmul(wt, lw));
    }
    // A paged attention's padding query (position -1) yields zeros.
    Value seen =
        both(arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, lsum, cf(0.0)),
             ge(rowPosition(row), idx(0)));
    Value value = select(seen, arith::DivFOp::create(b, o, lsum), cf(0.0));
    Value head = rowHead(row), query = rowQuery(row);
    auto store = [&](bool partial) {
      if (!partial) {
        memref::StoreOp::create(b, arith::TruncFOp::create(b, p.elem, value),
                                out, ValueRange{batch, head, query, col});
        return;
      }
      memref::StoreOp::create(b, value, part,
                              ValueRange{split, batch, head, query, col});
      Value log2l = LLVM::CallIntrinsicOp::create(
                        b, f32, b.getStringAttr("llvm.nvvm.lg2.approx.f"),
                        ValueRange{lsum})
                        .getResult(0);
      Value lseRow = select(seen, fadd(base, log2l), cf(-INFINITY));
      ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, col, idx(0)),
             [&] {
               memref::StoreOp::create(b, lseRow, lse,
                                       ValueRange{split, batch, head, query});
             });
    };
    ifThen(rowValid(row), [&] {
      if (!split)
        return store(false);
      if (p.splits != ShapedType::kDynamic)
        return store(true);
      auto ifOp = scf::IfOp::create(
          b,
          arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, splits(), idx(1)),
          /*withElseRegion=*/true);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      store(true);
      b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
      store(false);
    });
  });
}

void KernelEmitter::emitDecode(gpu::LaunchOp launch, Value q, Value k, Value v,
                               Value out, Value sink) {
  b.setInsertionPoint(launch.getBody().front().getTerminator());
  this->k = k;
  this->v = v;
  setUp(launch, /*qOffset=*/nullptr, {});
  bool two = decodeTwoRows();
  int64_t rows = two ? 2 : 1, oBlocks = p.dv / 8, perBlock = 2 * rows;
  Value rowScale[2];
  SmallVector<Fragment> qf = decodeQuery(q, rowScale);
  // Scores in log2 units are unit * x (with a softcap, unit scales x into
  // the tanh).
  double u = p.softcap ? p.scale / *p.softcap : p.scale * M_LOG2E;
  Value unit[2] = {fmul(cf(u), rowScale[0]), fmul(cf(u), rowScale[1])};

  // State: O (c0, c1 and with two rows c2, c3 of each n8 block), the rows'
  // running maxima and the lane's sums, and O's unit. A sink's term starts
  // warp 0's rows (of the first split).
  SmallVector<Value> state(oBlocks * perBlock, cf(0.0));
  Value lead = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, warp, idx(0));
  if (split)
    lead = both(lead, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, split,
                                            idx(0)));
  Value ms[2], ls[2];
  for (int64_t h = 0; h < rows; ++h) {
    ms[h] = cf(-INFINITY);
    ls[h] = cf(0.0);
    if (!sink)
      continue;
    Value head =
        arith::MinUIOp::create(b, rowHead(h ? rowB : rowA), idx(p.hq - 1));
    Value x = memref::LoadOp::create(b, sink, ValueRange{head});
    if (x.getType() != f32)
      x = arith::ExtFOp::create(b, f32, x);
    ms[h] = select(lead, fmul(x, cf(M_LOG2E)), cf(-INFINITY));
    ls[h] = select(both(lead, arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                                    quadCol, idx(0))),
                   cf(1.0), cf(0.0));
  }
  state.append(ms, ms + rows);
  state.append(ls, ls + rows);
  state.push_back(cf(1.0));

  // The warp's ring: tiles tLo, tLo + 1, tLo + 2 in flight before the
  // loop; step t starts tile t + 3 in the stage tile t - 1 left (every
  // lane has read it: the warp's barrier), waits for tile t (3 groups may
  // pend) and makes its bytes visible to the warp.
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  ringRows = memref::ViewOp::create(
      b,
      MemRefType::get({p.decodeScalesOffset() / p.poolBytes()},
                      cast<MemRefType>(k.getType()).getElementType(),
                      MemRefLayoutAttrInterface(), workgroup),
      tiles, idx(0), ValueRange{});
  ringScales = memref::ViewOp::create(
      b,
      MemRefType::get({p.decodeScalesOffset() / 4 +
                       Problem::kDecodeWarps * p.decodeStages() * 32},
                      f32, MemRefLayoutAttrInterface(), workgroup),
      tiles, idx(0), ValueRange{});
  int64_t stages = p.decodeStages();
  for (int64_t i = 0; i + 1 < stages; ++i)
    decodeIssue(add(tLo, idx(i)), idx(i), decodeEntries(add(tLo, idx(i))));
  // The table entries of the tile a step issues are loaded kEntriesAhead
  // steps before (carried after the softmax state, the nearest first).
  // Loaded one step ahead, 15-17% of the stall samples were still on the
  // entry (ncu, H100, 2026-12-05): under a saturated memory system its
  // load waits behind the copies issued just before it. Two steps: FP8
  // 0.5-2% faster (H100), bf16 unchanged.
  constexpr int64_t kEntriesAhead = 2;
  int64_t carried = state.size();
  int64_t perSet = 0;
  for (int64_t i = 0; i < kEntriesAhead; ++i) {
    SmallVector<Value, 2> set = decodeEntries(add(tLo, idx(stages - 1 + i)));
    perSet = set.size();
    llvm::append_range(state, set);
  }
  Value allLanes = i32c(-1);
  auto loop = scf::ForOp::create(b, tLo, tHi, idx(1), state);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value rel = sub(t, tLo);
    ValueRange args = loop.getRegionIterArgs();
    NVVM::SyncWarpOp::create(b, allLanes);
    ValueRange sets = args.drop_front(carried);
    Value group = decodeIssue(add(t, idx(stages - 1)),
                              rem(add(rel, idx(stages - 1)), stages),
                              sets.take_front(perSet));
    SmallVector<Value, 2> next =
        decodeEntries(add(t, idx(stages - 1 + kEntriesAhead)));
    nvgpu::DeviceAsyncWaitOp::create(b, group, b.getI32IntegerAttr(stages - 1));
    NVVM::SyncWarpOp::create(b, allLanes);
    SmallVector<Value> yielded = decodeStep(
        add(mul(t, p.blockKV), mul(warp, kWarpKeys)),
        decodeRead(rem(rel, stages)), qf, unit, args.take_front(carried));
    llvm::append_range(yielded, sets.drop_front(perSet));
    llvm::append_range(yielded, next);
    scf::YieldOp::create(b, yielded);
  }
  // The combine buffer takes the ring's place once every warp is done
  // (no copy in flight).
  waitAll();
  decodeStore(loop.getResults().take_front(carried), out);
}

} // namespace mlir::mnemo::nvptx::attention

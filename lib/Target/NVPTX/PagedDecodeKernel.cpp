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
//   tiles: K's multiply the scores' rows, V's the probabilities' (P^T's
//   rows), relative to a power of two per tile so that P stays in [0, 1]
//   in f16, and the query row is scaled by a power of two into f16's
//   range, undone in the softmax's unit;
// - the block-table entries a step's copies name are loaded two steps
//   before, and the ring's 16-byte chunks are swizzled within their row so
//   that the lanes' fragment loads meet no bank conflict (swizzleChunk).
//
// Fragment layouts (lane = 4 g + t): the keys are the MMA's rows and the
// query rows its columns, S^T = K Q^T and O^T = V^T P^T, so that the 16
// keys fill an m16 block and a decode step's 4 or 8 query rows an n8 one
// (two for up to 16 rows); with the queries as rows, 12 of an m16 block's
// rows would be padding, and the MMAs twice as many. A lane's A fragment
// of K is keys g and 8 + g at four head-dim places; the head dim is
// permuted the same way in Q and K so that those places are four
// consecutive bytes: k-step kk = 4 i + w reads bytes 16 (4 i + t) + 4 w
// .. + 3 of the row, so a lane loads 16-byte pieces. Its accumulators are
// keys g, g + 8 of columns 2t, 2t + 1: the softmax's max and sums reduce
// over the 8 lanes of a column. P^T's B fragment wants keys 2t, 2t + 1,
// 8 + 2t, 9 + 2t of column g: stmatrix .trans writes the accumulators'
// pairs to shared memory as rows of columns, ldmatrix reads them back.
// Those four keys are V^T's k indices, so the lane loads those four V
// rows; V^T's m16 block i has columns (Dv / 8) g + 2 i and + 1 as its rows
// g and g + 8, so a lane's V bytes are Dv / 8 consecutive ones of each
// row, byte-permuted (PRMT) into pairs of rows. docs/GPU.md, "Paged decode
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
/// Offsets from 2t of a lane's four V rows (P^T's k indices).
constexpr int64_t kLaneKeys[4] = {0, 1, 8, 9};
} // namespace

/// Byte offset of this warp's stage `slot` in the ring, and the f32 index
/// of its scales.
static std::pair<Value, Value>
stageBase(ImplicitLocOpBuilder &b, const Problem &p, Value warp, Value slot) {
  Value i = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warp, indexConstant(b, p.decodeStages())),
      slot);
  return {arith::MulIOp::create(b, i, indexConstant(b, p.decodeStageBytes())),
          arith::AddIOp::create(
              b, indexConstant(b, p.decodeScalesOffset() / 4),
              arith::MulIOp::create(b, i,
                                    indexConstant(b, p.decodeScaleFloats())))};
}

/// The f32 index, from its stage's first, of the scale of the stage's K
/// row `key` (V's with `isV`): 16 K then 16 V, or with TMA box `key / R`'s
/// slot of 32 (K's boxes, then V's).
static Value scaleIndex(ImplicitLocOpBuilder &b, const Problem &p, Value key,
                        bool isV) {
  if (!p.decodeTma)
    return isV ? arith::AddIOp::create(b, key, indexConstant(b, 16)) : key;
  int64_t rows = p.decodeBoxRows();
  Value box = arith::DivUIOp::create(b, key, indexConstant(b, rows));
  if (isV)
    box = arith::AddIOp::create(b, box, indexConstant(b, p.decodeBoxes()));
  return arith::AddIOp::create(
      b, arith::MulIOp::create(b, box, indexConstant(b, 32)),
      arith::RemUIOp::create(b, key, indexConstant(b, rows)));
}

/// Where TMA's swizzle puts 16-byte chunk `chunk` of row `row` of a region
/// of rows of `rowBytes` bytes (aligned to Problem::tmaRegionAlign): XORed
/// with the address bits above the 128-byte line, as many as the swizzle
/// has chunks (the 128B swizzle: row % 8; 64B: (row / 2) % 4; 32B: (row /
/// 4) % 2).
static Value tmaChunk(ImplicitLocOpBuilder &b, Value row, Value chunk,
                      int64_t rowBytes) {
  int64_t swizzle = Problem::tmaSwizzle(rowBytes);
  if (!swizzle)
    return chunk;
  auto c = [&](int64_t v) { return indexConstant(b, v); };
  Value line = arith::DivUIOp::create(
      b, arith::MulIOp::create(b, row, c(rowBytes)), c(128));
  return arith::XOrIOp::create(
      b, chunk, arith::RemUIOp::create(b, line, c(swizzle / 16)));
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
  // TMA: lane j's is box j's page (lanes past the boxes repeat them).
  if (p.decodeTma)
    return {pageEntry(
        add(kw0, mul(rem(lane, p.decodeBoxes()), p.decodeBoxRows())))};
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
         {std::tuple{k, p.d, int64_t(0)},
          std::tuple{v, p.dv, p.decodeVOffset() / eb}}) {
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

Value KernelEmitter::decodeBarrier(Value slot) {
  Value i = add(mul(warp, p.decodeStages()), slot);
  return sharedPointer(
      add(tilesAddress, add(idx(p.decodeBarrierOffset()), mul(i, 8))));
}

void KernelEmitter::decodeIssueTma(Value t, Value slot, Value entry) {
  int64_t rows = p.decodeBoxRows(), boxes = p.decodeBoxes();
  int64_t eb = p.poolBytes();
  Value bytes0, scales;
  std::tie(bytes0, scales) = stageBase(b, p, warp, slot);
  Value kw0 = add(mul(t, p.blockKV), mul(warp, kWarpKeys));
  Value len = skv();
  // Box j's page from lane j (32 bits: the coordinate TMA takes).
  Value page = toI32(arith::IndexCastOp::create(b, b.getIndexType(), entry));
  SmallVector<Value, 2> pages{page};
  for (int64_t j = 1; j < boxes; ++j)
    pages.push_back(gpu::ShuffleOp::create(b, page, i32c(j), i32c(32),
                                           gpu::ShuffleMode::IDX)
                        .getShuffleResult());
  // The boxes that hold keys below the length: ceil((len - kw0) / R) of
  // them, none from a kw0 past it (the mbarrier's phase then completes on
  // lane 0's arrival alone).
  Value have =
      select(lt(kw0, len),
             arith::MinUIOp::create(
                 b, idx(boxes), div(add(sub(len, kw0), idx(rows - 1)), rows)),
             idx(0));
  int64_t boxBytes = rows * (p.d + p.dv) * eb + 2 * rows * 4;
  Value leader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, idx(0));
  ifThen(both(lt(t, tHi), leader), [&] {
    Value barrier = decodeBarrier(slot);
    expectBytes(barrier, toI32(mul(have, boxBytes)));
    Value head = toI32(kvHead);
    Value rowsAt = add(tilesAddress, bytes0);
    Value scalesAt = add(tilesAddress, mul(scales, 4));
    for (int64_t j = 0; j < boxes; ++j)
      ifThen(lt(idx(j), have), [&] {
        Value row = toI32(rem(add(kw0, idx(j * rows)), p.pageSize));
        tmaCopy(decodeMaps[0], {i32c(0), row, head, pages[j]},
                add(rowsAt, idx(j * rows * p.d * eb)), barrier);
        tmaCopy(decodeMaps[1], {i32c(0), row, head, pages[j]},
                add(rowsAt, idx(p.decodeVOffset() + j * rows * p.dv * eb)),
                barrier);
        tmaCopy(decodeMaps[2], {row, head, pages[j]},
                add(scalesAt, idx(128 * j)), barrier);
        tmaCopy(decodeMaps[3], {row, head, pages[j]},
                add(scalesAt, idx(128 * (boxes + j))), barrier);
      });
  });
}

void KernelEmitter::decodeClearPast(Value kw0, Value slot) {
  Value len = skv();
  ifThen(lt(len, add(kw0, idx(kWarpKeys))), [&] {
    Value bytes0, scales;
    std::tie(bytes0, scales) = stageBase(b, p, warp, slot);
    int64_t eb = p.poolBytes(), half = p.dv * eb / 2;
    // Lane l: half l % 2 of V row l / 2 (16-byte stores; a row's swizzle
    // stays within it) and the scale of K row l (lanes 16-31: of V row l -
    // 16).
    Value row = div(lane, 2);
    ifThen(ge(add(kw0, row), len), [&] {
      Value at =
          add(bytes0, add(idx(p.decodeVOffset()),
                          add(mul(row, p.dv * eb), mul(rem(lane, 2), half))));
      auto zeros = arith::ConstantOp::create(
          b, DenseElementsAttr::get(VectorType::get({4}, i32), int32_t(0)));
      for (int64_t i = 0; i < half; i += 16)
        vector::StoreOp::create(b, zeros, ringWords,
                                ValueRange{div(add(at, idx(i)), 4)},
                                /*nontemporal=*/false, llvm::MaybeAlign(16));
    });
    Value key = rem(lane, 16);
    ifThen(ge(add(kw0, key), len), [&] {
      Value isV = ge(lane, idx(16));
      Value at = select(isV, scaleIndex(b, p, key, true),
                        scaleIndex(b, p, key, false));
      memref::StoreOp::create(b, cf(0.0), ringScales,
                              ValueRange{add(scales, at)});
    });
    // TMA writes this stage again later: the generic proxy's writes are
    // ordered before the async proxy's.
    fenceAsyncShared();
    NVVM::SyncWarpOp::create(b, i32c(-1));
  });
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
    Value chunk = div(at, perChunk);
    chunk = p.decodeTma ? tmaChunk(b, key, chunk, width * eb)
                        : swizzleChunk(b, key, chunk, width / perChunk);
    return add(mul(chunk, perChunk), rem(at, perChunk));
  };
  DecodeTile tile;
  // K: keys g and 8 + g, pieces 4 i + t of the row. TMA's 128B swizzle
  // puts rows g and g + 1 (a quarter warp's) at the same banks for the
  // same i: with two pieces, odd rows load piece 1 first (the pieces
  // swapped back by selects) so that a load's quarter warp meets none.
  int64_t pieces = p.d / (4 * perPiece);
  bool swap =
      p.decodeTma && pieces == 2 && Problem::tmaSwizzle(p.d * eb) == 128;
  Value odd;
  if (swap)
    odd = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, rem(rowA, 2),
                                idx(0));
  for (int64_t j = 0; j < 2; ++j) {
    Value key = add(rowA, idx(8 * j));
    Value row = add(rows, mul(key, p.d));
    SmallVector<SmallVector<Value>> got;
    for (int64_t i = 0; i < pieces; ++i) {
      Value piece = swap ? select(odd, idx(1 - i), idx(i)) : idx(i);
      got.push_back(words(
          add(row,
              swizzled(key, mul(add(mul(piece, 4), quadCol), perPiece), p.d)),
          pieceBytes));
    }
    for (int64_t i = 0; i < pieces; ++i)
      for (auto [w, word] : llvm::enumerate(got[i]))
        tile.k.push_back(swap ? select(odd, got[1 - i][w], word) : word);
  }
  // V: keys 2t + {0, 1, 8, 9}, bytes (Dv / 8) g .. + Dv / 8 of each row.
  int64_t run = p.dv / 8, piece = std::min<int64_t>(run, 16 / eb);
  for (int64_t r = 0; r < 4; ++r) {
    Value key = add(mul(quadCol, 2), idx(kLaneKeys[r]));
    Value row = add(rows, add(idx(p.decodeVOffset() / eb), mul(key, p.dv)));
    for (int64_t c = 0; c < run; c += piece)
      llvm::append_range(
          tile.v,
          words(add(row, swizzled(key, add(mul(rowA, run), idx(c)), p.dv)),
                piece * eb));
  }
  // Both scales of keys g and g + 8 (S^T's rows).
  for (int64_t j = 0; j < 2 && p.fp8; ++j) {
    Value key = add(rowA, idx(8 * j));
    tile.kScale[j] = memref::LoadOp::create(
        b, ringScales, ValueRange{add(scales, scaleIndex(b, p, key, false))});
    tile.vScale[j] = memref::LoadOp::create(
        b, ringScales, ValueRange{add(scales, scaleIndex(b, p, key, true))});
  }
  return tile;
}

SmallVector<Fragment> KernelEmitter::decodeQuery(Value q, Value rowScale[2]) {
  // Q^T's B fragments: n-block nb holds query row 8 nb + g of the tile;
  // padding rows read row 0 and are zero.
  int64_t blocks = p.decodeColumnBlocks(), steps = p.d / 16;
  auto f32x4 = VectorType::get({4}, f32);
  SmallVector<SmallVector<Value>> vals(blocks);
  Value amax[2];
  for (int64_t nb = 0; nb < blocks; ++nb) {
    Value row = add(rowA, idx(8 * nb));
    Value valid = rowValid(row);
    Value head = arith::MinUIOp::create(b, rowHead(row), idx(p.hq - 1));
    Value query = arith::MinUIOp::create(b, rowQuery(row), sub(sq(), idx(1)));
    amax[nb] = cf(0.0);
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
      vals[nb].push_back(x);
      for (int64_t e = 0; e < 4; ++e)
        amax[nb] = arith::MaximumFOp::create(
            b, amax[nb],
            math::AbsFOp::create(b, vector::ExtractOp::create(b, x, e)));
    }
  }
  // The row's power of two 2^(141 - E) puts its largest magnitude (of
  // exponent field E) in [2^14, 2^15): in f16's range, exact. E is at
  // least 15, so that both factors are normal f32.
  Value factor[2];
  for (int64_t nb = 0; nb < blocks && !p.fp8; ++nb)
    factor[nb] = rowScale[nb] = cf(1.0);
  for (int64_t nb = 0; nb < blocks && p.fp8; ++nb) {
    Value bits = arith::BitcastOp::create(b, i32, quadReduce(amax[nb], true));
    Value e = arith::MaxSIOp::create(
        b, arith::ShRUIOp::create(b, bits, i32c(23)), i32c(15));
    factor[nb] = arith::BitcastOp::create(
        b, f32,
        arith::ShLIOp::create(b, arith::SubIOp::create(b, i32c(268), e),
                              i32c(23)));
    rowScale[nb] = arith::BitcastOp::create(
        b, f32,
        arith::ShLIOp::create(b, arith::SubIOp::create(b, e, i32c(14)),
                              i32c(23)));
  }
  // B fragment: k indices 2t, 2t + 1 (elements d0, d0 + 1 of the row) and
  // 2t + 8, 2t + 9 (d0 + 2, d0 + 3), as the K words' bytes are.
  Type mmaType = decodeMmaType();
  auto pair = [&](int64_t nb, int64_t kk, int64_t e) {
    Value x = vals[nb][kk];
    Value lo = fmul(vector::ExtractOp::create(b, x, e), factor[nb]);
    Value hi = fmul(vector::ExtractOp::create(b, x, e + 1), factor[nb]);
    return pack(lo, hi, mmaType);
  };
  SmallVector<Fragment> frags;
  for (int64_t nb = 0; nb < blocks; ++nb)
    for (int64_t kk = 0; kk < steps; ++kk)
      frags.push_back({pair(nb, kk, 0), pair(nb, kk, 2)});
  return frags;
}

/// Reduces `x` over the 8 lanes of a column (lanes t, t + 4, .., t + 28:
/// one accumulator column's rows g).
static Value columnReduce(ImplicitLocOpBuilder &b, Value x, bool isMax) {
  for (int32_t offset : {4, 8, 16}) {
    Value o = gpu::ShuffleOp::create(b, x, offset, 32, gpu::ShuffleMode::XOR)
                  .getShuffleResult();
    x = isMax ? Value(arith::MaximumFOp::create(b, x, o))
              : Value(arith::AddFOp::create(b, x, o));
  }
  return x;
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

SmallVector<Accumulator> KernelEmitter::decodeMask(ArrayRef<Accumulator> s,
                                                   Value kw0) {
  // S^T: the lane's keys g and g + 8 (rows), its query columns' positions.
  return maskKeys(s, kw0, kWarpKeys, [&](int64_t nb, int64_t e) {
    return std::pair(add(kw0, add(rowA, idx(8 * (e / 2)))),
                     colPos[2 * nb + e % 2]);
  });
}

Fragment KernelEmitter::decodeTranspose(int64_t nb, Value keysLo,
                                        Value keysHi) {
  // stmatrix .trans writes the two 8 x 8 blocks (keys 0-7, 8-15; the
  // lane's pair is key g of columns 2t, 2t + 1) as rows of columns; the
  // warp's barrier publishes them; ldmatrix reads row g (column g of S^T),
  // pairs 2t, 2t + 1. Lanes 0-15 name the 16 rows of 16 bytes.
  auto ctx = b.getContext();
  auto shape = NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8);
  auto toWord = [&](Value reg) {
    if (reg.getType() == i32)
      return reg;
    Value v = vector::BitCastOp::create(b, VectorType::get({1}, i32), reg);
    return Value(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{0}));
  };
  Value at = sharedPointer(add(transposeAt, idx(nb * 256)));
  NVVM::StMatrixOp::create(b, at, ValueRange{toWord(keysLo), toWord(keysHi)},
                           NVVM::MMALayout::col, shape,
                           NVVM::LdStMatrixEltType::B16);
  NVVM::SyncWarpOp::create(b, i32c(-1));
  auto pairType = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32});
  Value m = NVVM::LdMatrixOp::create(b, pairType, at, 2, NVVM::MMALayout::row,
                                     shape, NVVM::LdStMatrixEltType::B16);
  // The words in the MMA's register form (f16 pairs as vector<2xf16>).
  Fragment f;
  for (int64_t i = 0; i < 2; ++i) {
    Value word = LLVM::ExtractValueOp::create(b, m, ArrayRef<int64_t>{i});
    if (decodeMmaType().isF16())
      word = vector::BitCastOp::create(
          b, VectorType::get({2}, b.getF16Type()),
          vector::BroadcastOp::create(b, VectorType::get({1}, i32), word));
    f.push_back(word);
  }
  return f;
}

SmallVector<Value> KernelEmitter::decodeStep(Value kw0, const DecodeTile &tile,
                                             ArrayRef<Fragment> qf,
                                             ArrayRef<Value> unit,
                                             ValueRange state) {
  int64_t blocks = p.decodeColumnBlocks(), mBlocks = p.dv / 16;
  int64_t columns = 2 * blocks, oCount = blocks * mBlocks * 4;
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
  // S^T = K Q^T: K's A fragment of k-step kk is keys g (registers 0, 2)
  // and g + 8 (1, 3) at k indices 2t, 2t + 1 (0, 1) and 2t + 8, 2t + 9
  // (2, 3): word kk of each row (two pairs of bytes), or words 2 kk and
  // 2 kk + 1.
  int64_t steps = p.d / 16;
  SmallVector<Accumulator> s(blocks, Accumulator(4, cf(0.0)));
  for (int64_t kk = 0; kk < steps; ++kk) {
    Fragment a;
    if (p.fp8) {
      Value lo = tile.k[kk], hi = tile.k[steps + kk];
      a = {convertPair(b, lo, 0), convertPair(b, hi, 0), convertPair(b, lo, 1),
           convertPair(b, hi, 1)};
    } else {
      a = {asReg(tile.k[2 * kk]), asReg(tile.k[2 * (steps + kk)]),
           asReg(tile.k[2 * kk + 1]), asReg(tile.k[2 * (steps + kk) + 1])};
    }
    for (int64_t nb = 0; nb < blocks; ++nb)
      s[nb] = mma(a, qf[nb * steps + kk], s[nb], mmaType);
  }
  // The scores (the query's power of two is in `unit`): accumulator e of
  // block nb is key g + 8 (e / 2) of column 2 nb + e % 2 of the lane's.
  for (int64_t nb = 0; nb < blocks; ++nb)
    for (int64_t e = 0; e < 4; ++e) {
      Value &x = s[nb][e];
      if (p.fp8)
        x = fmul(x, tile.kScale[e / 2]);
      if (p.softcap) {
        Value t = math::TanhOp::create(b, fmul(x, unit[2 * nb + e % 2]),
                                       arith::FastMathFlags::afn);
        x = fmul(t, cf(*p.softcap * M_LOG2E));
      }
    }
  s = decodeMask(s, kw0);

  // Online softmax per column (query row), in log2 units (m); l is the
  // lane's part (its keys g, g + 8).
  Value m[4], l[4], alpha[4];
  for (int64_t nb = 0; nb < blocks; ++nb)
    for (int64_t c = 0; c < 2; ++c) {
      int64_t i = 2 * nb + c;
      Value u = p.softcap ? cf(1.0) : unit[i];
      Value mx = arith::MaximumFOp::create(b, s[nb][c], s[nb][c + 2]);
      mx = arith::MaximumFOp::create(b, state[oCount + i],
                                     fmul(columnReduce(b, mx, true), u));
      // A column that has seen no key yet keeps -inf and subtracts 0.
      Value none = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mx,
                                         cf(-INFINITY));
      Value base = select(none, cf(0.0), mx);
      alpha[i] = exp2(fsub(state[oCount + i], base));
      Value negBase = arith::NegFOp::create(b, base);
      for (int64_t e : {c, c + 2})
        s[nb][e] = exp2(math::FmaOp::create(b, s[nb][e], u, negBase));
      l[i] = fadd(fmul(state[oCount + columns + i], alpha[i]),
                  fadd(s[nb][c], s[nb][c + 2]));
      m[i] = mx;
    }

  // V's scales relative to the tile's largest, rounded up to a power of
  // two (at least 2^-100: a tile of zero scales), so that P times them
  // stays in [0, 1]; O is kept in units of that power (`c`).
  // (16-bit pools have no scales: P as it is, in their type.)
  Value one = cf(1.0), unitV = one, ratio = one, vf[2] = {one, one};
  if (p.fp8) {
    Value vmax = arith::MaximumFOp::create(b, tile.vScale[0], tile.vScale[1]);
    vmax = arith::MaximumFOp::create(b, vmax, cf(std::ldexp(1.0, -100)));
    Value bits = arith::BitcastOp::create(b, i32, columnReduce(b, vmax, true));
    bits = arith::AndIOp::create(
        b, arith::AddIOp::create(b, bits, i32c(0x7fffff)), i32c(0x7f800000));
    unitV = arith::BitcastOp::create(b, f32, bits);
    Value invV = arith::BitcastOp::create(
        b, f32, arith::SubIOp::create(b, i32c(0x7f000000), bits));
    ratio = fmul(state[oCount + 2 * columns], invV);
    for (int64_t j = 0; j < 2; ++j)
      vf[j] = fmul(tile.vScale[j], invV);
  }
  // P'^T, the B operand of O^T += V^T P'^T: the lane's P' pairs (key g,
  // then g + 8, of its two columns) transposed.
  SmallVector<Fragment> pb;
  for (int64_t nb = 0; nb < blocks; ++nb)
    pb.push_back(decodeTranspose(
        nb, pack(fmul(s[nb][0], vf[0]), fmul(s[nb][1], vf[0]), mmaType),
        pack(fmul(s[nb][2], vf[1]), fmul(s[nb][3], vf[1]), mmaType)));

  // V^T's A fragments: block i's rows g and g + 8 are columns (Dv / 8) g +
  // 2 i and + 1 (a lane's run of each V row), its k indices keys 2t, 2t +
  // 1 (registers 0, 1) and 8 + 2t, 9 + 2t (2, 3), V rows r0, r1 and r2, r3
  // of the lane. PRMT interleaves two rows' bytes 0, 1 (then 2, 3) of a
  // word into pairs (FP8: byte i of a word is column 4 w + i of the run);
  // 16-bit rows: element i of word w is column 2 w + i, PRMT pairs two
  // rows' low (then high) halves.
  int64_t wordsPerRow = p.dv * p.poolBytes() / 32;
  SmallVector<Fragment> va;
  for (int64_t w = 0; w < wordsPerRow; ++w) {
    auto rows = [&](int64_t pr, int64_t selector) {
      return NVVM::PermuteOp::create(b, i32, tile.v[(2 * pr) * wordsPerRow + w],
                                     tile.v[(2 * pr + 1) * wordsPerRow + w],
                                     i32c(selector),
                                     NVVM::PermuteMode::DEFAULT);
    };
    if (!p.fp8) {
      va.push_back({asReg(rows(0, 0x5410)), asReg(rows(0, 0x7632)),
                    asReg(rows(1, 0x5410)), asReg(rows(1, 0x7632))});
      continue;
    }
    for (int64_t sel = 0; sel < 2; ++sel) {
      Value r01 = rows(0, sel ? 0x7362 : 0x5140);
      Value r23 = rows(1, sel ? 0x7362 : 0x5140);
      va.push_back({convertPair(b, r01, 0), convertPair(b, r01, 1),
                    convertPair(b, r23, 0), convertPair(b, r23, 1)});
    }
  }

  // O^T = O^T alpha c / 2^e + V^T P'^T; accumulator e of block (nb, i) is
  // column 2 nb + e % 2 of the lane's.
  SmallVector<Value> next;
  for (int64_t nb = 0; nb < blocks; ++nb)
    for (int64_t i = 0; i < mBlocks; ++i) {
      Accumulator o;
      for (int64_t e = 0; e < 4; ++e)
        o.push_back(fmul(state[(nb * mBlocks + i) * 4 + e],
                         fmul(alpha[2 * nb + e % 2], ratio)));
      o = mma(va[i], pb[nb], o, mmaType);
      next.append(o.begin(), o.end());
    }
  next.append(m, m + columns);
  next.append(l, l + columns);
  next.push_back(unitV);
  return next;
}

void KernelEmitter::decodeStore(ValueRange state, Value out) {
  int64_t blocks = p.decodeColumnBlocks(), mBlocks = p.dv / 16;
  int64_t columns = 2 * blocks, oCount = blocks * mBlocks * 4;
  int64_t stride = p.decodeRowStride(), stats = p.decodeStatsOffset();
  int64_t run = p.dv / 8, warps = Problem::kDecodeWarps;
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value shared = memref::ViewOp::create(
      b,
      MemRefType::get({p.sharedBytes() / 4}, f32, MemRefLayoutAttrInterface(),
                      workgroup),
      tiles, idx(0), ValueRange{});
  // Each warp's O (times its unit c): row r at (16 w + r) * stride,
  // columns in order; its maxima and sums.
  Value c = state[oCount + 2 * columns];
  Value warpRow0 = mul(warp, 16);
  for (int64_t nb = 0; nb < blocks; ++nb)
    for (int64_t col = 0; col < 2; ++col) {
      Value row = add(warpRow0, columnRow(nb, col));
      for (int64_t i = 0; i < mBlocks; ++i) {
        int64_t o = (nb * mBlocks + i) * 4 + col;
        Value pair = vector::FromElementsOp::create(
            b, VectorType::get({2}, f32),
            ValueRange{fmul(state[o], c), fmul(state[o + 2], c)});
        vector::StoreOp::create(
            b, pair, shared,
            ValueRange{add(mul(row, stride), add(mul(rowA, run), idx(2 * i)))},
            /*nontemporal=*/false, llvm::MaybeAlign(8));
      }
      int64_t i = 2 * nb + col;
      Value sum = columnReduce(b, state[oCount + columns + i], false);
      ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rowA, idx(0)),
             [&] {
               memref::StoreOp::create(b, state[oCount + i], shared,
                                       ValueRange{add(idx(stats), row)});
               memref::StoreOp::create(
                   b, sum, shared,
                   ValueRange{add(idx(stats + warps * 16), row)});
             });
    }
  gpu::BarrierOp::create(b);

  // Element e of the used rows x Dv: O = sum_w 2^(m_w - M) O_w over
  // L = sum_w 2^(m_w - M) l_w.
  int64_t used = p.group * p.rowsPerHead, elements = used * p.dv;
  forEachChunk(elements, [&](Value e, bool) {
    Value row = div(e, p.dv), col = rem(e, p.dv);
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
          b, shared, ValueRange{add(mul(add(idx(16 * w), row), stride), col)});
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
  int64_t blocks = p.decodeColumnBlocks(), mBlocks = p.dv / 16;
  int64_t columns = 2 * blocks;
  Value rowScale[2];
  SmallVector<Fragment> qf = decodeQuery(q, rowScale);
  // Scores in log2 units are unit * x (with a softcap, unit scales x into
  // the tanh): the unit of the lane's columns 2t, 2t + 1 of each n-block,
  // from the lanes that hold those rows of Q (lane 4 r); their positions.
  double u = p.softcap ? p.scale / *p.softcap : p.scale * M_LOG2E;
  SmallVector<Value, 4> unit;
  colPos.clear();
  for (int64_t nb = 0; nb < blocks; ++nb)
    for (int64_t c = 0; c < 2; ++c) {
      Value from = toI32(mul(add(mul(quadCol, 2), idx(c)), 4));
      unit.push_back(gpu::ShuffleOp::create(b, fmul(cf(u), rowScale[nb]), from,
                                            i32c(32), gpu::ShuffleMode::IDX)
                         .getShuffleResult());
      colPos.push_back(rowPosition(columnRow(nb, c)));
    }
  // The lane's row of its warp's transpose blocks (decodeTranspose).
  transposeAt = add(memref::ExtractAlignedPointerAsIndexOp::create(b, tiles),
                    add(idx(p.decodeTransposeOffset()),
                        add(mul(warp, blocks * 256), mul(rem(lane, 16), 16))));

  // State: O^T (c0..c3 of each block), the columns' running maxima and the
  // lane's sums, and O's unit. A sink's term starts warp 0's columns (of
  // the first split).
  SmallVector<Value> state(blocks * mBlocks * 4, cf(0.0));
  Value lead = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, warp, idx(0));
  if (split)
    lead = both(lead, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, split,
                                            idx(0)));
  Value ms[4], ls[4];
  for (int64_t nb = 0; nb < blocks; ++nb)
    for (int64_t c = 0; c < 2; ++c) {
      int64_t i = 2 * nb + c;
      ms[i] = cf(-INFINITY);
      ls[i] = cf(0.0);
      if (!sink)
        continue;
      Value head =
          arith::MinUIOp::create(b, rowHead(columnRow(nb, c)), idx(p.hq - 1));
      Value x = memref::LoadOp::create(b, sink, ValueRange{head});
      if (x.getType() != f32)
        x = arith::ExtFOp::create(b, f32, x);
      ms[i] = select(lead, fmul(x, cf(M_LOG2E)), cf(-INFINITY));
      ls[i] = select(both(lead, arith::CmpIOp::create(
                                    b, arith::CmpIPredicate::eq, rowA, idx(0))),
                     cf(1.0), cf(0.0));
    }
  state.append(ms, ms + columns);
  state.append(ls, ls + columns);
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
  if (p.fp8)
    ringScales = memref::ViewOp::create(
        b,
        MemRefType::get(
            {p.decodeScalesOffset() / 4 +
             Problem::kDecodeWarps * p.decodeStages() * p.decodeScaleFloats()},
            f32, MemRefLayoutAttrInterface(), workgroup),
        tiles, idx(0), ValueRange{});
  int64_t stages = p.decodeStages();
  if (p.decodeTma) {
    // The warps' mbarriers (one arrival a phase: lane 0's, with the
    // bytes), initialized before any copy is issued.
    ringWords = memref::ViewOp::create(
        b,
        MemRefType::get({p.decodeScalesOffset() / 4}, i32,
                        MemRefLayoutAttrInterface(), workgroup),
        tiles, idx(0), ValueRange{});
    if (!tilesAddress)
      tilesAddress = memref::ExtractAlignedPointerAsIndexOp::create(b, tiles);
    ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, idx(0)),
           [&] {
             for (int64_t i = 0; i < Problem::kDecodeWarps * stages; ++i)
               NVVM::MBarrierInitOp::create(
                   b,
                   sharedPointer(
                       add(tilesAddress, idx(p.decodeBarrierOffset() + 8 * i))),
                   i32c(1), /*predicate=*/nullptr);
             NVVM::FenceMbarrierInitOp::create(b);
           });
    gpu::BarrierOp::create(b);
  }
  auto issue = [&](Value t, Value slot, ValueRange entries) {
    if (p.decodeTma)
      return decodeIssueTma(t, slot, entries[0]), Value();
    return decodeIssue(t, slot, entries);
  };
  for (int64_t i = 0; i + 1 < stages; ++i)
    issue(add(tLo, idx(i)), idx(i), decodeEntries(add(tLo, idx(i))));
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
    Value group =
        issue(add(t, idx(stages - 1)), rem(add(rel, idx(stages - 1)), stages),
              sets.take_front(perSet));
    SmallVector<Value, 2> next =
        decodeEntries(add(t, idx(stages - 1 + kEntriesAhead)));
    Value kw0 = add(mul(t, p.blockKV), mul(warp, kWarpKeys));
    Value slot = rem(rel, stages);
    if (p.decodeTma) {
      // Tile t's copies complete phase rel / stages of its stage's
      // mbarrier (which also makes their bytes visible to the lanes).
      waitPhase(decodeBarrier(slot), rem(div(rel, stages), 2));
      decodeClearPast(kw0, slot);
    } else {
      nvgpu::DeviceAsyncWaitOp::create(b, group,
                                       b.getI32IntegerAttr(stages - 1));
      NVVM::SyncWarpOp::create(b, allLanes);
    }
    SmallVector<Value> yielded =
        decodeStep(kw0, decodeRead(slot), qf, unit, args.take_front(carried));
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

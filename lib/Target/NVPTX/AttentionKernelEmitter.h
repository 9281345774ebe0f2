//===- AttentionKernelEmitter.h - the attention kernel emitter -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the tensor-core attention kernel of a mnemo.attention
// (AttentionKernel.cpp) and of a mnemo.paged_attention
// (PagedAttentionKernel.cpp) share: the problem an op poses, its run-time
// sizes, the kernel emitter and the launches.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TARGET_NVPTX_ATTENTIONKERNELEMITTER_H
#define MNEMO_TARGET_NVPTX_ATTENTIONKERNELEMITTER_H

#include "RopeOnLoad.h"
#include "TensorCoreBuilder.h"

#include "dialects/Mnemo/IR/MnemoOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <tuple>

namespace mlir::mnemo::nvptx::attention {

/// The largest head dim (D and Dv) one warpgroup's O takes: wgmma's widest
/// N, and with it Dv / 2 = 128 accumulators a thread; mma.sync's bound.
constexpr int64_t kMaxHeadDim = 256;
/// With wgmma, a Dv up to twice that is split between two warpgroups (an
/// absorbed MLA's 512), and D is bound by shared memory alone (its 576).
constexpr int64_t kMaxSplitValueDim = 2 * kMaxHeadDim;

/// Facts of one attention op the kernel is generated for. The batch and
/// the sequence lengths may be dynamic (kDynamic), and then so are the
/// split count and the number of query tiles: the kernel reads them from
/// Sizes (host values it takes as arguments).
struct Problem {
  Type elem; // bf16 or f16; f32 as TF32 (below)
  int64_t batch, hq, hkv, sq, skv, d, dv;
  bool dynamic = false;            // batch, sq or skv known at run time only
  /// mnemo.paged_attention: K and V are page pools [Pages, Hkv, P, d]
  /// read through the block table, each sequence has its own length and
  /// query positions (always dynamic; skv is the table's capacity).
  bool paged = false;
  int64_t pageSize = 0;            // P
  /// With indices [B, Sq, K] (DeepSeek-V3.2's top-k selection; a paged
  /// attention's or mnemo.sparse_attention's): a block's rows share one
  /// query position (rowsPerHead 1) and its key tiles are the position's K
  /// entries (skv is K), each the token it names (none outside the
  /// sequence: masked).
  bool selected = false;
  /// FP8 E4M3 pools (paged only): rows are copied raw into a ring of
  /// kRing slots and dequantized into the bf16 K/V tile, which K and V
  /// share (used one after the other).
  bool fp8 = false;
  static constexpr int64_t kRing = 4;
  /// The decode kernel (PagedDecodeKernel.cpp): 16 query rows (the
  /// group's heads times the query tokens), each of the 4 warps its own 16
  /// keys of a 64-key tile through its own ring of raw rows, read from
  /// there into mma.sync fragments.
  bool decode = false;
  static constexpr int64_t kDecodeWarps = 4;
  int64_t group;                   // query heads per KV head
  /// Blocks that share one KV head's group when it has more heads than a
  /// block has rows (an absorbed MLA's 128 heads over one latent row): each
  /// takes group / headTiles heads of one query position.
  int64_t headTiles = 1;
  /// Warpgroups that share the block's 64 rows, each accumulating its own
  /// Dv / dvParts columns of O (2 above Dv 256); with splitScores (wgmma)
  /// each also scores its own half of a tile's keys, with mma.sync each
  /// warp scores all of them for its 16 rows.
  int64_t dvParts = 1;
  int64_t rowsPerHead;             // query positions per block and head
  double scale;                    // softmax scale
  std::optional<double> softcap;
  std::optional<int64_t> window;
  bool causal;
  int64_t blockQ;                  // query rows per block: 64 or 128
  int64_t blockKV;                 // keys per KV tile
  int64_t splits = 1;              // KV ranges per query tile (split-KV);
                                   // kDynamic: chosen at run time
  int64_t splitKV = 0;             // the pass option (0: automatic)
  int64_t smCount = 0;             // multiprocessors of the chip
  /// Rotary embeddings applied on the Q and K tiles, and why a rope
  /// feeding Q or K stays a kernel of its own (empty: none there).
  RopeOnLoad rope[2];
  std::string ropeWhy[2];

  /// f32 Q, K and V (mnemo.attention, or a paged attention over f32
  /// pools) on mma.sync's TF32 m16n8k8:
  /// the tiles hold the f32 values as stored and count 16-bit units (a
  /// row of D floats is 2 D units), so that staging and ldmatrix see 16-bit
  /// tiles whose fragments are TF32's read as pairs; three products a term
  /// (3xTF32) unless singleTf32.
  bool tf32() const { return elem.isF32(); }
  bool singleTf32 = false;
  int64_t units() const { return tf32() ? 2 : 1; }
  /// The type the tiles are addressed in (TensorCoreBuilder's element).
  Type tileElem() const {
    return tf32() ? BFloat16Type::get(elem.getContext()) : elem;
  }

  int64_t queryTiles() const { return (sq + rowsPerHead - 1) / rowsPerHead; }
  /// Query heads a block takes, and the columns of O a thread's
  /// warpgroup accumulates.
  int64_t blockHeads() const { return group / headTiles; }
  int64_t oCols() const { return dv / dvParts; }
  /// Head dims past one warpgroup's (an absorbed MLA's 576 / 512): the
  /// operands LLVM would hoist out of the KV loop (a wgmma descriptor a
  /// k-step, a cp.async address a copy) no longer fit in registers beside
  /// O, so the loop keeps them (no LICM) and a thread copies one row's
  /// chunks.
  bool wide() const { return d > kMaxHeadDim || dv > kMaxHeadDim; }
  /// A paged attention whose values are its keys' leading features (an
  /// MLA layer's latent, cached once): V is a view of the K tile's first
  /// Dv columns. 16-bit pools with wgmma: K has two buffers (tile t in
  /// buffer (t - tLo) % 2), so that the next tile loads during a whole
  /// step; with mma.sync (sm_80's 163 KiB) one, the next tile loaded once
  /// the step's PV product is done. FP8 pools (wgmma): one bf16 K tile, and
  /// the ring holds K's raw tiles alone, two.
  bool sharedValues = false;
  /// FP8 with sharedValues: the K tile holds the rows' E4M3 values (exact
  /// in bf16), and each row's scale multiplies its column of S and of P
  /// in f32: a scaled key rounded to bf16 would skew an MLA's large
  /// scores (tens of units) by up to 2^-9 of each.
  bool scaledColumns() const { return fp8 && sharedValues; }
  int64_t kBuffers() const { return sharedValues && !fp8 && wgmma ? 2 : 1; }
  int64_t ringSlots() const { return sharedValues ? 2 : kRing; }
  bool wgmma = false;              // sm_90a warpgroup MMA (else mma.sync)
  bool tma = false;                // sm_90a TMA loads (else cp.async)

  int64_t threads() const {
    return decode ? 32 * kDecodeWarps : 2 * blockQ * dvParts;
  }
  /// Decode: each warp's O (f32, rows of Dv + 8 against bank conflicts),
  /// running max and sum of the 16 rows, combined once at the end.
  int64_t decodeRowStride() const { return dv + 8; }
  int64_t decodeStatsOffset() const {
    return kDecodeWarps * 16 * decodeRowStride();
  }
  /// Decode: each warp's ring of decodeStages() tiles (16 K rows, 16 V
  /// rows, raw), then their scales (16 K, 16 V a stage, f32); the combine
  /// buffer above reuses it after the loop. Bytes of a pool element;
  /// stages of the ring (16-bit rows take twice the bytes: three stages
  /// keep two blocks a multiprocessor).
  int64_t poolBytes() const { return fp8 ? 1 : 2; }
  int64_t decodeStages() const { return fp8 ? 4 : 3; }
  /// The pieces of a K row a lane reads: 16 bytes, or a quarter of a
  /// short row.
  int64_t decodePieceBytes() const {
    return std::min<int64_t>(16, d * poolBytes() / 4);
  }
  /// Decode over FP8 pools with TMA (sm_90a): a warp's 16 keys of a tile
  /// are 16 / R boxes of R = min(P, 16) rows of one page each, copied by
  /// cp.async.bulk.tensor onto the stage's mbarrier (one lane issues a
  /// tile's four or eight copies, where the lanes' 16-byte cp.async pieces
  /// were 288), the rows in the swizzle TMA gives their width. Pages of 8
  /// or a multiple of 16 keys (a box stays in its page).
  bool decodeTma = false;
  int64_t decodeBoxRows() const { return std::min<int64_t>(pageSize, 16); }
  int64_t decodeBoxes() const { return 16 / decodeBoxRows(); }
  /// TMA's swizzle of rows of `rowBytes` (128, 64 or 32; none below), and
  /// the alignment a region of such rows needs for it (and TMA's 128).
  static int64_t tmaSwizzle(int64_t rowBytes) {
    return rowBytes >= 32 ? std::min<int64_t>(rowBytes, 128) : 0;
  }
  static int64_t tmaRegionAlign(int64_t rowBytes) {
    return std::max<int64_t>(128, 8 * tmaSwizzle(rowBytes));
  }
  /// Byte offset of a stage's V rows (after its 16 K rows), and a stage's
  /// bytes (with TMA each region aligned for its swizzle).
  int64_t decodeVOffset() const {
    int64_t k = 16 * d * poolBytes();
    return decodeTma ? llvm::alignTo(k, tmaRegionAlign(dv * poolBytes())) : k;
  }
  int64_t decodeStageBytes() const {
    int64_t end = decodeVOffset() + 16 * dv * poolBytes();
    if (!decodeTma)
      return end;
    return llvm::alignTo(end, std::max(tmaRegionAlign(d * poolBytes()),
                                       tmaRegionAlign(dv * poolBytes())));
  }
  /// f32s of a stage's scales: 16 K then 16 V; with TMA each box's R in a
  /// 128-byte slot of its own (K's boxes, then V's).
  int64_t decodeScaleFloats() const {
    return decodeTma ? 2 * decodeBoxes() * 32 : 32;
  }
  int64_t decodeScalesOffset() const {
    return kDecodeWarps * decodeStages() * decodeStageBytes();
  }
  /// TMA: each warp's mbarriers, one a stage, after the scales.
  int64_t decodeBarrierOffset() const {
    return decodeScalesOffset() +
           (fp8 ? 4 * kDecodeWarps * decodeStages() * decodeScaleFloats() : 0);
  }
  /// Decode: n8 blocks of query rows (the tile's rows are S^T's
  /// columns).
  int64_t decodeColumnBlocks() const { return group * rowsPerHead > 8 ? 2 : 1; }
  /// Decode: each warp's 256-byte block a column block through which P^T
  /// is transposed (stmatrix, ldmatrix), after the scales (FP8 only).
  int64_t decodeTransposeOffset() const {
    return decodeBarrierOffset() +
           (decodeTma ? 8 * kDecodeWarps * decodeStages() : 0);
  }
  int64_t decodeTransposeBytes() const {
    return kDecodeWarps * decodeColumnBlocks() * 256;
  }
  /// Shared memory holds the K tile, the V tile and the Q tile, in that
  /// order (Q and the first K tile load together); with sharedValues, K's
  /// two buffers and Q.
  int64_t kBase() const { return 0; }
  int64_t vBase() const {
    return fp8 || sharedValues ? 0 : blockKV * d * units();
  }
  int64_t qBase() const {
    if (fp8)
      return blockKV * std::max(d, dv);
    return sharedValues ? kBuffers() * blockKV * d
                        : blockKV * (d + dv) * units();
  }
  int64_t sharedElements() const { return qBase() + blockQ * d * units(); }
  /// FP8: the ring's rows (bytes, unswizzled) and their scales follow.
  int64_t ringSlotBytes() const { return blockKV * std::max(d, dv); }
  int64_t ringOffset() const { return 2 * sharedElements(); }
  int64_t ringScalesOffset() const {
    return ringOffset() + ringSlots() * ringSlotBytes();
  }
  /// scaledColumns: the K tile's scales (f32), after the ring's.
  int64_t keyScalesOffset() const {
    return ringScalesOffset() + ringSlots() * blockKV * 4;
  }
  /// Two 8-byte mbarriers (K and Q, V) follow the tiles with TMA.
  int64_t barrierOffset() const { return 2 * sharedElements(); }
  /// With Dv in parts (16-bit pools), each warpgroup scores half of a KV
  /// tile's keys: S and P are computed once, not once a warpgroup. The
  /// row maxima are exchanged through shared memory (and the sums at the
  /// end), and each warpgroup's P (bf16, 64-column panels of 128-byte
  /// rows, swizzled as a wgmma A operand) is the other's A operand for its
  /// keys.
  bool splitScores() const {
    return dvParts > 1 && (!fp8 || sharedValues) && !decode && wgmma;
  }
  /// Byte offsets of the P tile (1024-aligned for the swizzle) and of the
  /// row statistics (f32, [2 warpgroups][blockQ rows]) after the tiles.
  int64_t exchangeOffset() const { return (tilesBytes() + 1023) / 1024 * 1024; }
  int64_t statsOffset() const {
    return exchangeOffset() + 2 * blockQ * blockKV;
  }
  int64_t tilesBytes() const {
    if (fp8)
      return keyScalesOffset() + (scaledColumns() ? blockKV * 4 : 0);
    return barrierOffset() + (tma ? 16 : 0);
  }
  int64_t sharedBytes() const {
    if (decode)
      return std::max(4 * (decodeStatsOffset() + 2 * kDecodeWarps * 16),
                      decodeTransposeOffset() + decodeTransposeBytes());
    if (splitScores())
      return statsOffset() + 4 * 2 * blockQ;
    return tilesBytes();
  }
  /// Blocks a multiprocessor holds at once, which decode (bound by memory)
  /// fills: as many as shared memory allows (228 KiB a multiprocessor on
  /// sm_90, 164 on sm_80, 1 KiB of each block's reserved), at most 3 with
  /// wgmma (170 registers a thread; at 4, 128 registers, the bf16 kernel
  /// spills) and 2 with mma.sync or above Dv 128 (the O accumulators alone
  /// take Dv / 2 registers). The paged kernel declares it (.minnctapersm),
  /// so that ptxas keeps its registers in that bound.
  int64_t residentBlocks() const {
    // Decode: Q's fragments, O and one tile in registers (168 a thread
    // at D 128 with FP8 pools), the ring in shared memory.
    if (decode)
      return std::min<int64_t>(3, 228 * 1024 / (sharedBytes() + 1024));
    int64_t perSM = (wgmma ? 228 : 164) * 1024;
    int64_t byRegisters = wgmma && dv <= 128 ? 3 : 2;
    return std::max<int64_t>(
        1, std::min<int64_t>(byRegisters, perSM / (sharedBytes() + 1024)));
  }
};

/// The tile configuration both ops share, from the facts the analysis
/// filled in (element type, sizes, group); fails with `why` when the kernel
/// cannot take them.
LogicalResult configure(Problem &p, int64_t blockQ, int64_t blockKV,
                        bool wgmma, bool tma, int64_t splitKV,
                        int64_t smCount, int64_t sharedLimit,
                        std::string &why);

/// The sizes of query `q`, keys `k` (or a key pool: its head count and
/// head dim) and values `v` into `p`.
void setSizes(Problem &p, RankedTensorType q, RankedTensorType k,
              RankedTensorType v);

/// Checks a sink operand the kernel reads: static, at most 32 bits.
LogicalResult checkSink(Value sink, std::string &why);
/// Checks an additive mask the kernel reads an element at a time where the
/// scores are: f32, bf16 or f16.
LogicalResult checkMask(Value mask, std::string &why);

/// The problem's run-time sizes as host index values (constants where
/// static), which a dynamic kernel takes as arguments.
struct Sizes {
  Value batch, sq, skv; // of Q and K
  Value queryTiles;     // blocks along the query sequence (grid.x)
  Value splits;         // KV ranges per query tile
};

/// The run-time sizes of buffer `q` and `skv` keys, and the split count
/// (AttentionKernel.cpp).
Sizes computeSizes(ImplicitLocOpBuilder &b, Problem &p, Value q, Value skv);

/// The split-KV combine kernel's launch (AttentionCombine.cpp): the f32
/// partials `part` [splits, B, Hq, Sq, Dv] weighed by their log2-sum-exp
/// `lse` [splits, B, Hq, Sq] into `out`. With a split count chosen at run
/// time its grid is empty (the launch skipped) when there is one split.
void emitCombine(ImplicitLocOpBuilder &b, const Problem &p, const Sizes &n,
                 Value part, Value lse, Value out);

/// The first element of a staged row in global memory, and whether the row
/// exists (rows past the sequence or the GQA group are zero-filled).
struct RowSource {
  Value memref;
  SmallVector<Value> indices;
  Value valid;
};

/// Emits the kernel body. Every fragment loop is unrolled here, so each
/// fragment is an SSA value and stays in registers; only the KV loop is a
/// loop of the IR.
class KernelEmitter : TensorCoreBuilder {
public:
  KernelEmitter(ImplicitLocOpBuilder &b, const Problem &p, const Sizes &n)
      : TensorCoreBuilder(b, p.tileElem()), p(p), n(n) {}

  /// Fills `launch`'s body: Q [B,Hq,Sq,D], K [B,Hkv,Skv,D], V [B,Hkv,Skv,Dv]
  /// and `out` [B,Hq,Sq,Dv] are global memrefs; `sink` (memref [Hq]) and
  /// `qOffset` (index) may be null.
  void emit(gpu::LaunchOp launch, Value q, Value k, Value v, Value out,
            Value sink, Value qOffset, ArrayRef<Value> tensorMaps);
  /// The decode kernel's body (PagedDecodeKernel.cpp) for a paged
  /// attention with `p.decode`.
  void emitDecode(gpu::LaunchOp launch, Value q, Value k, Value v, Value out,
                  Value sink);
  /// With split-KV: the f32 partial outputs [splits, B, Hq, Sq, Dv] and
  /// their log2-sum-exp [splits, B, Hq, Sq] that `emit` writes instead of
  /// `out`.
  Value part, lse;
  /// decodeTma: the tensor maps of the key and value pools and of their
  /// scales.
  Value decodeMaps[4];
  /// A paged attention's block table [B, MaxPages], context lengths [B]
  /// and query positions [B, Sq]; K and V are then its page pools (FP8:
  /// with their scale pools [Pages, Hkv, P]).
  Value table, lens, qpos, kScales, vScales;
  /// selected: the indices [B, Sq, K].
  Value indices;
  /// mnemo.attention's additive mask (null: none), broadcastable to
  /// [B, Hq, Sq, Skv].
  Value mask;

private:
  /// The emission's stages: shared memory, thread and block coordinates
  /// and the block's KV tile range; the first loads (Q and K(tLo)) and the
  /// Q fragments; the loop's initial state (O, running max and sum, with a
  /// sink's term); one KV tile's step, returning the next state.
  void setUp(gpu::LaunchOp launch, Value qOffset, ArrayRef<Value> tensorMaps);
  void prologue(Value q);
  SmallVector<Value> initialState(Value sink);
  SmallVector<Value> kvStep(Value t, ValueRange state);
  /// Starts the copies of K tile `next` into `tile` (one group) when it is
  /// below tHi.
  void stageKeys(Value next, const SharedTile &tile);
  /// Paged: starts the copies of K tile `next` into `tile` when it is below
  /// tHi and waits for every earlier group (waitAll's empty one: pending 2
  /// leaves the new group in flight); past the block's tiles, for all.
  void stageNextKeys(Value next, const SharedTile &tile);
  /// Rows of K or V from global memory for cp.async: row r is key kv0 + r.
  std::function<RowSource(Value)> kvRow(Value memref, Value kv0);
  /// TMA coordinates of KV tile `t`, innermost first.
  SmallVector<Value> kvCoords(Value t);

  Value exp2(Value x) { return exp2Approx(b, x); }
  /// Reduces over the 4 lanes of a quad, which hold one accumulator row.
  Value quadReduce(Value x, bool isMax);

  /// Row `r` of the block's query tile: its head, position in the sequence
  /// and whether it exists.
  Value rowHead(Value r) { return add(headBase, div(r, p.rowsPerHead)); }
  Value rowQuery(Value r) { return add(q0, rem(r, p.rowsPerHead)); }
  Value rowValid(Value r) {
    return both(lt(r, idx(p.blockHeads() * p.rowsPerHead)),
                lt(rowQuery(r), sq()));
  }

  /// The sequence lengths and split count: constants made here when
  /// static, else the host values the kernel takes as arguments (paged:
  /// the keys are the sequence's length, selected: its query's entries).
  Value sq() { return p.dynamic ? n.sq : idx(p.sq); }
  Value skv() {
    return p.paged && !p.selected ? len : p.dynamic ? n.skv : idx(p.skv);
  }
  /// A paged attention's query position of row `r` (-1: padding).
  Value rowPosition(Value r);
  /// The block table's entry for key `key` of this block's sequence, in
  /// the table's own type (32 bits: half the registers of an index where
  /// entries are carried ahead; the table's last entry for a key past it:
  /// an entry the key's copy then does not use).
  Value pageEntry(Value key);
  /// Key `key` of this block's sequence (selected: the token its entry
  /// `key` names): its page, its row in the page, and whether it exists
  /// (below the length); else page 0, row 0. `entry`: its pageEntry,
  /// loaded beforehand.
  std::tuple<Value, Value, Value> pagedKey(Value key, Value entry = {});
  /// selected: whether each of the lane's columns of tile `kv0` (the
  /// warpgroup's keys from kv0) names a cached token: 2 a block of 8 keys.
  SmallVector<Value> namedColumns(Value kv0);
  /// selected: the cached token entry `slot` of the block's query names,
  /// and whether it names one (an entry below K, a token below the
  /// length); else 0.
  std::pair<Value, Value> selectedToken(Value slot);
  /// FP8: starts the copies of K (or V) tile `t`'s raw rows and scales
  /// into ring slot `slot` (zero bytes for rows past the sequence or a
  /// tile at or past tHi) and commits them as one group.
  void stageRaw(Value t, bool isV, Value slot);
  /// FP8: dequantizes ring slot `slot` into the bf16 tile `tile` (row r
  /// times its scale, rounded to bf16; with scaledColumns, the E4M3 values
  /// alone, and the scales into `keyScales`).
  void dequantize(const SharedTile &tile, Value slot);
  /// scaledColumns: the accumulators `s` (S or P, the warpgroup's keys)
  /// times their keys' scales.
  void scaleColumns(SmallVectorImpl<Accumulator> &s);
  /// FP8: one step of the ring, which holds K(tLo), V(tLo), K(tLo + 1), ...
  /// (tile j in slot j % kRing): tile j, K or V into `tile`, is awaited,
  /// dequantized and published, and the ring's next tile (K or V, as
  /// `nextIsV`, of KV tile t + `ahead`) takes the slot tile j - 1 left.
  void ringStep(const SharedTile &tile, Value j, Value t, int64_t ahead,
                bool nextIsV);
  /// FP8 with sharedValues: the ring holds K(tLo), K(tLo + 1), ... (tile
  /// j in slot j % 2); tile j is awaited and dequantized into the K tile
  /// (which V views); K tile t + 2 may then take its slot (stageRaw).
  void sharedRingStep(Value j);
  /// Decode (PagedDecodeKernel.cpp): the raw rows and scales of this
  /// warp's 16 keys from `kw0`; this lane's Q fragments (f16, each row
  /// scaled by a power of two, returned in `rowScale`); one tile's step;
  /// the warps' results combined and stored.
  struct DecodeTile {
    SmallVector<Value> k, v; // i32 words of K rows g, g + 8; of V rows
    Value kScale[2], vScale[2]; // keys g, g + 8
  };
  /// The block-table entries decodeIssue's copies of tile `t` name (the
  /// lane's row's and, FP8, its scale's), loaded a step ahead of the
  /// copies so that the load's latency is not the copies'.
  SmallVector<Value, 2> decodeEntries(Value t);
  /// Starts the copies of tile `t`'s rows and scales (this warp's 16
  /// keys; zero bytes past the length or the block's tiles) into stage
  /// `slot` of the warp's ring, with `entries` its decodeEntries; returns
  /// the group's token.
  Value decodeIssue(Value t, Value slot, ValueRange entries);
  /// decodeTma's issue: lane 0 expects the bytes of tile `t`'s boxes
  /// that hold keys below the length on the stage's mbarrier and starts
  /// their copies (none for a tile at or past the block's last); the
  /// entries are lane j's page of box j, which lane 0 takes by shuffles.
  void decodeIssueTma(Value t, Value slot, Value entry);
  /// decodeTma: zeros the V rows and the scales of the warp's keys from
  /// `kw0` past the length in stage `slot` (TMA copied whole pages), as
  /// the cp.async copies' zero fill leaves them.
  void decodeClearPast(Value kw0, Value slot);
  /// decodeTma: this warp's mbarrier of stage `slot`.
  Value decodeBarrier(Value slot);
  /// The lane's words and scales of stage `slot`.
  DecodeTile decodeRead(Value slot);
  SmallVector<Fragment> decodeQuery(Value q, Value rowScale[2]);
  SmallVector<Value> decodeStep(Value kw0, const DecodeTile &tile,
                                ArrayRef<Fragment> qf, ArrayRef<Value> unit,
                                ValueRange state);
  /// The scores S^T (keys g, g + 8 of the warp's from `kw0`; the lane's
  /// columns) with masking applied where the warp's keys need it.
  SmallVector<Accumulator> decodeMask(ArrayRef<Accumulator> s, Value kw0);
  /// P'^T's B fragment of n-block `nb` from the lane's pairs of keys g
  /// and g + 8 (through the warp's transpose blocks in shared memory).
  Fragment decodeTranspose(int64_t nb, Value keysLo, Value keysHi);
  void decodeStore(ValueRange state, Value out);
  /// Tile row of the lane's column `c` (2t + c) of n-block `nb`.
  Value columnRow(int64_t nb, int64_t c) {
    return add(idx(8 * nb + c), mul(quadCol, 2));
  }
  /// FP8 tiles multiply as f16, 16-bit ones in their own type.
  Type decodeMmaType() const { return p.fp8 ? b.getF16Type() : p.elem; }
  /// The smallest non-negative and the largest query position of the
  /// block's rows (a paged attention's; no row: 2^62 and -1).
  std::pair<Value, Value> positionRange();
  Value splits() { return p.dynamic ? n.splits : idx(p.splits); }

  /// Applies `rope` to the tile `t` in shared memory; row r of the tile is
  /// at sequence index `seqOf(r)` of `seqLen`. Then publish() before the
  /// tile is read.
  void rotate(const SharedTile &t, const RopeOnLoad &rope,
              function_ref<Value(Value)> seqOf, int64_t seqLen);
  /// Makes this thread's shared-memory writes visible to the block (and,
  /// with wgmma, to the async proxy).
  void publish();

  /// Runs `body(c, guarded)` for chunks c = tid, tid + threads, ... below
  /// `chunks`; the last round, which may have fewer chunks than threads,
  /// under a guard (`guarded`).
  void forEachChunk(int64_t chunks, function_ref<void(Value, bool)> body);
  /// Starts the cp.async copies of all rows of `r`.
  void stage(const SharedTile &r, function_ref<RowSource(Value)> source,
             SmallVectorImpl<Value> &tokens);
  /// TMA: thread 0 expects the bytes of `tiles` on `barrier` and starts
  /// their copies; each entry is (region, map, coordinates past the column,
  /// innermost first).
  struct TmaTile {
    SharedTile region;
    Value map;
    SmallVector<Value> coords;
    /// Rows the box writes (a Q box of G heads x 64 / G positions may
    /// leave the region's last rows untouched).
    int64_t rows;
  };
  void tmaLoad(Value pred, int64_t barrier, ArrayRef<TmaTile> tiles);
  void tmaIssue(int64_t barrier, ArrayRef<TmaTile> tiles);
  /// Every thread waits for the phase `parity` of mbarrier `barrier`.
  void tmaWait(int64_t barrier, Value parity);

  /// Byte address in shared memory of element `element` of the tiles.
  Value sharedAddress(int64_t element, Value extraBytes = nullptr);
  /// sharedAddress of tile `t`'s byte `bytes` (past its shift).
  Value tileAddress(const SharedTile &t, Value bytes);
  /// S = Q K^T for the warpgroup's 64 rows, both operands in shared memory
  /// (with splitScores, of the warpgroup's half of the keys); `meanwhile`
  /// emits what runs while the tensor cores compute it.
  SmallVector<Accumulator> wgmmaScores(function_ref<void()> meanwhile = {});
  /// mma.sync: this warp's A fragment of Q for k-step `kk` (16 columns;
  /// TF32: 16 units, 8 floats).
  Fragment queryFragment(int64_t kk);
  /// TF32: S += Q K^T's k-step `kk` for the warp's rows and the tile's
  /// keys (`s`, one accumulator an n8 block).
  void scoresTf32(int64_t kk, SmallVectorImpl<Accumulator> &s);
  /// TF32: O += P V over the tile, P (`s`, after the softmax) in
  /// registers: the lane's keys 2t, 2t + 1 of an n8 block take the k8
  /// step's slots t and t + 4, so that P's A fragment is its accumulator
  /// (c0, c2, c1, c3) and V's B fragment is rows 2t and 2t + 1 of the
  /// lane's column, read from shared memory as they are.
  void valuesTf32(ArrayRef<Accumulator> s, SmallVectorImpl<Accumulator> &o);
  /// splitScores: the warpgroup's P (its half of the keys, f32 after the
  /// softmax) into the shared P tile as bf16, published to the block.
  void storeSharedP(ArrayRef<Accumulator> s);
  /// splitScores: each row's value of `x` (rows A and B) of this
  /// warpgroup and of the other, through the shared row statistics; a
  /// block barrier.
  std::pair<Value, Value> exchangeRows(Value x, Value y);
  /// O += P V with P in registers (`pa`, one A fragment per 16 keys) and V
  /// in shared memory; returns the new accumulators.
  SmallVector<Accumulator> wgmmaValues(ArrayRef<Fragment> pa,
                                       ArrayRef<Accumulator> o);
  /// O / l of the loop's final state `result` (0 for a row that saw no
  /// key) into `out` as 16-bit pairs; with split-KV, f32 partials and their
  /// log2-sum-exp (-inf: no key) into `part` and `lse`.
  void storeResults(ValueRange result, Value out);
  /// Row half `h` (rows g or g + 8 of the warp) of storeResults for `row`
  /// (its sum `l` over the quad and, with splitScores, both warpgroups):
  /// into `part` and `lse` when `partial`, else into `out`.
  void storeRow(ValueRange result, int64_t h, Value row, Value l, Value seen,
                Value inv, Value out, bool partial);

  /// One KV tile's step of the online softmax: the scores `s` (raw QK^T)
  /// become P, the running maxima `m` and partial sums `l` of rows g and
  /// g + 8 are updated, and `alpha` gets the factors rescaling O.
  void onlineSoftmax(SmallVectorImpl<Accumulator> &s, Value kv0, Value m[2],
                     Value l[2], Value alpha[2]);

  /// softmaxRow: row half `h` (accumulators 2h, 2h + 1 of each block) of
  /// it, with scores in log2 units `unit` times the accumulators.
  void softmaxRow(SmallVectorImpl<Accumulator> &s, int64_t h, Value unit,
                  Value &m, Value &l, Value &alpha);
  /// softmaxRow's maximum of row half `h` of `s` (over the quad, raw), and
  /// the rest of it from the new maximum `mx` (log2 units, with m).
  Value rowMax(ArrayRef<Accumulator> s, int64_t h);
  void softmaxFrom(SmallVectorImpl<Accumulator> &s, int64_t h, Value unit,
                   Value mx, Value &m, Value &l, Value &alpha);

  /// The additive mask's value (f32) for the block's row `r` and key
  /// `key`; 0 outside the sequences.
  Value maskAt(Value r, Value key);
  /// The scores of one KV tile with masking applied where `kv0` needs it.
  SmallVector<Accumulator> maskScores(ArrayRef<Accumulator> s, Value kv0);
  /// `s` with value e of block j set to -inf where its key is hidden from
  /// its query position (past the keys, causal, window), both given by
  /// `keyAndPos(j, e)`; under one uniform scf.if on whether the keys
  /// [k0, k0 + keys) cross any of those limits.
  SmallVector<Accumulator>
  maskKeys(ArrayRef<Accumulator> s, Value k0, int64_t keys,
           function_ref<std::pair<Value, Value>(int64_t, int64_t)> keyAndPos);

  const Problem &p;
  const Sizes &n;
  Value tilesAddress, barriers[2];
  Value maps[3]; // TMA tensor maps of Q, K, V
  SharedTile kTile, vTile, qTile;
  Value ringRows, ringScales; // FP8: the ring's raw rows and scales
  Value ringWords; // decodeTma: the ring as i32 words (decodeClearPast)
  Value keyScales;            // scaledColumns: the K tile's scales
  SmallVector<Value, 4> colPos; // decode: positions of the lane's columns
  SmallVector<Value> named;     // selected: this step's namedColumns
  Value transposeAt;            // decode: the lane's transpose row
  Value split; // this block's KV range (split-KV), or null
  Value tid, lane, lane8, laneMid, laneHi, warp, quadCol;
  /// This thread's warpgroup's share of Dv (Problem::dvParts): its first
  /// column of O, and the warpgroup (0 or 1).
  Value dvFirst, warpgroup;
  /// splitScores: the P tile and the row statistics' view.
  SharedTile pTile;
  Value pTiles, rowStats;
  Value batch, kvHead, headBase, q0, qOff, firstPos, lastPos;
  Value len;      // a paged attention's context length of this block's sequence
                  // (selected, not paged: the keys)
  Value capacity; // paged: the tokens the block table holds
  Value rowA, rowB, posA, posB;
  Value k, v;       // global K and V (cp.async staging)
  Value tLo, tHi;   // the block's KV tiles [tLo, tHi)
  Value first;      // thread 0 (issues TMA copies)
  SmallVector<Value> tokens;    // cp.async groups in flight
  SmallVector<Fragment> qFrag;  // mma.sync: this warp's Q rows
};

/// The buffers a kernel reads: Q, K and V (a paged attention's pools),
/// the sink and the query offset (may be null), and a paged attention's
/// block table, context lengths and query positions.
struct Buffers {
  Value q, k, v, sink, qOffset, mask;
  Value table, lens, qpos, kScales, vScales, indices;
};

/// The kernel launches over `in` before `b`'s insertion point; returns the
/// result tensor of type `resultType`.
Value launchKernels(ImplicitLocOpBuilder &b, Problem p, const Buffers &in,
                    RankedTensorType resultType);

/// `op` with its f32 `operands` (and f32 result) rounded to `elem`
/// (keepNarrowed: the result widened back) when `takes` accepts the
/// clone; else `op`, unchanged (also when they are not all f32).
Operation *roundOperands(Operation *op, ArrayRef<Value> operands, Type elem,
                         function_ref<bool(Operation *)> takes);

/// Clones the f32 op `op` with `map` (some operands rounded by the
/// `conversions`) and its result retyped to `elem`. When `takes` accepts
/// the clone, its result is widened back for `op`'s users and `op` erased;
/// else the clone and the conversions are. Returns the op that stays.
Operation *keepNarrowed(Operation *op, IRMapping &map,
                        ArrayRef<linalg::GenericOp> conversions, Type elem,
                        function_ref<bool(Operation *)> takes);

/// Why a paged attention keeps the decomposition, or the problem to
/// generate (PagedAttentionKernel.cpp).
FailureOr<Problem> analyze(mnemo::PagedAttentionOp op, int64_t blockQ,
                           int64_t blockKV, bool wgmma, bool tma,
                           int64_t splitKV, int64_t smCount,
                           int64_t sharedLimit, bool decodeKernel,
                           bool decodeKernel16, F32Precision f32Precision,
                           std::string &why);

/// Replaces a paged `op` with buffers, the kernel launches and the result.
void rewrite(mnemo::PagedAttentionOp op, const Problem &p);

/// Why a sparse attention keeps its decomposition, or the problem to
/// generate; its replacement (SparseAttentionKernel.cpp).
FailureOr<Problem> analyze(mnemo::SparseAttentionOp op, int64_t blockQ,
                           int64_t blockKV, bool wgmma, int64_t splitKV,
                           int64_t smCount, int64_t sharedLimit,
                           std::string &why);
void rewrite(mnemo::SparseAttentionOp op, const Problem &p);
/// An f32 sparse attention of a 16-bit artifact as one in `elem` (Q, K
/// and V rounded, the result widened back) when `takes` accepts it; else
/// `op`, unchanged.
mnemo::SparseAttentionOp
roundToWeightType(mnemo::SparseAttentionOp op, Type elem,
                  function_ref<bool(mnemo::SparseAttentionOp)> takes);

/// A paged attention with an f32 query and result over 16-bit or FP8 pools
/// as one with the query rounded to the tiles' type (the result widened
/// back) when `takes` accepts it; else `op`, unchanged.
mnemo::PagedAttentionOp
roundQuery(mnemo::PagedAttentionOp op,
           function_ref<bool(mnemo::PagedAttentionOp)> takes);

} // namespace mlir::mnemo::nvptx::attention

#endif // MNEMO_TARGET_NVPTX_ATTENTIONKERNELEMITTER_H

//===- LinearKernel.cpp - tensor-core linear layers -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites a mnemo.linear with bf16 or f16 weights (or f32 ones, as TF32:
// three products a term or one, when f32-precision asks) into one
// gpu.launch of a tiled GEMM on the tensor cores: a block computes a
// block-m x block-n tile
// of the output over 64-wide steps of K, its A (input) and W (weight) tiles
// in 2 to 6 stages of swizzled shared memory (cp.async, or TMA on
// mbarriers), multiplied with mma.sync m16n8k16 (ldmatrix fragments) or, on
// sm_90a, wgmma from shared memory, into f32 accumulators; the bias and the
// conversion to the result type are applied on the way out (split-K: by a
// reduction kernel). An f32 input is rounded to the weight's type as it is
// staged (the precision of a bf16 or f16 artifact; the accumulation stays
// f32); a SwiGLU or rms_norm producing the input is computed on the same
// register path. A decode tile's input takes no register path: it arrives
// by cp.async as stored, with the weight, and is computed into the A tile
// from shared memory (Gemm::rawStaged).
//
// A mnemo.grouped_linear (a mixture of experts' rows sorted by expert) is
// the same kernel over all its blocks of rows: a block of the grid reads
// the expert of its rows and streams that expert's weight (rows e N .. e N
// + N of the [E N, K] weight); a block whose rows name no expert skips its
// K loop and stores zeros.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreBuilder.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/Quantization.h"
#include "mnemo/Target/NVPTX/Chips.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <optional>

namespace mlir::mnemo {
#define GEN_PASS_DEF_LINEARKERNELPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace {

/// K elements per step: one 128-byte panel row of 16-bit elements.
constexpr int64_t kBlockK = 64;
/// Rows a GEMM of dynamic M is tiled for when nothing bounds them: a
/// prefill's (whole tiles of 64 or 128 rows and no split-K). A GEMM whose
/// only dynamic dim is the batch (a decode step's [B, 1, K]) is planned for
/// the largest batch instead (max-batch): small tiles and split-K.
constexpr int64_t kPlannedRows = 4096;
/// Stages of a decode step's tiles staged by cp.async (12 KiB each at 32
/// rows: three blocks fit a Hopper multiprocessor).
constexpr int64_t kDecodeStages = 6;

/// Static facts of one linear op and the tiling chosen for it.
struct Gemm {
  Type elem;            // MMA operands: the weight's type (bf16, f16, f32)
  Type inElem, outElem; // input (elem or f32) and result elements
  int64_t m, k, n;      // rows (leading dims), input and output features
  /// f32 weights (and input) on the tensor cores as TF32: three products
  /// (3xTF32) unless `singleTf32`. Shared memory holds the f32 values as
  /// pairs of 16-bit units (`tileElem`, bf16): every tile size, offset
  /// and K step below counts units, so that the layout (128-byte rows,
  /// 16-byte chunks, the swizzle) is the 16-bit one and so are the
  /// ldmatrix fragments, which are TF32's m16n8k8 ones read as pairs.
  bool singleTf32 = false;
  Type tileElem;
  bool tf32() const { return elem.isF32(); }
  /// 16-bit units per element, and K in units.
  int64_t units() const { return tf32() ? 2 : 1; }
  int64_t kUnits() const { return k * units(); }
  /// The rows are known at run time only: `m` is the count the tiling is
  /// chosen for (kPlannedRows, or the largest batch times the static row
  /// dims when the batch is the only dynamic dim: `boundedM`), the kernel
  /// takes the real one as an argument, and the grids follow it.
  bool dynamicM = false, boundedM = false;
  bool outIn;           // weight [N, K] (else [K, N])
  /// mnemo.grouped_linear: rows in blocks of `groupRows`, each with the
  /// weight [N, K] of the group the block names (`groupCount` of them).
  int64_t groupRows = 0, groupCount = 0;
  bool grouped() const { return groupRows > 0; }
  /// The input is silu(gate) * up of a mnemo.swiglu only this layer reads:
  /// computed as the A tile is staged.
  bool swiglu = false;
  /// The input is rms_norm(x, weight): the kernel stages x * weight (or
  /// x * (1 + weight)) and scales each output row by rsqrt(mean(x^2) +
  /// eps), the sums of squares gathered as x passes through. With
  /// split-K each split's sums go to the reduction, which scales the rows.
  bool rmsNorm = false, unitOffset = false;
  double eps = 0.0;
  /// rms_norm: its weight's element type.
  Type normElem;
  /// A decode step's input staged through registers (f32, SwiGLU,
  /// rms_norm) arrives by cp.async as it is stored, into a raw area of its
  /// stage, and is computed and rounded into the A tile from there when its
  /// step comes: its loads are as deep as the weight's.
  bool rawStaged = false;
  /// A reaches shared memory through registers (converted or computed),
  /// else copied as it is.
  bool viaRegisters() const { return inElem != elem || swiglu || rmsNorm; }
  int64_t blockM, blockN, warpsM, warpsN;
  /// sm_90a: each warpgroup multiplies its 64 rows with wgmma from shared
  /// memory (warps along M only, 16 rows each); else mma.sync.
  bool wgmma = false;
  /// With wgmma and a 16-bit input: the tiles arrive by TMA (one thread
  /// issues each step's copies) on one mbarrier per stage, after the tiles.
  bool tma = false;
  /// K ranges of `stepsPerSplit` steps computed by separate blocks (split-K)
  /// when the output tiles alone would leave multiprocessors idle; their
  /// f32 partials are summed by a second kernel.
  int64_t splits = 1, stepsPerSplit = 0;

  /// m16 and n8 MMA blocks of one warp.
  int64_t warpTilesM() const { return blockM / warpsM / 16; }
  int64_t warpTilesN() const { return blockN / warpsN / 8; }
  int64_t threads() const { return 32 * warpsM * warpsN; }
  int64_t kSteps() const { return (kUnits() + kBlockK - 1) / kBlockK; }
  int64_t gridM() const { return (m + blockM - 1) / blockM; }
  int64_t gridN() const { return (n + blockN - 1) / blockN; }
  /// A stage holds the A tile (blockM x 64) and then the W tile; `stages`
  /// of them rotate, `stages - 1` K steps loading ahead of the multiply
  /// (`stages - 2` with wgmma, whose last step is still in flight).
  int64_t stages = 2;
  int64_t stageElements() const { return (blockM + blockN) * kBlockK; }
  /// 3xTF32 with wgmma, which reads both operands from shared memory: a
  /// step's tiles are rounded to TF32 in place and their rests (lo) written
  /// beside the stages, in two buffers (one step's are read by its wgmma
  /// while the next step's are made).
  bool splitTiles() const { return wgmma && promotes(); }
  /// 3xTF32 sums each K step's products in fresh accumulators and adds
  /// them to the running sums with the CUDA cores' f32 add (round to
  /// nearest): the tensor cores' own accumulation truncates, which over a
  /// long K biased the sums by about K x 2^-26 relative (3e-5 at K 4096,
  /// 1e-4 at 14336, H200, 2026-12-06) against 2^-21 for the products.
  bool promotes() const { return tf32() && !singleTf32; }
  /// Bytes the rests take (reserved while the tiling is chosen).
  int64_t restBytes() const { return 2 * 2 * stageElements(); }
  int64_t restOffset() const { return stages * 2 * stageElements(); }
  int64_t barrierOffset() const {
    return restOffset() + (splitTiles() ? restBytes() : 0);
  }
  /// rms_norm: the rows' scales (f32) after the tiles.
  int64_t rowScaleOffset() const {
    return barrierOffset() + (tma ? 8 * stages : 0);
  }
  /// rawStaged: per stage, the raw inputs [blockM, 64] (x, then SwiGLU's
  /// up) and the rms_norm weight's 64 elements, each 16-byte aligned.
  int64_t rawInputBytes() const {
    return blockM * kBlockK * inElem.getIntOrFloatBitWidth() / 8;
  }
  int64_t rawNormBytes() const {
    return rmsNorm ? kBlockK * normElem.getIntOrFloatBitWidth() / 8 : 0;
  }
  int64_t rawStageBytes() const {
    return rawStaged ? (swiglu ? 2 : 1) * rawInputBytes() + rawNormBytes() : 0;
  }
  int64_t rawOffset() const {
    return (rowScaleOffset() + (rmsNorm ? 4 * blockM : 0) + 15) / 16 * 16;
  }
  /// Quantized weight (a decode tile's TF32 layer whose weight is a
  /// mnemo.dequantize of int8, E4M3 or int4 codes): per stage, the step's
  /// 32 codes of each row as stored (32 bytes, or 16 packed two a byte)
  /// and the rows' scales (f32 [blockN]), copied by cp.async and decoded
  /// into the W tile when the step comes.
  std::optional<mnemo::QuantFormat> quant;
  int64_t quantGroup = 0;
  bool quantized() const { return quant.has_value(); }
  /// Bytes of a row's codes in a step.
  int64_t codeRowBytes() const {
    return mnemo::quant::isPacked(*quant) ? kBlockK / 4 : kBlockK / 2;
  }
  int64_t codeBytes() const {
    return quantized() ? blockN * codeRowBytes() : 0;
  }
  int64_t codeScaleBytes() const { return quantized() ? 4 * blockN : 0; }
  int64_t quantOffset() const {
    return (rawOffset() + stages * rawStageBytes() + 15) / 16 * 16;
  }
  int64_t sharedBytes() const {
    return quantOffset() + stages * (codeBytes() + codeScaleBytes());
  }
};

bool isSixteenBit(Type t) { return t.isBF16() || t.isF16(); }
bool isStoredFloat(Type t) { return t.isF32() || isSixteenBit(t); }

/// What the kernel computes on its input loads.
struct Fusion {
  mnemo::SwiGluOp swiglu;
  mnemo::RmsNormOp rmsNorm;
};

/// The operands of a mnemo.linear or a mnemo.grouped_linear.
struct LinearView {
  Operation *op = nullptr;
  Value input, weight, bias, groups;
  /// The weight's mnemo.dequantize when the kernel can read its codes
  /// (quantizedWeightOf), else null.
  mnemo::DequantizeOp dequantize;
  int64_t groupRows = 0;
  bool outIn = true;
  int64_t k = 0, n = 0;
  Value result() const { return op->getResult(0); }
};

/// The mnemo.dequantize producing `weight` when a decode tile can read its
/// codes in place of the decoded f32 weight: int8 (without zero points),
/// fp8_e4m3 or int4 (symmetric) codes of [N, K] with f32 scales in groups
/// of a multiple of 32 (one scale a row and K step of 32), the codes' rows
/// a multiple of 16 bytes (16-byte copies: K a multiple of 16, or of 32 for
/// int4). The codes are exact TF32 values: the kernel multiplies them as
/// they are and scales each step's sums.
mnemo::DequantizeOp quantizedWeightOf(Value weight) {
  auto dq = weight.getDefiningOp<mnemo::DequantizeOp>();
  if (!dq || dq.getZeroPoints() || dq.getGroupSize() % 32 ||
      dq.getFormat() == mnemo::QuantFormat::NF4)
    return {};
  auto codes = cast<RankedTensorType>(dq.getCodes().getType());
  auto scales = cast<RankedTensorType>(dq.getScales().getType());
  auto result = cast<RankedTensorType>(dq.getResult().getType());
  if (codes.getRank() != 2 || !codes.hasStaticShape() ||
      !scales.getElementType().isF32() || !result.getElementType().isF32() ||
      codes.getDimSize(1) % 16)
    return {};
  return dq;
}

/// `op`'s view when it is one of the two ops.
std::optional<LinearView> viewOf(Operation *op) {
  LinearView v;
  v.op = op;
  if (auto linear = dyn_cast<mnemo::LinearOp>(op)) {
    v.input = linear.getInput();
    v.weight = linear.getWeight();
    v.bias = linear.getBias();
    v.outIn = linear.getLayout() == mnemo::WeightLayout::OutIn;
    v.k = linear.getInFeatures();
    v.n = linear.getOutFeatures();
    if (v.outIn)
      v.dequantize = quantizedWeightOf(v.weight);
    return v;
  }
  if (auto grouped = dyn_cast<mnemo::GroupedLinearOp>(op)) {
    v.input = grouped.getInput();
    v.weight = grouped.getWeight();
    v.groups = grouped.getGroups();
    v.groupRows = grouped.getGroupRows();
    RankedTensorType w = grouped.getWeight().getType();
    v.k = w.getDimSize(2);
    v.n = w.getDimSize(1);
    return v;
  }
  return std::nullopt;
}

/// The facts of `op` and its fused producers in `g` (types, sizes,
/// layout, fusions), or why the kernel cannot compute it.
LogicalResult describe(const LinearView &op, const Fusion &fusion,
                       int64_t maxBatch, F32Precision precision, Gemm &g,
                       std::string &why) {
  auto x = cast<RankedTensorType>(op.input.getType());
  auto w = cast<RankedTensorType>(op.weight.getType());
  auto r = cast<RankedTensorType>(op.result().getType());
  g.swiglu = static_cast<bool>(fusion.swiglu);
  if (mnemo::RmsNormOp norm = fusion.rmsNorm) {
    g.rmsNorm = true;
    g.normElem =
        cast<RankedTensorType>(norm.getWeight().getType()).getElementType();
    g.eps = norm.getEps().convertToDouble();
    g.unitOffset = norm.getUnitOffset();
  }
  g.elem = w.getElementType();
  g.inElem = x.getElementType();
  g.outElem = r.getElementType();
  g.tileElem = g.elem;
  if (g.elem.isF32()) {
    if (precision == F32Precision::cudaCores)
      return why = "f32 weight (f32-precision=f32)", failure();
    // TF32 takes both tiles K-major, as stored: W [N, K], and no fused
    // producer (those round into 16-bit tiles; fusionOf offers none).
    assert(!fusion.swiglu && !fusion.rmsNorm &&
           "no producer is folded into an f32 layer");
    if (!op.outIn)
      return why = "f32 weight [K, N] (TF32 reads W [N, K])", failure();
    g.singleTf32 = precision == F32Precision::tf32;
    g.tileElem = BFloat16Type::get(w.getContext());
    if (mnemo::DequantizeOp dq = op.dequantize) {
      g.quant = dq.getFormat();
      g.quantGroup = dq.getGroupSize();
    }
  } else if (!isSixteenBit(g.elem)) {
    return why = "weight is not bf16, f16 or f32", failure();
  }
  if (g.inElem != g.elem && !g.inElem.isF32())
    return why = "input is neither f32 nor the weight's type", failure();
  if (!isStoredFloat(g.outElem))
    return why = "result is not f32, bf16 or f16", failure();
  Value bias = op.bias;
  auto biasType =
      bias ? cast<RankedTensorType>(bias.getType()) : RankedTensorType();
  if (!w.hasStaticShape() || (bias && !biasType.hasStaticShape()))
    return why = "dynamic shape", failure();
  // Leading (row) dims may be dynamic; the features may not.
  if (x.getRank() < 1 || x.isDynamicDim(x.getRank() - 1) ||
      r.isDynamicDim(r.getRank() - 1))
    return why = "dynamic feature dim", failure();
  g.dynamicM = !x.hasStaticShape();
  if (bias && !isStoredFloat(biasType.getElementType()))
    return why = "bias is not f32, bf16 or f16", failure();
  if (x.getRank() < 2)
    return why = "input has no row dimension", failure();
  g.k = op.k;
  g.n = op.n;
  if (op.groups) {
    g.groupRows = op.groupRows;
    g.groupCount = w.getDimSize(0);
    if (g.groupCount == 0)
      return why = "no groups", failure();
    // The kernel's blocks of 64 rows each read one group.
    if (g.groupRows % 64)
      return why = "group rows not a multiple of 64", failure();
  }
  g.m = g.dynamicM ? kPlannedRows
                   : x.getNumElements() / std::max<int64_t>(g.k, 1);
  // Only the first dim dynamic, and it is the batch: at most max-batch
  // times the other row dims (a planning bound; any count runs correctly).
  if (!g.grouped() && g.dynamicM && maxBatch > 0 && x.getRank() >= 2 &&
      llvm::count_if(x.getShape(), ShapedType::isDynamic) == 1 &&
      x.isDynamicDim(0)) {
    int64_t rows = maxBatch;
    for (int64_t d : x.getShape().drop_front().drop_back())
      rows *= d;
    if (rows < kPlannedRows) {
      g.m = rows;
      g.boundedM = true;
    }
  }
  g.outIn = op.outIn;
  if (g.m == 0 || g.k == 0 || g.n == 0)
    return why = "empty tensor", failure();
  // One f32 row (a static GEMV) reads the weight faster through the CUDA
  // cores' warp reductions, and exactly: on an H100, 1.16x to 1.38x the
  // 3xTF32 split-K tile at K 4096 (docs/GPU.md). At two rows that holds
  // for N 4096 only; from four rows TF32 is 2.5x faster and more.
  // (A quantized weight's codes are read by the tile only.)
  if (g.tf32() && !g.quantized() && !g.dynamicM && !g.grouped() && g.m == 1)
    return why = "one f32 row (the CUDA cores' GEMV is faster)", failure();
  // Rows are staged in 16-byte chunks of 8 elements, whole or not at all.
  if (g.k % 8 || g.n % 8)
    return why = "K or N not a multiple of 8", failure();
  return success();
}

/// The block tile, warps, MMA kind and stages of `g`. Few rows (decode):
/// one m16 block per warp row, 4 warps along N. Else the largest tile that
/// still gives every multiprocessor a block: with wgmma, 2 warpgroups of
/// 64 x 256 or 64 x 128, or one of 64 x 128; with mma.sync (or when those
/// are too few), 8 warps of 64 x 32 down to 4 of 32 x 32.
void chooseTiling(Gemm &g, bool wgmma, bool tma, int64_t smCount,
                  int64_t sharedLimit) {
  struct Tiling {
    int64_t blockM, blockN, warpsM, warpsN;
  };
  auto use = [&](Tiling t) {
    g.blockM = t.blockM;
    g.blockN = t.blockN;
    g.warpsM = t.warpsM;
    g.warpsN = t.warpsN;
  };
  // With wgmma, 3xTF32's rests beside the stages.
  auto reserved = [&] { return g.promotes() ? g.restBytes() : 0; };
  if (g.grouped()) {
    // Blocks of 64 rows (a group's rows are whole blocks of 64): one
    // warpgroup of 64 x 128 with wgmma, else 4 warps of 64 x 128 or 64 x 64.
    use(wgmma ? Tiling{64, 128, 4, 1} : Tiling{64, 128, 2, 2});
    g.stages = std::min<int64_t>(4, (sharedLimit - 1024 - reserved()) /
                                        (2 * g.stageElements()));
    if (wgmma && g.stages >= 3) {
      g.wgmma = true;
      g.tma = tma && !g.viaRegisters();
      return;
    }
    g.stages = 2;
    if (wgmma)
      use({64, 128, 2, 2});
    return;
  }
  if (g.m <= 48) {
    use({16 * ((g.m + 15) / 16), 64, 1, 4});
    // A decode step's weight streams through few blocks: each keeps
    // kDecodeStages - 1 K steps in flight by cp.async, its input too
    // (rawStaged when it is computed or rounded on the way).
    g.rawStaged = g.viaRegisters();
    g.stages = 1;
    int64_t perStage = g.sharedBytes();
    g.stages = std::clamp<int64_t>((sharedLimit - 1024) /
                                       std::max<int64_t>(perStage, 1),
                                   2, kDecodeStages);
    return;
  }
  for (Tiling t : {Tiling{128, 256, 8, 1}, Tiling{128, 128, 8, 1},
                   Tiling{64, 128, 4, 1}}) {
    // 128 f32 accumulators per thread leave no room for two staged
    // inputs (SwiGLU's gate and up, rms_norm's input and weight).
    if (t.blockN == 256 && (g.swiglu || g.rmsNorm))
      continue;
    use(t);
    // As many stages (up to 4) as the shared memory holds: the wgmma
    // blocks run one per multiprocessor.
    // (At least 3: one stage in the multiply in flight, one in the next.)
    g.stages = std::min<int64_t>(4, (sharedLimit - 1024 - reserved()) /
                                        (2 * g.stageElements()));
    if (wgmma && g.gridM() * g.gridN() >= smCount && g.stages >= 3) {
      g.wgmma = true;
      g.tma = tma && !g.viaRegisters();
      return;
    }
    g.stages = 2;
  }
  for (Tiling t : {Tiling{128, 128, 2, 4}, Tiling{64, 128, 2, 2},
                   Tiling{64, 64, 2, 2}}) {
    use(t);
    if (g.gridM() * g.gridN() >= smCount)
      return;
  }
}

/// Split-K when there are fewer than two output tiles per multiprocessor
/// and the weight is the traffic (decode: blocks in flight set the
/// bandwidth): about four blocks per multiprocessor, at least 4 K steps
/// each, and the partials' traffic (8 bytes per element and split) at most
/// a quarter of the weight's (splits x M x 16 <= K). `splitK` forces a
/// number of splits. With rms_norm, whose row scales need all of K, each
/// split also writes its rows' partial sums of squares (M floats).
void chooseSplitK(Gemm &g, int64_t smCount, int64_t splitK) {
  int64_t tiles = g.gridM() * g.gridN();
  g.stepsPerSplit = g.kSteps();
  if (!splitK && tiles >= 2 * smCount)
    return;
  int64_t want = splitK ? splitK : (4 * smCount + tiles - 1) / tiles;
  int64_t most =
      splitK ? g.kSteps() : std::min(g.kSteps() / 4, g.k / (16 * g.m));
  most = std::max<int64_t>(1, most);
  // The reduction reads every split's partial: at most 64.
  g.splits = std::clamp<int64_t>(want, 1, std::min<int64_t>(most, 64));
  g.stepsPerSplit = (g.kSteps() + g.splits - 1) / g.splits;
  // No split without steps.
  g.splits = (g.kSteps() + g.stepsPerSplit - 1) / g.stepsPerSplit;
}

/// A decode step's tile: few rows (a static count or the largest batch),
/// mma.sync.
bool isDecodeTile(const Gemm &g) { return g.m <= 48 && !g.wgmma; }

/// rms_norm's row scale from a row's sum of squares: rsqrt(sum / K + eps).
Value rowScale(ImplicitLocOpBuilder &b, const Gemm &g, Value sumOfSquares) {
  Value mean =
      arith::DivFOp::create(b, sumOfSquares, f32Constant(b, double(g.k)));
  return arith::DivFOp::create(
      b, f32Constant(b, 1.0),
      math::SqrtOp::create(
          b, arith::AddFOp::create(b, mean, f32Constant(b, g.eps))));
}

/// `acc` plus `buffer`'s element at `indices` (a bias or a residual),
/// widened to f32.
Value addElement(ImplicitLocOpBuilder &b, Value acc, Value buffer,
                 ValueRange indices) {
  Value v = memref::LoadOp::create(b, buffer, indices);
  if (!v.getType().isF32())
    v = arith::ExtFOp::create(b, b.getF32Type(), v);
  return arith::AddFOp::create(b, acc, v);
}

/// Why `op` keeps the generic path, or the GEMM to generate.
FailureOr<Gemm> analyze(const LinearView &op, const Fusion &fusion, bool wgmma,
                        bool tma, int64_t smCount, int64_t splitK,
                        int64_t maxBatch, int64_t sharedLimit,
                        F32Precision precision, std::string &why) {
  Gemm g;
  if (failed(describe(op, fusion, maxBatch, precision, g, why)))
    return failure();
  chooseTiling(g, wgmma, tma, smCount, sharedLimit);
  // Codes are read in place by decode tiles only: a prefill's GEMM reads
  // the weight decoded once per call, which its rows amortize.
  if (g.quantized() && !isDecodeTile(g)) {
    LinearView decoded = op;
    decoded.dequantize = nullptr;
    return analyze(decoded, fusion, wgmma, tma, smCount, splitK, maxBatch,
                   sharedLimit, precision, why);
  }
  // Dynamic rows: the input's tensor map takes its row count when the
  // plan runs. Split-K is chosen for the planned rows when they are the
  // batch's bound (the partials and the reduction follow the real count);
  // not for a prefill's unbounded rows.
  if (g.dynamicM && !g.boundedM)
    g.stepsPerSplit = g.kSteps();
  else
    chooseSplitK(g, smCount, splitK);
  // A decode tile's stages beyond its block's K steps would stay empty;
  // and fewer stages where they would leave the grid more blocks than the
  // multiprocessors hold at once (up to 4 each, about what the registers
  // allow): the down projection's 512 split-K blocks at 172 KiB each ran
  // in four waves (1.1B model, B1 22% slower a step; not yet re-measured).
  if (isDecodeTile(g)) {
    g.stages = std::clamp<int64_t>(g.stepsPerSplit + 1, 2, g.stages);
    int64_t blocks = g.gridM() * g.gridN() * g.splits;
    int64_t want = std::min<int64_t>(4, (blocks + smCount - 1) / smCount);
    while (g.stages > 2 &&
           (sharedLimit + 1024) / (g.sharedBytes() + 1024) < want)
      --g.stages;
  }
  if (g.sharedBytes() > sharedLimit)
    return why = "tiles exceed the shared memory limit", failure();
  // What the emitter relies on: whole rounds of A chunks (register path,
  // 8 lanes per row), pairs of n8 blocks per warp (ldmatrix.x4), stages
  // 1024-byte aligned (128B swizzle of TMA and wgmma).
  if (g.blockM * kBlockK / 8 % g.threads() || g.threads() % 8 ||
      g.warpTilesN() % 2 || 2 * g.stageElements() % 1024 ||
      (g.splitTiles() && g.stageElements() / 8 % g.threads()))
    llvm_unreachable("linear kernel tiling breaks the emitter's layout");
  if (g.gridM() > 65535)
    return why = "more row tiles than grid.y allows", failure();
  return g;
}

/// Emits the kernel body. The MMA loops are unrolled, so accumulators and
/// fragments are SSA values in registers; the K loop is a loop of the IR.
class GemmEmitter : TensorCoreBuilder {
public:
  GemmEmitter(ImplicitLocOpBuilder &b, const Gemm &g)
      : TensorCoreBuilder(b, g.tileElem), g(g) {}

  /// Fills `launch`'s body: `x` [M, K], `w` [N, K] or [K, N], `bias` [N]
  /// (or null) and `y` [M, N] are global memrefs; with split-K, `y` is the
  /// f32 partials [splits, M, N] and the bias is left to the reduction.
  void emit(gpu::LaunchOp launch, Value x, Value w, Value bias, Value y);
  /// TMA: the tensor maps of `x` and `w` (memref<128xi8>).
  Value xMap, wMap;
  /// SwiGLU: the up tensor [M, K] (`x` is the gate).
  Value up;
  /// rms_norm: its weight [K] (`x` is its input).
  Value normWeight;
  /// Dynamic M: the row count (an index defined outside the launch).
  Value rows;
  /// A residual [M, N] added after the bias (or null): by the reduction
  /// with split-K.
  Value residual;
  /// rms_norm with split-K: f32 [splits, M], each split's partial sums of
  /// squares of the rows (stored by the blocks of the first column tile);
  /// the reduction turns them into the rows' scales.
  Value squares;
  /// grouped: the group of each block of rows ([G] i32 or i64); `w` is
  /// then the groups' weights as [E N, K].
  Value groups;
  /// Quantized weight: `w` is the codes [N, K] (i8) and `codeScales` their
  /// scales [N, ceil(K / group)] (f32).
  Value codeScales;

private:
  /// The rows of `x` and `y`.
  Value rowCount() { return g.dynamicM ? rows : idx(g.m); }
  /// Shared-memory views, lane and block coordinates, and this block's K
  /// steps [first, last).
  void setUp(gpu::LaunchOp launch);
  /// Starts the loads of the first `ahead` steps (TMA: after the mbarriers'
  /// initialization); returns the rms_norm sums of squares so far.
  SmallVector<Value> prologue();
  /// The K loop; returns the accumulators (this warp's m16n8 blocks, in
  /// order) once every multiply has completed, the rms_norm row scales
  /// stored.
  SmallVector<Value> kLoop(ArrayRef<Value> sums);
  /// K steps loading ahead of the multiply: with wgmma one step's multiply
  /// stays in flight, reading its stage while the next one runs, so one
  /// stage fewer.
  int64_t ahead() const { return g.stages - 1 - (g.wgmma ? 1 : 0); }

  /// The A and W tiles of the stage starting at element `shift`.
  SharedTile aTile(Value shift) const {
    return {0, g.blockM, kBlockK, shift};
  }
  SharedTile wTile(Value shift) const {
    return g.outIn ? SharedTile{g.blockM * kBlockK, g.blockN, kBlockK, shift}
                   : SharedTile{g.blockM * kBlockK, kBlockK, g.blockN, shift};
  }
  /// Calls `body(row, col)` for this thread's 8-element chunks of a
  /// `rows` x `width` tile (chunk c = tid + i * threads).
  void forEachChunk(int64_t rows, int64_t width,
                    function_ref<void(Value, Value)> body);
  /// Starts the cp.async copies of K step `step` into `stage`: the W tile,
  /// and the A tile when the input is 16-bit. Copies of rows or columns
  /// past the matrix are zero fills.
  void stageAsync(Value step, Value stage);
  /// TMA (thread 0): the A and W boxes of K step `step` into `stage`,
  /// completing on the mbarrier `barrier`.
  void stageTma(Value step, Value stage, Value barrier);
  /// The mbarrier of stage number `s` (an index).
  Value barrierOf(Value s) {
    return sharedPointer(
        add(tilesAddress, add(idx(g.barrierOffset()), mul(s, 8))));
  }
  /// rawStaged: starts the cp.async copies of K step `step`'s raw input
  /// into stage number `stage` (this thread's chunks of x and up, as
  /// forEachChunk deals them; the rms_norm weight's 64 elements by the
  /// first threads); zero fills past the matrix.
  void stageRaw(Value step, Value stage);
  /// Quantized weight: starts the cp.async copies of K step `step`'s codes
  /// (16 bytes a copy) and of each row's scale into stage number `stage`;
  /// zero fills past the matrix.
  void stageCodes(Value step, Value stage);
  /// Quantized weight: the codes of stage number `stage` decoded (exact
  /// f32 values, no scale) into the W tile at element `tile`, by the
  /// threads that copied them; the caller then waits for the block.
  void decodeCodes(Value stage, Value tile);
  /// Quantized weight: calls `body(row, col, at)` for this thread's 16-byte
  /// chunks of a step's codes (`col` 0, or 8 for byte codes: the chunk
  /// holds the row's step bytes 2 col .. 2 col + 15) at byte `at` of stage
  /// number `stage`; stageCodes and decodeCodes deal them alike, so that a
  /// thread decodes the codes it copied.
  void forEachCodeChunk(Value stage,
                        function_ref<void(Value, Value, Value)> body) {
    int64_t rowBytes = g.codeRowBytes();
    forEachChunk(g.blockN, rowBytes / 2, [&](Value row, Value col) {
      body(
          row, col,
          add(mul(stage, g.codeBytes()), add(mul(row, rowBytes), mul(col, 2))));
    });
  }
  /// Quantized weight: acc += part x the scale of each accumulator's
  /// column, read from stage number `stage`.
  void addScaled(Value stage, ArrayRef<Accumulator> part,
                 SmallVectorImpl<Accumulator> &acc);
  /// rawStaged: the chunks of stage number `stage` in loadInput's form,
  /// read back from shared memory once its copies have landed.
  SmallVector<Value> readRaw(Value stage);
  /// A through registers: this thread's chunks of the A tile of K step
  /// `step` as loaded, vector<8> of the input type (zeros past the matrix
  /// or when `live` is false): one per chunk, or gate and up with SwiGLU.
  SmallVector<Value> loadInput(Value step, Value live);
  /// The chunks of loadInput (silu(gate) * up with SwiGLU, x * weight with
  /// rms_norm, in f32) rounded to 16 bits into the A tile of `stage`.
  void storeInput(ArrayRef<Value> chunks, Value stage);
  /// rms_norm: adds the squares of the x chunks of loadInput to `sums`
  /// (one per round of chunks: each thread's rows stay the same).
  void addSquares(ArrayRef<Value> chunks, MutableArrayRef<Value> sums);
  /// rms_norm: the rows' scales from the threads' `sums` into shared
  /// memory (the 8 threads of a row reduce with shuffles), then a barrier.
  void storeRowScales(ArrayRef<Value> sums);
  /// Values loadInput yields per chunk.
  int64_t perChunk() const { return g.swiglu || g.rmsNorm ? 2 : 1; }
  /// Rounds of chunks per thread for the A tile.
  int64_t rounds() const { return g.blockM * kBlockK / 8 / g.threads(); }
  /// acc += A W^T over the 64 K columns of `stage`.
  void multiply(Value stage, SmallVectorImpl<Accumulator> &acc);
  /// TF32: the products of this warp's m16 blocks' A fragments (split) and
  /// the two n8 blocks of `f` (pair `jp`) into `acc`.
  void multiplyTf32(ArrayRef<Fragment> aHi, ArrayRef<Fragment> aLo,
                    const Fragment &f, SmallVectorImpl<Accumulator> &acc,
                    int64_t jp);
  /// The same with wgmma on the warpgroup's 64 rows, both operands read
  /// from shared memory through descriptors, `d` the accumulator struct:
  /// returns the new struct once the previous step's group has completed
  /// (this step's stays in flight). With 3xTF32, `rests` (the first unit
  /// of the step's rests) gives each k-step's two small products first.
  Value multiplyWgmma(Value stage, Value d, Value rests = nullptr);
  /// 3xTF32 with wgmma: every element of `stage`'s tiles rounded to TF32
  /// in place and its rest, rounded too, to the same place of the rests'
  /// buffer `buffer` (0 or 1); then fenced for the async proxy and a block
  /// barrier. Returns the rests' first unit.
  Value splitStage(Value stage, Value buffer);
  /// The wgmma accumulator struct of this warp's m16n8 blocks, in order.
  Type wgmmaStruct() const {
    return LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(g.blockN / 2, f32));
  }
  /// acc + bias in the result type into `y`, rows and columns in range
  /// (split-K: acc into the split's f32 partials).
  void store(ArrayRef<Value> acc, Value bias, Value y);

  const Gemm &g;
  Value x, w;
  Value tid, lane, lane8, laneMid, laneHi, quadRow, quadCol;
  Value m0, n0, warpRow, warpCol;
  Value wRow0; // the first row of this block's weight in `w`
  Value split; // this block's K range (split-K), or null
  Value first, last, leader;
  Value warp, tilesAddress, raw;
  Value rowScales; // rms_norm: f32 [blockM] in shared memory
  /// rawStaged: the raw x, up (SwiGLU) and rms_norm weight of every stage.
  Value rawX, rawUp, rawNorm;
  /// Quantized weight: every stage's codes (i8) and scales (f32).
  Value rawCodes, rawCodeScales;
};

void GemmEmitter::forEachChunk(int64_t rows, int64_t width,
                               function_ref<void(Value, Value)> body) {
  int64_t perRow = width / 8, chunks = rows * perRow;
  for (int64_t c0 = 0; c0 < chunks; c0 += g.threads()) {
    Value c = add(tid, idx(c0));
    // The last round may have fewer chunks than threads.
    OpBuilder::InsertionGuard guard(b);
    if (c0 + g.threads() > chunks) {
      auto inRange = scf::IfOp::create(b, lt(c, idx(chunks)), false);
      b.setInsertionPoint(inRange.thenBlock()->getTerminator());
    }
    body(div(c, perRow), mul(rem(c, perRow), 8));
  }
}

void GemmEmitter::stageAsync(Value step, Value stage) {
  Value k0 = mul(step, kBlockK);
  // (row, col) of a tile reads global (r0 + row, c0 + col) of `memref`,
  // which has `rows` x `cols`.
  auto copy = [&](const SharedTile &t, Value memref, Value r0, Value rows,
                  Value c0, int64_t cols) {
    forEachChunk(t.rows, t.width, [&](Value row, Value col) {
      Value gr = add(r0, row), gc = add(c0, col);
      Value valid = both(lt(gr, rows), lt(gc, idx(cols)));
      // (TF32: columns count units, the source f32 elements.)
      Value srcCol = g.tf32() ? div(gc, 2) : gc;
      // waitAll waits for whole groups: the tokens are not needed.
      asyncCopy(t, row, col, memref, {gr}, select(valid, srcCol, idx(0)),
                valid);
    });
  };
  if (!g.viaRegisters())
    copy(aTile(stage), x, m0, rowCount(), k0, g.kUnits());
  if (g.quantized())
    return;
  if (g.outIn)
    copy(wTile(stage), w, add(wRow0, n0), add(wRow0, idx(g.n)), k0, g.kUnits());
  else
    copy(wTile(stage), w, k0, idx(g.k), n0, g.n);
}

void GemmEmitter::stageTma(Value step, Value stage, Value barrier) {
  expectBytes(barrier, 2 * kBlockK * (g.blockM + g.blockN));
  Value k0 = toI32(mul(step, kBlockK / g.units()));
  auto dst = [&](int64_t element) {
    return add(tilesAddress, add(mul(stage, 2), idx(2 * element)));
  };
  tmaCopy(xMap, {k0, toI32(m0)}, dst(0), barrier);
  SharedTile wt = wTile(stage);
  if (g.outIn) {
    // (A grouped weight's last tile may read the next group's rows, which
    // the store leaves out, or zeros past the last.)
    tmaCopy(wMap, {k0, toI32(add(wRow0, n0))}, dst(wt.base), barrier);
    return;
  }
  // [K, N]: one 64-column panel per box.
  for (int64_t p = 0; p < g.blockN / 64; ++p)
    tmaCopy(wMap, {toI32(add(n0, idx(64 * p))), k0},
            dst(wt.base + p * wt.rows * 64), barrier);
}

void GemmEmitter::stageRaw(Value step, Value stage) {
  Value k0 = mul(step, kBlockK);
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  // One cp.async of 16 bytes: `elements` from src[indices] to dst[at].
  auto copy = [&](Value dst, Value at, Value src, SmallVector<Value> indices,
                  int64_t elements, Value valid) {
    nvgpu::DeviceAsyncCopyOp::create(b, tokenType, dst, ValueRange{at}, src,
                                     indices, b.getIndexAttr(elements),
                                     select(valid, idx(elements), idx(0)),
                                     b.getUnitAttr());
  };
  int64_t per = 128 / g.inElem.getIntOrFloatBitWidth();
  int64_t tileElements = g.blockM * kBlockK;
  forEachChunk(g.blockM, kBlockK, [&](Value row, Value col) {
    Value gr = add(m0, row), gc = add(k0, col);
    Value valid = both(lt(gr, rowCount()), lt(gc, idx(g.k)));
    Value dst = add(mul(stage, tileElements), add(mul(row, kBlockK), col));
    for (auto [from, to] : {std::pair(x, rawX), std::pair(up, rawUp)}) {
      if (!from)
        continue;
      for (int64_t j = 0; j < 8; j += per)
        copy(
            to, add(dst, idx(j)), from,
            {select(valid, gr, idx(0)), select(valid, add(gc, idx(j)), idx(0))},
            per, valid);
    }
  });
  if (!normWeight)
    return;
  int64_t normPer = 128 / g.normElem.getIntOrFloatBitWidth();
  int64_t copies = kBlockK / normPer;
  ifThen(lt(tid, idx(copies)), [&] {
    Value col = mul(tid, normPer), gc = add(k0, col);
    Value valid = lt(gc, idx(g.k));
    copy(rawNorm, add(mul(stage, kBlockK), col), normWeight,
         {select(valid, gc, idx(0))}, normPer, valid);
  });
}

void GemmEmitter::stageCodes(Value step, Value stage) {
  // The step's K elements start at e0 (kBlockK units of TF32: 32 codes a
  // row, in two 16-byte copies, or one of 4-bit codes); its scales are
  // those of group e0 / group.
  Value e0 = mul(step, kBlockK / 2);
  bool packed = mnemo::quant::isPacked(*g.quant);
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  forEachCodeChunk(stage, [&](Value row, Value col, Value at) {
    Value gr = add(n0, row);
    Value gc = add(packed ? div(e0, 2) : e0, mul(col, 2));
    Value valid = both(lt(gr, idx(g.n)), lt(gc, idx(packed ? g.k / 2 : g.k)));
    nvgpu::DeviceAsyncCopyOp::create(
        b, tokenType, rawCodes, ValueRange{at}, w,
        ValueRange{select(valid, gr, idx(0)), select(valid, gc, idx(0))},
        b.getIndexAttr(16), select(valid, idx(16), idx(0)), b.getUnitAttr());
  });
  // (4-byte copies go through L1: cp.async.ca.)
  forEachChunk(g.blockN, 8, [&](Value row, Value) {
    Value gr = add(n0, row);
    Value valid = lt(gr, idx(g.n));
    nvgpu::DeviceAsyncCopyOp::create(
        b, tokenType, rawCodeScales, ValueRange{add(mul(stage, g.blockN), row)},
        codeScales,
        ValueRange{select(valid, gr, idx(0)), div(e0, g.quantGroup)},
        b.getIndexAttr(1), select(valid, idx(1), idx(0)), UnitAttr());
  });
}

void GemmEmitter::decodeCodes(Value stage, Value tile) {
  auto bytesType = VectorType::get({16}, b.getI8Type());
  bool packed = mnemo::quant::isPacked(*g.quant);
  forEachCodeChunk(stage, [&](Value row, Value col, Value at) {
    Value bytes =
        vector::LoadOp::create(b, bytesType, rawCodes, ValueRange{at},
                               /*nontemporal=*/false, llvm::MaybeAlign(16));
    auto decode = [&](bool high) {
      return mnemo::quant::decodeCodes(b, b.getLoc(), *g.quant,
                                       /*unsignedCodes=*/false, bytes, high);
    };
    Value values = decode(/*high=*/false);
    if (packed) {
      // Byte i holds codes 2 i (low nibble) and 2 i + 1 (high).
      SmallVector<int64_t> order;
      for (int64_t i = 0; i < 16; ++i)
        order.append({i, 16 + i});
      values =
          vector::ShuffleOp::create(b, values, decode(/*high=*/true), order);
    }
    // Code c of the row is unit column 2 c of the W tile: the chunk's 16
    // (or 32) values are 16-byte pieces from unit 4 col.
    for (int64_t q = 0; q < (packed ? 8 : 4); ++q) {
      Value piece = vector::ShuffleOp::create(
          b, values, values,
          ArrayRef<int64_t>{4 * q, 4 * q + 1, 4 * q + 2, 4 * q + 3});
      Value unit = add(mul(col, 4), idx(8 * q));
      vector::StoreOp::create(
          b, piece, wideTiles,
          ValueRange{div(offset(wTile(tile), row, unit), 2)},
          /*nontemporal=*/false, llvm::MaybeAlign(16));
    }
  });
}

void GemmEmitter::addScaled(Value stage, ArrayRef<Accumulator> part,
                            SmallVectorImpl<Accumulator> &acc) {
  int64_t tm = g.warpTilesM(), tn = g.warpTilesN();
  for (int64_t j = 0; j < tn; ++j)
    for (int64_t c = 0; c < 2; ++c) {
      // Element c (and c + 2, row g + 8) of block j is column
      // warpCol + 8 j + 2 quadCol + c.
      Value col = add(warpCol, add(idx(8 * j), add(mul(quadCol, 2), idx(c))));
      Value scale = memref::LoadOp::create(
          b, rawCodeScales, ValueRange{add(mul(stage, g.blockN), col)});
      for (int64_t i = 0; i < tm; ++i)
        for (int64_t e : {c, c + 2}) {
          Value &a = acc[i * tn + j][e];
          a = fadd(a, fmul(part[i * tn + j][e], scale));
        }
    }
}

SmallVector<Value> GemmEmitter::readRaw(Value stage) {
  SmallVector<Value> chunks;
  auto type = VectorType::get({8}, g.inElem);
  int64_t tileElements = g.blockM * kBlockK;
  forEachChunk(g.blockM, kBlockK, [&](Value row, Value col) {
    Value at = add(mul(stage, tileElements), add(mul(row, kBlockK), col));
    for (Value from : {rawX, rawUp})
      if (from)
        chunks.push_back(vector::LoadOp::create(b, type, from, ValueRange{at},
                                                /*nontemporal=*/false,
                                                llvm::MaybeAlign(16)));
    if (rawNorm)
      chunks.push_back(
          vector::LoadOp::create(b, VectorType::get({8}, g.normElem), rawNorm,
                                 ValueRange{add(mul(stage, kBlockK), col)},
                                 /*nontemporal=*/false, llvm::MaybeAlign(16)));
  });
  return chunks;
}

SmallVector<Value> GemmEmitter::loadInput(Value step, Value live) {
  SmallVector<Value> chunks;
  auto type = VectorType::get({8}, g.inElem);
  Value zeros = arith::ConstantOp::create(
      b, type, DenseElementsAttr::get(type, b.getFloatAttr(g.inElem, 0.0)));
  Value k0 = mul(step, kBlockK);
  // Whole rounds only (checked by analyze): the chunks are used outside
  // this scope.
  forEachChunk(g.blockM, kBlockK, [&](Value row, Value col) {
    Value gr = add(m0, row), gc = add(k0, col);
    Value valid =
        both(live, both(lt(gr, rowCount()), lt(gc, idx(g.k))));
    // Every thread loads (from row 0 when out of range): no branch keeps
    // the loads from being in flight during the multiply.
    SmallVector<Value, 2> at = {select(valid, gr, idx(0)),
                                select(valid, gc, idx(0))};
    for (Value from : {x, up}) {
      if (!from)
        continue;
      Value v = vector::LoadOp::create(b, type, from, at,
                                       /*nontemporal=*/false,
                                       llvm::MaybeAlign(16));
      chunks.push_back(select(valid, v, zeros));
    }
    if (normWeight) {
      auto wt = VectorType::get(
          {8}, cast<MemRefType>(normWeight.getType()).getElementType());
      chunks.push_back(vector::LoadOp::create(
          b, wt, normWeight, ValueRange{at[1]}, /*nontemporal=*/false,
          llvm::MaybeAlign(16)));
    }
  });
  return chunks;
}

void GemmEmitter::storeInput(ArrayRef<Value> chunks, Value stage) {
  auto wide = VectorType::get({8}, f32);
  auto type = VectorType::get({8}, g.elem);
  auto widen = [&](Value v) -> Value {
    return g.inElem == f32 ? v : arith::ExtFOp::create(b, wide, v);
  };
  unsigned i = 0;
  forEachChunk(g.blockM, kBlockK, [&](Value row, Value col) {
    Value v = widen(chunks[i++]);
    if (g.swiglu) {
      // silu(gate) * up = gate / (1 + 2^(-gate log2 e)) * up, per element.
      Value u = widen(chunks[i++]);
      SmallVector<Value> out;
      for (int64_t e = 0; e < 8; ++e) {
        Value ge = vector::ExtractOp::create(b, v, ArrayRef<int64_t>{e});
        Value ue = vector::ExtractOp::create(b, u, ArrayRef<int64_t>{e});
        Value ex = exp2Approx(b, fmul(ge, cf(-llvm::numbers::log2e)));
        Value silu = arith::DivFOp::create(b, ge, fadd(cf(1.0), ex));
        out.push_back(fmul(silu, ue));
      }
      v = vector::FromElementsOp::create(b, wide, out);
    }
    if (g.rmsNorm) {
      Value nw = chunks[i++];
      if (nw.getType() != wide)
        nw = arith::ExtFOp::create(b, wide, nw);
      if (g.unitOffset)
        nw = arith::AddFOp::create(
            b, nw,
            arith::ConstantOp::create(
                b, wide, DenseElementsAttr::get(wide, b.getF32FloatAttr(1.0))));
      v = arith::MulFOp::create(b, v, nw);
    }
    v = arith::TruncFOp::create(b, type, v);
    vector::StoreOp::create(b, v, tiles,
                            ValueRange{offset(aTile(stage), row, col)},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  });
}

void GemmEmitter::addSquares(ArrayRef<Value> chunks,
                             MutableArrayRef<Value> sums) {
  auto wide = VectorType::get({8}, f32);
  for (int64_t r = 0; r < rounds(); ++r) {
    Value v = chunks[r * perChunk()];
    if (v.getType() != wide)
      v = arith::ExtFOp::create(b, wide, v);
    Value sq = vector::ReductionOp::create(
        b, vector::CombiningKind::ADD, arith::MulFOp::create(b, v, v));
    sums[r] = fadd(sums[r], sq);
  }
}

void GemmEmitter::storeRowScales(ArrayRef<Value> sums) {
  for (int64_t r = 0; r < rounds(); ++r) {
    // Chunk c = tid + r * threads is row c / 8, column chunk tid % 8: the
    // row's 8 chunks are 8 neighbouring lanes.
    Value total = sums[r];
    for (int32_t offset : {1, 2, 4})
      total = fadd(total, gpu::ShuffleOp::create(b, total, offset, 32,
                                                 gpu::ShuffleMode::XOR)
                              .getShuffleResult());
    Value row = div(add(tid, idx(r * g.threads())), 8);
    Value leads =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rem(tid, 8), idx(0));
    if (squares) {
      Value at = add(m0, row);
      Value firstColumns =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, n0, idx(0));
      ifThen(both(both(leads, firstColumns), lt(at, rowCount())), [&] {
        memref::StoreOp::create(b, total, squares, ValueRange{split, at});
      });
      continue;
    }
    Value scale = rowScale(b, g, total);
    ifThen(leads, [&] { memref::StoreOp::create(b, scale, rowScales, row); });
  }
  gpu::BarrierOp::create(b);
}

void GemmEmitter::multiply(Value stage, SmallVectorImpl<Accumulator> &acc) {
  int64_t tm = g.warpTilesM(), tn = g.warpTilesN();
  SharedTile a = aTile(stage), wt = wTile(stage);
  for (int64_t kk = 0; kk < kBlockK / 16; ++kk) {
    SmallVector<Fragment> af;
    for (int64_t i = 0; i < tm; ++i)
      af.push_back(ldmatrix(a, add(warpRow, add(idx(16 * i), rem(lane, 16))),
                            add(idx(16 * kk), mul(laneHi, 8)), false));
    // TF32: each A register rounded (hi) and its rest (lo), once a k-step.
    SmallVector<Fragment> aHi(tm), aLo(tm);
    if (g.tf32())
      for (int64_t i = 0; i < tm; ++i)
        splitFragment(af[i], aHi[i], aLo[i], /*withRest=*/!g.singleTf32);
    for (int64_t jp = 0; jp < tn / 2; ++jp) {
      // Two n8 blocks per ldmatrix.x4: W [N, K] is read as stored (the
      // n rows of B col-major), W [K, N] transposed.
      Fragment f =
          g.outIn
              ? ldmatrix(wt,
                         add(warpCol, add(idx(16 * jp),
                                          add(mul(laneHi, 8), lane8))),
                         add(idx(16 * kk), mul(laneMid, 8)), false)
              : ldmatrix(wt,
                         add(idx(16 * kk), add(mul(laneMid, 8), lane8)),
                         add(warpCol, add(idx(16 * jp), mul(laneHi, 8))),
                         true);
      if (g.tf32()) {
        multiplyTf32(aHi, aLo, f, acc, jp);
        continue;
      }
      for (int64_t i = 0; i < tm; ++i) {
        Accumulator &lo = acc[i * tn + 2 * jp], &hi = acc[i * tn + 2 * jp + 1];
        lo = mma(af[i], {f[0], f[1]}, lo);
        hi = mma(af[i], {f[2], f[3]}, hi);
      }
    }
  }
}

void GemmEmitter::multiplyTf32(ArrayRef<Fragment> aHi, ArrayRef<Fragment> aLo,
                               const Fragment &f,
                               SmallVectorImpl<Accumulator> &acc, int64_t jp) {
  int64_t tn = g.warpTilesN();
  Fragment bHi, bLo;
  // Decoded codes are TF32 values already: no rounding, no rest.
  if (g.quantized())
    bHi.assign(f.begin(), f.end());
  else
    splitFragment(f, bHi, bLo, /*withRest=*/!g.singleTf32);
  for (int64_t i = 0; i < int64_t(aHi.size()); ++i)
    for (int64_t h = 0; h < 2; ++h) {
      Accumulator &c = acc[i * tn + 2 * jp + h];
      c = mmaSplit(aHi[i], aLo[i], ArrayRef<Value>(bHi).slice(2 * h, 2),
                   bLo.empty() ? ArrayRef<Value>()
                               : ArrayRef<Value>(bLo).slice(2 * h, 2),
                   c);
    }
}

Value GemmEmitter::splitStage(Value stage, Value buffer) {
  auto v4 = VectorType::get({4}, f32);
  Value rests = add(idx(g.restOffset() / 2), mul(buffer, g.stageElements()));
  // 16-byte chunks (4 f32) of the stage, dealt to the threads in turn; a
  // chunk's rest goes to the same offset from the rests' start.
  int64_t chunks = g.stageElements() / 8;
  for (int64_t c0 = 0; c0 < chunks; c0 += g.threads()) {
    Value at = mul(add(tid, idx(c0)), 4);
    Value x = vector::LoadOp::create(b, v4, wideTiles,
                                     ValueRange{add(div(stage, 2), at)});
    Value hi = x, lo = x;
    for (int64_t e = 0; e < 4; ++e) {
      Value xe = vector::ExtractOp::create(b, x, ArrayRef<int64_t>{e});
      auto [h, l] = splitTf32(arith::BitcastOp::create(b, i32, xe));
      hi = vector::InsertOp::create(b, arith::BitcastOp::create(b, f32, h), hi,
                                    ArrayRef<int64_t>{e});
      lo = vector::InsertOp::create(b, arith::BitcastOp::create(b, f32, l), lo,
                                    ArrayRef<int64_t>{e});
    }
    vector::StoreOp::create(b, hi, wideTiles,
                            ValueRange{add(div(stage, 2), at)});
    vector::StoreOp::create(b, lo, wideTiles,
                            ValueRange{add(div(rests, 2), at)});
  }
  // The writes (generic proxy) before the wgmma reads (async proxy).
  fenceAsyncShared();
  gpu::BarrierOp::create(b);
  return rests;
}

Value GemmEmitter::multiplyWgmma(Value stage, Value d, Value rests) {
  // Byte address in the shared window of element `element` of the stage
  // (or of the rests, from their first unit `base`).
  auto addressIn = [&](Value base, int64_t element, Value extraBytes) {
    Value a = add(tilesAddress, add(mul(base, 2), idx(2 * element)));
    return arith::IndexCastUIOp::create(b, b.getI64Type(),
                                        add(a, extraBytes));
  };
  auto address = [&](int64_t element, Value extraBytes) -> Value {
    return addressIn(stage, element, extraBytes);
  };
  Type type = wgmmaStruct();
  // A and W [N, K] are K-major: 8-row groups 1024 bytes apart (stride), a
  // k16 step 32 bytes into the 128-byte rows. W [K, N] is MN-major: a k16
  // step is 16 rows, 64-column panels one panel apart (leading).
  Value aRows = mul(div(warp, 4), 64 * 128);
  // 3xTF32 (Gemm::promotes): the step's products in accumulators of their
  // own (the first wgmma does not add), added to the running sums `d` once
  // they complete.
  Value totals = d;
  bool promote = g.promotes();
  if (promote)
    d = LLVM::UndefOp::create(b, type);
  bool fresh = promote;
  auto step = [&](Value a, Value w, bool kMajor) {
    d = wgmmaStep(type, d, a, w, g.blockN, kMajor, /*zero=*/fresh, g.elem);
    fresh = false;
  };
  wgmmaBegin();
  for (int64_t kk = 0; kk < kBlockK / 16; ++kk) {
    Value a = descriptor(address(0, add(aRows, idx(32 * kk))), 16, 1024);
    SharedTile wt = wTile(stage);
    Value w = g.outIn ? descriptor(address(wt.base, idx(32 * kk)), 16, 1024)
                      : descriptor(address(wt.base, idx(16 * kk * 128)),
                                   wt.panelBytes(), 1024);
    if (rests) {
      // 3xTF32: the rests' products (lo hi + hi lo), then hi hi.
      Value aLo =
          descriptor(addressIn(rests, 0, add(aRows, idx(32 * kk))), 16, 1024);
      Value wLo = descriptor(addressIn(rests, wt.base, idx(32 * kk)), 16, 1024);
      step(aLo, w, /*kMajor=*/true);
      step(a, wLo, /*kMajor=*/true);
    }
    step(a, w, /*kMajor=*/g.outIn);
  }
  if (!promote) {
    wgmmaEnd(1);
    return d;
  }
  wgmmaEnd(0);
  for (int64_t i = 0; i < g.blockN / 2; ++i)
    totals = LLVM::InsertValueOp::create(
        b, totals,
        fadd(LLVM::ExtractValueOp::create(b, totals, ArrayRef<int64_t>{i}),
             LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{i})),
        ArrayRef<int64_t>{i});
  return totals;
}

void GemmEmitter::store(ArrayRef<Value> acc, Value bias, Value y) {
  int64_t tm = g.warpTilesM(), tn = g.warpTilesN();
  Type outElem = split ? f32 : g.outElem;
  int64_t bytes = outElem.getIntOrFloatBitWidth() / 8;
  for (int64_t i = 0; i < tm; ++i)
    for (int64_t j = 0; j < tn; ++j)
      for (int64_t h = 0; h < 2; ++h) {
        Value row = add(m0, add(warpRow, add(idx(16 * i + 8 * h), quadRow)));
        Value col = add(n0, add(warpCol, add(idx(8 * j), mul(quadCol, 2))));
        // N is a multiple of 8: a pair is in range or out entirely.
        ifThen(both(lt(row, rowCount()), lt(col, idx(g.n))), [&] {
          int64_t e = 4 * (i * tn + j) + 2 * h;
          Value v[2] = {acc[e], acc[e + 1]};
          if (rowScales && !squares) {
            Value scale =
                memref::LoadOp::create(b, rowScales, sub(row, m0));
            v[0] = fmul(v[0], scale);
            v[1] = fmul(v[1], scale);
          }
          for (int64_t c = 0; c < 2; ++c) {
            Value at = add(col, idx(c));
            if (bias)
              v[c] = addElement(b, v[c], bias, at);
            if (residual && !split)
              v[c] = addElement(b, v[c], residual, {row, at});
          }
          Value pair = vector::FromElementsOp::create(
              b, VectorType::get({2}, f32), ValueRange{v[0], v[1]});
          if (outElem != f32)
            pair = arith::TruncFOp::create(
                b, VectorType::get({2}, outElem), pair);
          SmallVector<Value> at = {row, col};
          if (split)
            at.insert(at.begin(), split);
          vector::StoreOp::create(b, pair, y, at,
                                  /*nontemporal=*/false,
                                  llvm::MaybeAlign(2 * bytes));
        });
      }
}

void GemmEmitter::emit(gpu::LaunchOp launch, Value xBuf, Value wBuf,
                       Value bias, Value y) {
  x = xBuf;
  w = wBuf;
  b.setInsertionPoint(launch.getBody().front().getTerminator());
  setUp(launch);
  SmallVector<Value> sums = prologue();
  store(kLoop(sums), bias, y);
}

void GemmEmitter::setUp(gpu::LaunchOp launch) {
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  raw = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                         MemRefLayoutAttrInterface(), workgroup));
  tiles = memref::ViewOp::create(
      b,
      MemRefType::get({g.stages * g.stageElements()}, g.tileElem,
                      MemRefLayoutAttrInterface(), workgroup),
      raw, idx(0), ValueRange{});
  if (g.tf32())
    wideTiles = memref::ViewOp::create(
        b,
        MemRefType::get({g.barrierOffset() / 4}, f32,
                        MemRefLayoutAttrInterface(), workgroup),
        raw, idx(0), ValueRange{});
  if (g.rmsNorm)
    rowScales = memref::ViewOp::create(
        b,
        MemRefType::get({g.blockM}, f32, MemRefLayoutAttrInterface(),
                        workgroup),
        raw, idx(g.rowScaleOffset()), ValueRange{});
  if (g.rawStaged) {
    int64_t at = g.rawOffset();
    auto view = [&](Type elem, int64_t bytes) -> Value {
      Value v = memref::ViewOp::create(
          b,
          MemRefType::get(
              {g.stages * bytes * 8 / int64_t(elem.getIntOrFloatBitWidth())},
              elem, MemRefLayoutAttrInterface(), workgroup),
          raw, idx(at), ValueRange{});
      at += g.stages * bytes;
      return v;
    };
    rawX = view(g.inElem, g.rawInputBytes());
    if (g.swiglu)
      rawUp = view(g.inElem, g.rawInputBytes());
    if (g.rmsNorm)
      rawNorm = view(g.normElem, g.rawNormBytes());
  }

  if (g.quantized()) {
    rawCodes = memref::ViewOp::create(
        b,
        MemRefType::get({g.stages * g.codeBytes()}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), workgroup),
        raw, idx(g.quantOffset()), ValueRange{});
    rawCodeScales = memref::ViewOp::create(
        b,
        MemRefType::get({g.stages * g.blockN}, f32, MemRefLayoutAttrInterface(),
                        workgroup),
        raw, idx(g.quantOffset() + g.stages * g.codeBytes()), ValueRange{});
  }

  tid = launch.getThreadIds().x;
  lane = rem(tid, 32);
  warp = div(tid, 32);
  if (g.wgmma)
    tilesAddress = memref::ExtractAlignedPointerAsIndexOp::create(b, tiles);
  lane8 = rem(lane, 8);
  laneMid = rem(div(lane, 8), 2);
  laneHi = div(lane, 16);
  quadRow = div(lane, 4);
  quadCol = rem(lane, 4);
  warpRow = mul(div(warp, g.warpsN), 16 * g.warpTilesM());
  warpCol = mul(rem(warp, g.warpsN), 8 * g.warpTilesN());
  n0 = mul(launch.getBlockIds().x, g.blockN);
  m0 = mul(launch.getBlockIds().y, g.blockM);
  // This block's K steps [first, last).
  first = idx(0);
  last = idx(g.kSteps());
  if (g.splits > 1) {
    split = launch.getBlockIds().z;
    first = mul(split, g.stepsPerSplit);
    last = arith::MinUIOp::create(b, last, add(first, idx(g.stepsPerSplit)));
  }
  wRow0 = idx(0);
  if (groups) {
    // This block's group; none (outside [0, E), or no entry): no K steps,
    // zeros stored.
    Value blk = div(m0, g.groupRows);
    Value listed = lt(blk, memref::DimOp::create(b, groups, 0));
    Type groupType = cast<MemRefType>(groups.getType()).getElementType();
    auto read = scf::IfOp::create(b, groupType, listed, true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(read.thenBlock());
      scf::YieldOp::create(
          b, ValueRange{memref::LoadOp::create(b, groups, ValueRange{blk})});
      b.setInsertionPointToStart(read.elseBlock());
      scf::YieldOp::create(b,
                           ValueRange{arith::ConstantOp::create(
                               b, groupType, b.getIntegerAttr(groupType, -1))});
    }
    Value e =
        arith::IndexCastOp::create(b, b.getIndexType(), read.getResult(0));
    Value valid = both(
        listed,
        both(arith::CmpIOp::create(b, arith::CmpIPredicate::sge, e, idx(0)),
             arith::CmpIOp::create(b, arith::CmpIPredicate::slt, e,
                                   idx(g.groupCount))));
    wRow0 = mul(select(valid, e, idx(0)), g.n);
    last = select(valid, last, first);
  }
}

SmallVector<Value> GemmEmitter::prologue() {
  // Steps first .. first + ahead - 1 load ahead, a cp.async group each
  // (empty past the range, so every step commits one group).
  bool convert = g.viaRegisters();
  leader = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, idx(0));
  if (g.tma) {
    ifThen(leader, [&] {
      for (int64_t i = 0; i < g.stages; ++i)
        NVVM::MBarrierInitOp::create(b, barrierOf(idx(i)), i32c(1),
                                     /*predicate=*/nullptr);
      NVVM::FenceMbarrierInitOp::create(b);
    });
    gpu::BarrierOp::create(b);
  }
  for (int64_t i = 0; g.tma && i < ahead(); ++i) {
    Value step = add(first, idx(i));
    ifThen(both(leader, lt(step, last)), [&] {
      stageTma(step, idx(i * g.stageElements()), barrierOf(idx(i)));
    });
  }
  // rms_norm: each thread's sums of squares, one per round of chunks.
  SmallVector<Value> sums(g.rmsNorm ? rounds() : 0, cf(0.0));
  for (int64_t i = 0; !g.tma && i < ahead(); ++i) {
    Value step = add(first, idx(i)), stage = idx(i * g.stageElements());
    Value live = lt(step, last);
    ifThen(live, [&] {
      stageAsync(step, stage);
      if (g.rawStaged)
        stageRaw(step, idx(i));
      if (g.quantized())
        stageCodes(step, idx(i));
    });
    commit({});
    if (!convert || g.rawStaged)
      continue;
    SmallVector<Value> chunks = loadInput(step, live);
    if (g.rmsNorm)
      addSquares(chunks, sums);
    ifThen(live, [&] { storeInput(chunks, stage); });
  }
  return sums;
}

SmallVector<Value> GemmEmitter::kLoop(ArrayRef<Value> sums) {
  bool convert = g.viaRegisters();
  int64_t blocks = g.warpTilesM() * g.warpTilesN();
  SmallVector<Value> init(4 * blocks, cf(0.0));
  if (g.wgmma) {
    // The accumulators stay one struct through the loop.
    Value d = LLVM::UndefOp::create(b, wgmmaStruct());
    for (int64_t i = 0; i < 4 * blocks; ++i)
      d = LLVM::InsertValueOp::create(b, d, init[i], ArrayRef<int64_t>{i});
    init = {d};
  }
  int64_t accValues = init.size();
  init.append(sums.begin(), sums.end());
  auto loop = scf::ForOp::create(b, first, last, idx(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value step = loop.getInductionVar();
    // Step t uses stage (t - first) % stages while step t + ahead is
    // staged into the stage of step t + ahead - stages (t - 1, or t - 2
    // with wgmma, whose multiply completed before this iteration): waiting
    // until at most ahead - 1 groups are in flight lands step t, and the
    // barrier also tells that every warp is done with the stage the copies
    // overwrite (wgmma reads the tiles through the async proxy: fenced
    // first).
    Value rel = sub(step, first);
    Value cur = mul(rem(rel, g.stages), g.stageElements());
    Value nxt =
        mul(rem(add(rel, idx(ahead())), g.stages), g.stageElements());
    Value next = add(step, idx(ahead()));
    Value hasNext = lt(next, last);
    SmallVector<Value> chunks;
    if (g.tma) {
      // The k-th use of a stage's mbarrier completes its phase k.
      waitPhase(barrierOf(rem(rel, g.stages)), rem(div(rel, g.stages), 2));
      gpu::BarrierOp::create(b);
      Value s = rem(add(rel, idx(ahead())), g.stages);
      ifThen(both(leader, hasNext),
             [&] { stageTma(next, nxt, barrierOf(s)); });
    } else {
      waitAll(/*asyncProxy=*/g.wgmma, /*pending=*/ahead() - 1);
      if (g.quantized()) {
        decodeCodes(rem(rel, g.stages), cur);
        gpu::BarrierOp::create(b);
      }
      if (g.rawStaged) {
        // This step's input has landed: computed and rounded into its A
        // tile, which the warps read after the barrier.
        chunks = readRaw(rem(rel, g.stages));
        storeInput(chunks, cur);
        gpu::BarrierOp::create(b);
      } else if (convert) {
        chunks = loadInput(next, hasNext);
      }
      ifThen(hasNext, [&] {
        stageAsync(next, nxt);
        if (g.rawStaged)
          stageRaw(next, rem(add(rel, idx(ahead())), g.stages));
        if (g.quantized())
          stageCodes(next, rem(add(rel, idx(ahead())), g.stages));
      });
      commit({});
    }
    SmallVector<Value> yields;
    if (g.wgmma) {
      Value rests = g.splitTiles() ? splitStage(cur, rem(rel, 2)) : Value();
      yields = {multiplyWgmma(cur, loop.getRegionIterArgs()[0], rests)};
    } else {
      SmallVector<Accumulator> acc(blocks);
      for (int64_t i = 0; i < blocks; ++i)
        for (int64_t e = 0; e < 4; ++e)
          acc[i].push_back(loop.getRegionIterArgs()[4 * i + e]);
      if (g.promotes() || g.quantized()) {
        // Each step's products summed from zero by the MMAs, then added to
        // the running sums here (a quantized weight's times their
        // columns' scales).
        SmallVector<Accumulator> part(blocks, Accumulator(4, cf(0.0)));
        multiply(cur, part);
        if (g.quantized())
          addScaled(rem(rel, g.stages), part, acc);
        else
          for (int64_t i = 0; i < blocks; ++i)
            for (int64_t e = 0; e < 4; ++e)
              acc[i][e] = fadd(acc[i][e], part[i][e]);
      } else {
        multiply(cur, acc);
      }
      for (const Accumulator &a : acc)
        yields.append(a.begin(), a.end());
    }
    if (g.rmsNorm) {
      // Chunks past the range are zeros.
      SmallVector<Value> s(loop.getRegionIterArgs().drop_front(accValues));
      addSquares(chunks, s);
      yields.append(s);
    }
    if (convert && !g.rawStaged)
      ifThen(hasNext, [&] { storeInput(chunks, nxt); });
    scf::YieldOp::create(b, yields);
  }
  SmallVector<Value> result(loop.getResults().take_front(accValues));
  if (g.rmsNorm)
    storeRowScales(
        SmallVector<Value>(loop.getResults().drop_front(accValues)));
  if (g.wgmma) {
    // The last step's multiply.
    NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
    Value d = result[0];
    result.clear();
    for (int64_t i = 0; i < 4 * blocks; ++i)
      result.push_back(
          LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{i}));
  }
  return result;
}

/// The split-K reduction: one thread per output element sums the f32
/// partials [splits, M, N], scales the row by rms_norm's rsqrt(mean + eps)
/// from the splits' sums of squares `squares` [splits, M] (when not null),
/// adds the bias and the residual (when not null) and stores the result
/// type.
/// `rowCount` is M when it is dynamic (else null): the grid follows it.
void emitReduce(ImplicitLocOpBuilder &b, const Gemm &g, Value partials,
                Value squares, Value bias, Value residual, Value y,
                Value rowCount) {
  auto c = [&](int64_t v) { return indexConstant(b, v); };
  int64_t threads = 256, total = g.m * g.n;
  Value count = rowCount ? arith::MulIOp::create(b, rowCount, c(g.n))
                         : c(total);
  Value blocks =
      rowCount ? arith::CeilDivSIOp::create(b, count, c(threads)) : Value();
  auto launch = createKernelLaunch(
      b, "linear_reduce", {(total + threads - 1) / threads, 1, 1}, threads, 0);
  if (blocks)
    launch.getGridSizeXMutable().assign(blocks);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(launch.getBody().front().getTerminator());
  Value i = arith::AddIOp::create(
      b, arith::MulIOp::create(b, launch.getBlockIds().x, c(threads)),
      launch.getThreadIds().x);
  auto inRange = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, i, count),
      /*withElseRegion=*/false);
  b.setInsertionPoint(inRange.thenBlock()->getTerminator());
  Value row = arith::DivUIOp::create(b, i, c(g.n));
  Value col = arith::RemUIOp::create(b, i, c(g.n));
  Value sum = f32Constant(b, 0.0);
  for (int64_t s = 0; s < g.splits; ++s)
    sum = arith::AddFOp::create(
        b, sum,
        memref::LoadOp::create(b, partials, ValueRange{c(s), row, col}));
  if (squares) {
    Value total = f32Constant(b, 0.0);
    for (int64_t s = 0; s < g.splits; ++s)
      total = addElement(b, total, squares, {c(s), row});
    sum = arith::MulFOp::create(b, sum, rowScale(b, g, total));
  }
  if (bias)
    sum = addElement(b, sum, bias, col);
  if (residual)
    sum = addElement(b, sum, residual, {row, col});
  if (!g.outElem.isF32())
    sum = arith::TruncFOp::create(b, g.outElem, sum);
  memref::StoreOp::create(b, sum, y, ValueRange{row, col});
}

/// The operand of `add` that is not `result`.
Value residualOperand(linalg::AddOp add, Value result) {
  Value lhs = add.getDpsInputOperand(0)->get();
  return lhs == result ? add.getDpsInputOperand(1)->get() : lhs;
}

/// The residual connection `op`'s result feeds alone: a tensor linalg.add
/// of it and another tensor of its type (computed before `op`) into its
/// type; else null.
linalg::AddOp residualOf(Operation *op, DominanceInfo &dominance) {
  Value result = op->getResult(0);
  if (!result.hasOneUse())
    return nullptr;
  auto add = dyn_cast<linalg::AddOp>(*result.getUsers().begin());
  if (!add || !add.hasPureTensorSemantics())
    return nullptr;
  Value other = residualOperand(add, result);
  if (other == result || other.getType() != result.getType() ||
      add->getResult(0).getType() != result.getType() ||
      !dominance.properlyDominates(other, op))
    return nullptr;
  return add;
}

/// Replaces `op` with buffers, the kernel launch and the result tensor;
/// `residual` (or null), the add of a residual to `op`'s result, with it
/// too.
void rewrite(const LinearView &op, const Gemm &g, Fusion fusion,
             linalg::AddOp residual) {
  ImplicitLocOpBuilder b(op.op->getLoc(), op.op);
  auto buffer = [&](Value tensor) { return readOnlyBuffer(b, tensor); };
  // The input and result as [M, K] and [M, N].
  auto rows = [&](Value memref) -> Value {
    auto t = cast<MemRefType>(memref.getType());
    if (t.getRank() == 2)
      return memref;
    ReassociationIndices lead;
    for (int64_t i = 0; i + 1 < t.getRank(); ++i)
      lead.push_back(i);
    return memref::CollapseShapeOp::create(
        b, memref,
        ArrayRef<ReassociationIndices>{lead, {t.getRank() - 1}});
  };
  // With SwiGLU the kernel reads its gate and up; with rms_norm its input
  // and weight.
  Value input = op.input;
  if (fusion.swiglu)
    input = fusion.swiglu.getGate();
  if (fusion.rmsNorm)
    input = fusion.rmsNorm.getInput();
  Value x = rows(buffer(input));
  Value up = fusion.swiglu ? rows(buffer(fusion.swiglu.getUp())) : nullptr;
  Value normWeight =
      fusion.rmsNorm ? buffer(fusion.rmsNorm.getWeight()) : nullptr;
  // A quantized weight: its codes and scales.
  mnemo::DequantizeOp dequantize = g.quantized() ? op.dequantize : nullptr;
  Value w = buffer(dequantize ? dequantize.getCodes() : op.weight);
  Value codeScales = dequantize ? buffer(dequantize.getScales()) : nullptr;
  Value bias = buffer(op.bias);
  // A grouped weight [E, N, K] as [E N, K].
  if (g.grouped())
    w = memref::CollapseShapeOp::create(
        b, w, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value residualRows;
  if (residual)
    residualRows = rows(buffer(residualOperand(residual, op.result())));
  auto resultType = cast<RankedTensorType>(op.result().getType());
  // The result's rows are the input's: its dynamic dims' sizes.
  SmallVector<Value> dynamicDims;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    if (resultType.isDynamicDim(d))
      dynamicDims.push_back(
          memref::DimOp::create(b, buffer(input), d).getResult());
  Value out = memref::AllocOp::create(
      b, MemRefType::get(resultType.getShape(), g.outElem), dynamicDims,
      b.getI64IntegerAttr(64));
  Value y = rows(out);
  Value rowCount = g.dynamicM ? Value(memref::DimOp::create(b, x, 0)) : Value();
  Value partials, squares;
  auto splitBuffer = [&](SmallVector<int64_t> shape) -> Value {
    return memref::AllocOp::create(b, MemRefType::get(shape, b.getF32Type()),
                                   g.dynamicM ? ValueRange{rowCount}
                                              : ValueRange{},
                                   b.getI64IntegerAttr(64));
  };
  int64_t splitRows = g.dynamicM ? ShapedType::kDynamic : g.m;
  if (g.splits > 1)
    partials = splitBuffer({g.splits, splitRows, g.n});
  if (g.splits > 1 && g.rmsNorm)
    squares = splitBuffer({g.splits, splitRows});

  // TMA: boxes of 64 K columns (the 128B swizzle), block-m rows of the
  // input and block-n rows of W [N, K] or 64 x 64 panels of W [K, N].
  Value xMap, wMap;
  if (g.tma) {
    // (128-byte box rows: 32 f32 elements with TF32.)
    int64_t boxK = kBlockK / g.units();
    xMap = createTensorMap(b, x, {g.blockM, boxK}, g.elem);
    wMap = createTensorMap(b, w,
                           g.outIn ? SmallVector<int64_t>{g.blockN, boxK}
                                   : SmallVector<int64_t>{kBlockK, 64},
                           g.elem);
  }
  Value gridM = g.dynamicM ? Value(arith::CeilDivSIOp::create(
                                  b, rowCount, indexConstant(b, g.blockM)))
                            : Value();
  auto launch =
      createKernelLaunch(b, "linear_mma", {g.gridN(), g.gridM(), g.splits},
                         g.threads(), g.sharedBytes());
  if (gridM)
    launch.getGridSizeYMutable().assign(gridM);
  {
    OpBuilder::InsertionGuard guard(b);
    GemmEmitter emitter(b, g);
    emitter.xMap = xMap;
    emitter.wMap = wMap;
    emitter.up = up;
    emitter.normWeight = normWeight;
    emitter.rows = rowCount;
    emitter.squares = squares;
    emitter.residual = residualRows;
    if (g.grouped())
      emitter.groups = buffer(op.groups);
    emitter.codeScales = codeScales;
    if (partials)
      emitter.emit(launch, x, w, nullptr, partials);
    else
      emitter.emit(launch, x, w, bias, y);
  }
  if (partials)
    emitReduce(b, g, partials, squares, bias, residualRows, y, rowCount);
  Value result = bufferization::ToTensorOp::create(
      b, resultType, out, /*restrict=*/true, /*writable=*/true);
  if (residual) {
    residual->getResult(0).replaceAllUsesWith(result);
    residual->erase();
  }
  op.op->replaceAllUsesWith(ValueRange{result});
  op.op->erase();
  for (Operation *fused :
       {fusion.swiglu.getOperation(), fusion.rmsNorm.getOperation(),
        dequantize.getOperation()})
    if (fused && fused->use_empty())
      fused->erase();
}

/// Rows from which a GEMM of f32 input is worth a rounding kernel of its
/// own: a prefill's (unbounded rows, planned for kPlannedRows) or a static
/// input of as many.
constexpr int64_t kNarrowRows = 1024;

/// Whether `g`, a GEMM of f32 input on sm_90a, would rather read its input
/// rounded to the weight's type by a kernel of its own: with the tiles
/// staged through registers (the rounding, a SwiGLU or an rms_norm
/// computed as they are), the prefill GEMMs of a 1.1B model ran at 150 to
/// 190 TFLOP/s; by TMA in the weight's type, at 0.8-1.04x cuBLAS. A
/// decode step's few rows keep their fusions (rawStaged), which a rounding
/// kernel would cost launches for.
bool wantsNarrowInput(const Gemm &g) {
  return g.inElem.isF32() && !g.tf32() && g.wgmma && !g.boundedM &&
         (g.dynamicM || g.m >= kNarrowRows);
}

/// `op` reading its input rounded to `elem` (a conversion made once per
/// input, kept in `rounded`), when `takes` accepts the narrowed layer;
/// else null and the IR as it was.
Operation *narrowInput(Operation *op, Type elem,
                       DenseMap<std::pair<Value, Type>, Value> &rounded,
                       function_ref<bool(Operation *)> takes) {
  // Both ops' input is their first operand.
  Value input = op->getOperand(0);
  auto key = std::make_pair(input, elem);
  auto it = rounded.find(key);
  bool fresh = it == rounded.end();
  OpBuilder b(op);
  Value narrow;
  if (fresh) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(input);
    narrow = convertElements(b, op->getLoc(), input, elem);
  } else {
    narrow = it->second;
  }
  IRMapping map;
  map.map(input, narrow);
  Operation *clone = b.clone(*op, map);
  if (!takes(clone)) {
    clone->erase();
    if (fresh)
      eraseConversion(narrow.getDefiningOp<linalg::GenericOp>());
    return nullptr;
  }
  rounded[key] = narrow;
  op->replaceAllUsesWith(clone->getResults());
  op->erase();
  return clone;
}

struct LinearKernelPass
    : mnemo::impl::LinearKernelPassBase<LinearKernelPass> {
  using Base::Base;

  /// What `op`'s input loads compute: a SwiGLU only this layer reads, or
  /// (exclusively: the input has one producer) an rms_norm of static shape
  /// whose other users keep it.
  Fusion fusionOf(const LinearView &op) {
    Fusion f;
    // TF32 tiles are the f32 values as stored: nothing computed on the way.
    if (cast<RankedTensorType>(op.weight.getType()).getElementType().isF32())
      return f;
    auto swiglu = op.input.getDefiningOp<mnemo::SwiGluOp>();
    // A clamped SwiGLU (limit) stays a kernel of its own.
    if (fuseSwiglu && swiglu && swiglu->hasOneUse() && !swiglu.getLimit())
      f.swiglu = swiglu;
    // (A grouped layer's rows are no model's rows: no rms_norm.)
    auto norm = op.groups ? mnemo::RmsNormOp()
                          : op.input.getDefiningOp<mnemo::RmsNormOp>();
    auto weight = norm ? cast<RankedTensorType>(norm.getWeight().getType())
                       : RankedTensorType();
    if (fuseRmsNorm && norm && weight.hasStaticShape() &&
        (weight.getElementType().isF32() ||
         weight.getElementType().isBF16() || weight.getElementType().isF16()))
      f.rmsNorm = norm;
    return f;
  }

  void runOnOperation() override {
    const mnemo::ChipInfo *gpu = mnemo::lookupChip(chip);
    if (!gpu) {
      getOperation().emitError("mnemo-gpu-linear-kernel: unknown chip '")
          << chip << "'";
      return signalPassFailure();
    }
    std::optional<F32Precision> parsed = parseF32Precision(f32Precision);
    if (!parsed) {
      getOperation().emitError("mnemo-gpu-linear-kernel: f32-precision '")
          << f32Precision << "' is not 3xtf32, tf32 or f32";
      return signalPassFailure();
    }
    F32Precision precision = *parsed;
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<mnemo::LinearOp, mnemo::GroupedLinearOp>(op))
        ops.push_back(op);
    });
    // Inputs rounded to a 16-bit type, shared by the layers reading them
    // (an rms_norm's output feeds the q, k and v projections).
    DenseMap<std::pair<Value, Type>, Value> rounded;
    DominanceInfo dominance(getOperation());
    auto plan = [&](Operation *op, const Fusion &fusion, std::string &why) {
      return analyze(*viewOf(op), fusion, gpu->warpgroupMma && useWgmma, useTma,
                     smCount, splitK, maxBatch, sharedBytesLimit, precision,
                     why);
    };
    for (Operation *op : ops) {
      std::string why;
      Fusion fusion = fusionOf(*viewOf(op));
      FailureOr<Gemm> g = plan(op, fusion, why);
      // A prefill's f32 input is rounded by a kernel of its own, once for
      // every layer that reads it, so that the GEMM's tiles arrive by TMA
      // in the weight's type instead of through registers.
      if (succeeded(g) && narrowInputs && wantsNarrowInput(*g)) {
        std::optional<Gemm> narrowed;
        Operation *narrow =
            narrowInput(op, g->elem, rounded, [&](Operation *n) {
              std::string ignored;
              FailureOr<Gemm> ng = plan(n, Fusion(), ignored);
              if (succeeded(ng) && ng->tma)
                narrowed = *ng;
              return narrowed.has_value();
            });
        if (narrow) {
          op = narrow;
          fusion = Fusion();
          g = *narrowed;
        }
      }
      // The residual joins a decode tile's epilogue (or its split-K
      // reduction), where it saves the add's launch. A prefill tile keeps
      // the add: in its epilogue it made a 1.1B model's 128-token
      // prefill 13% slower (H100, 2026-12-06).
      bool residual = succeeded(g) && fuseResidual && isDecodeTile(*g);
      if (succeeded(g))
        rewrite(*viewOf(op), *g, fusion,
                residual ? residualOf(op, dominance) : linalg::AddOp());
      else if (report)
        op->emitRemark("keeps the generic path: ") << why;
    }
  }
};

} // namespace

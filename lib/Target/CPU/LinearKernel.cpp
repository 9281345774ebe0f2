//===- LinearKernel.cpp - register-tiled GEMM for mnemo.linear --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// y[M, N] = x[M, K] W(K, N) as a GEMM in the vector dialect, the CPU
// counterpart of the GPU's tensor-core kernel (an input's leading dims
// fold into M, so every function's projections share one kernel):
//
//   scf.forall (column tile, row tile)            threads take whole tiles
//     pack the tile's rows of x into panels         [ceil(rows/MR), K, MR]
//                                                    (a static tile inside a
//                                                    parallel loop: once,
//                                                    before the loops that
//                                                    do not change it)
//     scf.for panel of NR columns in the tile
//       scf.for K block                              the panel's block stays
//                                                    in cache for every row
//         scf.for micro-tile of MR rows
//           acc[MR][NR / lanes] = bias | partial sums (vector registers)
//           scf.for k in the block                  MR x NR/lanes vector.fma
//             acc[i][j] += broadcast(x[i, k]) * W[k, j-th vector of the panel]
//           y[rows, panel] = acc                    masked at N; rows past
//                                                    the tile not written
//
// The micro-tile's size comes from the target's vector registers (12 or 8
// rows x 32 with AVX-512: up to 24 accumulators and 2 weight vectors;
// 6 x 16 with AVX2; 8 x 12 with NEON). A constant weight is packed at
// compile time into panels [ceil(N / NR), K, NR], so each step reads NR
// consecutive weights; other weights are read in place from [K, N].
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/CPU/Passes.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "dialects/Mnemo/Utils/Quantization.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include <cstring>

namespace mlir::mnemo {
#define GEN_PASS_DEF_CPULINEARKERNELPASS
#include "mnemo/Target/CPU/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// Tiles a GEMM's forall should have at least (when M allows), so that the
/// runtime's threads share a GEMM of a few rows, and share a narrow one
/// evenly: the attention block's [1024, 2048] x [2048, 512] projections
/// made 9 tiles with 8, 5 for one of two threads and 4 for the other, and
/// took 4% longer than with 32 (29 tiles).
constexpr int64_t kMinTiles = 32;

/// The narrowest column tile made to reach kMinTiles (four times as wide
/// where each tile packs its rows of x: packing costs about 2 cycles per
/// element, each time).
constexpr int64_t kMinTileCols = 128;

/// Whether a micro-tile reads its rows of x in place rather than from
/// packed panels: when the rows, `bytes` apart, fall in different sets of
/// a 32 KiB 8-way L1 (64 sets of 64-byte lines), at most four rows a set.
/// Packing costs each column tile about 2 cycles per element of x, more
/// than the products of 128 columns save; but rows 4 KiB apart (K = 1024)
/// share one set, and the 1024^3 GEMM read in place ran at 85% of the FMA
/// peak against 92% packed.
bool readsInPlace(int64_t bytes, int64_t rows) {
  constexpr int64_t kLine = 64, kSets = 64;
  llvm::SmallVector<int64_t> perSet(kSets, 0);
  for (int64_t i = 0; i < rows; ++i)
    if (++perSet[(i * bytes / kLine) % kSets] > 4)
      return false;
  return true;
}

struct Tiling {
  int64_t lanes;       // f32 lanes of a vector
  int64_t vectors;     // vectors per micro-tile row
  int64_t rows;        // MR
  int64_t tileRows;    // MC, a multiple of MR
  int64_t tileCols;    // NC, a multiple of NR
  int64_t kBlock;      // K steps per block (a panel's block stays cached)
  bool exactRows;      // every micro-tile is whole (static M, MR | M)
  bool exactCols;      // NR | N: no column past N is read or written
  bool scalable = false; // lanes x vscale per vector (SVE): NR known at
                         // run time only
  /// NR, or with scalable vectors its least value (vscale 1).
  int64_t nr() const { return lanes * vectors; }
  /// What column tiles are multiples of: NR, or with scalable vectors
  /// NR at the largest vscale (16: 2048-bit vectors), so that whole
  /// panels fill a tile at every vector length.
  int64_t colGranule() const { return scalable ? nr() * 16 : nr(); }
};

/// The weight `[K, N]` (in_out) or `[N, K]` (out_in) as panels
/// `[ceil(N / nr), K, nr]`, zero-padded past N.
DenseElementsAttr packPanels(DenseElementsAttr w, bool outIn, int64_t nr) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t k = type.getDimSize(outIn ? 1 : 0);
  int64_t n = type.getDimSize(outIn ? 0 : 1);
  int64_t panels = llvm::divideCeil(n, nr);
  auto packedType =
      RankedTensorType::get({panels, k, nr}, type.getElementType());
  size_t bytes = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> raw = w.getRawData();
  bool splat = w.isSplat();
  std::vector<char> out(static_cast<size_t>(panels * k * nr) * bytes, 0);
  for (int64_t col = 0; col < n; ++col)
    for (int64_t row = 0; row < k; ++row) {
      int64_t from = splat ? 0 : (outIn ? col * k + row : row * n + col);
      int64_t to = ((col / nr) * k + row) * nr + col % nr;
      std::memcpy(&out[to * bytes], &raw[from * bytes], bytes);
    }
  return DenseElementsAttr::getFromRawBuffer(packedType, out);
}

/// 4-bit codes [N, ceil(K / 2)] (two per byte, the even column low) as
/// panels [ceil(N / nr), K, nr / 2] whose byte c holds the panel's column c
/// in its low nibble and column c + nr / 2 in its high one, so that a K
/// step's bytes decode to the panel's columns in order with no shuffle of
/// codes. (Scales and zero points [N, groups] pack as packPanels packs an
/// [N, K] weight.)
DenseElementsAttr packNibblePanels(DenseElementsAttr w, int64_t nr,
                                   int64_t k) {
  auto type = cast<RankedTensorType>(w.getType());
  int64_t n = type.getDimSize(0), perRow = type.getDimSize(1);
  int64_t width = nr / 2;
  int64_t panels = llvm::divideCeil(n, nr);
  ArrayRef<char> raw = w.getRawData();
  bool splat = w.isSplat();
  std::vector<char> out(static_cast<size_t>(panels * k * width), 0);
  for (int64_t col = 0; col < n; ++col)
    for (int64_t row = 0; row < k; ++row) {
      int64_t p = col / nr, c = col % nr;
      uint8_t byte = uint8_t(raw[splat ? 0 : col * perRow + row / 2]);
      uint8_t code = row % 2 ? byte >> 4 : byte & 0x0f;
      char &to = out[(p * k + row) * width + c % width];
      to = char(c < width ? (uint8_t(to) & 0xf0u) | code
                          : (uint8_t(to) & 0x0fu) | uint8_t(code << 4));
    }
  return DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get({panels, k, width}, type.getElementType()), out);
}

/// The constant behind `v` (through casts that only refine its type).
DenseElementsAttr constantValue(Value v, arith::ConstantOp *op = nullptr) {
  while (auto cast = v.getDefiningOp<tensor::CastOp>())
    v = cast.getSource();
  auto constant = v.getDefiningOp<arith::ConstantOp>();
  if (op)
    *op = constant;
  return constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                  : DenseElementsAttr();
}

/// The quantized weight the GEMM decodes as it loads it: a constant
/// [N, K] (out_in, groups along K) behind mnemo.dequantize, or null.
DequantizeOp quantizedWeight(LinearOp op) {
  auto dq = op.getWeight().getDefiningOp<DequantizeOp>();
  if (!dq || op.getLayout() != WeightLayout::OutIn ||
      dq.getType().getRank() != 2 || !constantValue(dq.getCodes()) ||
      !constantValue(dq.getScales()) ||
      (dq.getZeroPoints() && !constantValue(dq.getZeroPoints())))
    return {};
  return dq;
}

/// Asks LLVM not to unroll `loop`. The GEMM's loops around the micro-tile
/// (panels, K blocks, micro-tiles) have static trip counts wherever the
/// shapes are static, and LLVM unrolled them in full, copying the
/// micro-tile's code once per panel.
void noUnroll(scf::ForOp loop) {
  MLIRContext *ctx = loop.getContext();
  loop->setAttr(
      "llvm.loop_annotation",
      LLVM::LoopAnnotationAttr::get(
          ctx, {}, {}, {},
          LLVM::LoopUnrollAttr::get(ctx, BoolAttr::get(ctx, true), {}, {}, {},
                                    {}, {}, {}),
          {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}));
}

/// Moves `b` to where a region-building callback's builder `nb` points,
/// for the scope of the callback.
struct InsertHere {
  InsertHere(OpBuilder &b, OpBuilder &nb) : guard(b) {
    b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
  }
  OpBuilder::InsertionGuard guard;
};

/// Constants packed for the kernels, by constant and packing (one constant
/// may serve several layers).
using PackedConstants = llvm::DenseMap<std::pair<Operation *, int64_t>, Value>;

bool isKernelFloat(Type t) { return t.isF32() || t.isBF16() || t.isF16(); }

/// Why `op` keeps the generic tiling, or "" when the kernel takes it.
StringRef unsupportedReason(LinearOp op) {
  RankedTensorType w = op.getWeight().getType(); // static (verifier)
  if (!op.getType().getElementType().isF32())
    return "the result is not f32";
  if (!isKernelFloat(op.getInput().getType().getElementType()) ||
      !isKernelFloat(w.getElementType()))
    return "an operand is not f32, bf16 or f16";
  if (Value bias = op.getBias())
    if (!isKernelFloat(cast<RankedTensorType>(bias.getType()).getElementType()))
      return "the bias is not f32, bf16 or f16";
  return "";
}

/// The rows of one micro-tile: MR, or fewer for the rows a tile has past
/// its last whole micro-tile; `inBounds` when every row exists (no row
/// past the tile is read or written).
struct MicroTile {
  int64_t height;
  bool inBounds;
};

/// Rows of the micro-tiles that finish a tile whose row count is not a
/// multiple of MR: a 74-row GEMM computes 76 rows (6 x 12 + 4), not 84.
constexpr int64_t kTailRows = 4;

class KernelBuilder {
public:
  KernelBuilder(RewriterBase &b, LinearOp op, const Tiling &t)
      : b(b), op(op), t(t), loc(op.getLoc()), f32(b.getF32Type()),
        k(op.getInFeatures()), n(op.getOutFeatures()) {}

  /// The replacement of `op`'s result.
  Value build(PackedConstants &packedOf);

private:
  Value idx(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  }
  Value minIndex(Value a, Value c) {
    return arith::MinSIOp::create(b, loc, a, c).getResult();
  }
  VectorType vec(Type e) {
    return VectorType::get({t.lanes}, e, {t.scalable});
  }
  /// The first column of vector `j` of a panel.
  Value vectorColumn(Value col, int64_t j) {
    return j == 0 ? col
                  : arith::AddIOp::create(
                        b, loc, col,
                        arith::MulIOp::create(b, loc, lanesValue, idx(j)))
                        .getResult();
  }
  Value toF32(Value v) {
    Type want = isa<VectorType>(v.getType()) ? Type(vec(f32)) : Type(f32);
    return v.getType() == want ? v
                               : arith::ExtFOp::create(b, loc, want, v)
                                     .getResult();
  }

  /// x with a row dim (a vector input is one row).
  Value rowsOf(Value x);
  /// The weight as packed panels (constant) or [K, N].
  Value weightSource(PackedConstants &packedOf);
  /// Vector `j` of the weights at step `kk` for the panel at column `col`.
  Value loadWeights(Value kk, Value col, int64_t j);
  /// The NR weights of step `kk` of the panel at column `col` decoded from
  /// a quantized weight's codes, as the micro-tile's vectors.
  SmallVector<Value> decodeWeights(Value kk, Value col);
  /// The [R, C] constant behind `source` as [C, R], made once per
  /// constant (scalable vectors' weights, scales and zero points).
  Value transposedConstant(Value source, PackedConstants &packedOf);
  /// A packed constant for `source`, made once per constant.
  Value packedConstant(Value source,
                       PackedConstants &packedOf,
                       int64_t nibbles = 0);
  /// The tile's rows of x [m0, m0 + rows) as f32 panels [ceil(rows / MR),
  /// K, MR].
  Value packRows(Value m0, Value rows);
  /// The accumulators of the micro-tile at row `r`, columns [pc, pc + NR)
  /// of the tile (column `col` of y; the tile's first row is row `rowBase`
  /// of x): the tile's partial sums plus K steps [k0, k1) of its rows,
  /// packed (`panelsOfX`) or read from x in place.
  SmallVector<Value> accumulate(Value tile, Value panelsOfX, Value rowBase,
                                Value r, Value pc, Value col, Value k0,
                                Value k1, const MicroTile &mt);
  /// `tile` with the rows of `acc` written at (r, pc).
  Value writeRows(Value tile, ValueRange acc, Value r, Value pc,
                  const MicroTile &mt);
  /// The micro-tiles of `mt.height` rows at rows [from, to) of the tile,
  /// for panel column `pc`, K steps [k0, k1).
  Value microTiles(Value tile, Value panelsOfX, Value rowBase, Value from,
                   Value to, Value pc, Value col, Value k0, Value k1,
                   const MicroTile &mt);

  RewriterBase &b;
  LinearOp op;
  const Tiling &t;
  Location loc;
  Type f32;
  int64_t k, n;
  Value x, m, weights, bias;
  // Lanes of a vector and NR as values (vscale x lanes with scalable
  // vectors).
  Value lanesValue, nrValue;
  bool packed = false;
  // A quantized weight: its codes, scales and zero points as panels.
  DequantizeOp quantized;
  Value scales, zeros;
};

/// Whether the input's leading dims fold into the GEMM's rows: [.., S, K]
/// is one GEMM of prod(..) * S rows (a decode step's [B, 1, K] is B rows,
/// not B one-row GEMMs each reading all the weights), and every step's
/// kernel takes the same [M, K] whatever its batch layout.
bool foldsRows(RankedTensorType type) { return type.getRank() >= 3; }

/// [d0, .., dn-2, X] <-> [d0 * .. * dn-2, X].
SmallVector<ReassociationIndices> rowGroups(int64_t rank) {
  ReassociationIndices rows;
  for (int64_t d = 0; d < rank - 1; ++d)
    rows.push_back(d);
  return {rows, {rank - 1}};
}

/// The GEMM's row count M as the kernel sees it (dynamic or not).
int64_t rowCount(RankedTensorType type) {
  if (type.getRank() == 1)
    return 1;
  int64_t m = 1;
  for (int64_t d : type.getShape().drop_back()) {
    if (ShapedType::isDynamic(d))
      return ShapedType::kDynamic;
    m *= d;
  }
  return m;
}

Value KernelBuilder::rowsOf(Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  if (foldsRows(type))
    return tensor::CollapseShapeOp::create(b, loc, input,
                                           rowGroups(type.getRank()));
  if (type.getRank() != 1)
    return input;
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({1, k}, type.getElementType()), input,
      ArrayRef<ReassociationIndices>{{0, 1}},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(k)});
}

Value KernelBuilder::packedConstant(
    Value source, PackedConstants &packedOf,
    int64_t nibbles) {
  arith::ConstantOp constant;
  DenseElementsAttr value = constantValue(source, &constant);
  Value &panels = packedOf[{constant, nibbles}];
  if (!panels) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(constant);
    panels = arith::ConstantOp::create(
        b, constant.getLoc(),
        nibbles ? packNibblePanels(value, t.nr(), nibbles)
                : packPanels(value, /*outIn=*/true, t.nr()));
  }
  return panels;
}

Value KernelBuilder::transposedConstant(Value source,
                                        PackedConstants &packedOf) {
  arith::ConstantOp constant;
  DenseElementsAttr value = constantValue(source, &constant);
  Value &inOut = packedOf[{constant, -2}];
  if (!inOut) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(constant);
    auto type = cast<RankedTensorType>(value.getType());
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    // One panel as wide as the rows: [1, cols, rows], read as [cols, rows].
    DenseElementsAttr one = packPanels(value, /*outIn=*/true, rows);
    inOut = arith::ConstantOp::create(
        b, constant.getLoc(),
        DenseElementsAttr::getFromRawBuffer(
            RankedTensorType::get({cols, rows}, one.getElementType()),
            one.getRawData()));
  }
  return inOut;
}

Value KernelBuilder::weightSource(
    PackedConstants &packedOf) {
  Value w = op.getWeight();
  bool outIn = op.getLayout() == WeightLayout::OutIn;
  if ((quantized = quantizedWeight(op)) && t.scalable) {
    // Codes, scales and zero points as [K, N], [groups, N]: rows that
    // scalable vectors read at any length (4-bit codes as [K / 2, N], a
    // byte holding rows 2 r and 2 r + 1 of a column, as the checkpoint's
    // [N, K / 2] bytes hold them).
    if (Value z = quantized.getZeroPoints())
      zeros = transposedConstant(z, packedOf);
    scales = transposedConstant(quantized.getScales(), packedOf);
    return transposedConstant(quantized.getCodes(), packedOf);
  }
  if (quantized) {
    packed = true;
    scales = packedConstant(quantized.getScales(), packedOf);
    if (Value z = quantized.getZeroPoints())
      zeros = packedConstant(z, packedOf);
    return packedConstant(quantized.getCodes(), packedOf,
                          quantized.isPacked() ? k : 0);
  }
  // A cast only changes what the type says about the constant's shape.
  arith::ConstantOp constant;
  DenseElementsAttr value = constantValue(w, &constant);
  if (value && t.scalable) {
    // Panels of NR columns need NR at compile time: scalable vectors read
    // the constant as [K, N] (transposed here once when it is [N, K]).
    return outIn ? transposedConstant(w, packedOf) : w;
  }
  if (value) {
    packed = true;
    Value &panels = packedOf[{constant, -1}];
    if (!panels) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(constant);
      panels = arith::ConstantOp::create(b, constant.getLoc(),
                                         packPanels(value, outIn, t.nr()));
    }
    return panels;
  }
  if (!outIn)
    return w;
  // [N, K] computed at run time: one transpose, then read like [K, N].
  Type e = op.getWeight().getType().getElementType();
  Value init = emptyTensor(b, loc, {b.getIndexAttr(k), b.getIndexAttr(n)}, e);
  return linalg::TransposeOp::create(b, loc, w, init,
                                     ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

Value KernelBuilder::loadWeights(Value kk, Value col, int64_t j) {
  Type e = cast<RankedTensorType>(weights.getType()).getElementType();
  Value pad = floatConst(b, loc, e, 0.0);
  Value v;
  if (packed) {
    Value panel =
        arith::DivUIOp::create(b, loc, col, idx(t.nr())).getResult();
    v = vector::TransferReadOp::create(
        b, loc, vec(e), weights, ValueRange{panel, kk, idx(j * t.lanes)}, pad,
        ArrayRef<bool>{true});
  } else {
    Value c = vectorColumn(col, j);
    // Columns past N read the padding.
    v = vector::TransferReadOp::create(b, loc, vec(e), weights,
                                       ValueRange{kk, c}, pad,
                                       ArrayRef<bool>{t.exactCols});
  }
  return toF32(v);
}

SmallVector<Value> KernelBuilder::decodeWeights(Value kk, Value col) {
  if (t.scalable) {
    // Codes as [K, N] (4-bit: [K / 2, N], row kk's code in the low
    // nibble when kk is even, else in the high one, shifted down here),
    // scales and zero points as [groups, N]: each vector of a row decoded
    // from its own columns, past N masked.
    Value group = arith::DivUIOp::create(b, loc, kk,
                                         idx(quantized.getGroupSize()));
    Value codeRow = kk, shift;
    if (quantized.isPacked()) {
      codeRow = arith::DivUIOp::create(b, loc, kk, idx(2));
      shift = arith::IndexCastOp::create(
          b, loc, b.getI8Type(),
          arith::MulIOp::create(
              b, loc, arith::RemUIOp::create(b, loc, kk, idx(2)), idx(4)));
    }
    auto read = [&](Value source, Value row, Value c) {
      Type e = cast<RankedTensorType>(source.getType()).getElementType();
      Value pad = isa<FloatType>(e) ? floatConst(b, loc, e, 0.0)
                                    : arith::ConstantIntOp::create(b, loc, e, 0)
                                          .getResult();
      return vector::TransferReadOp::create(b, loc, vec(e), source,
                                            ValueRange{row, c}, pad,
                                            ArrayRef<bool>{false})
          .getResult();
    };
    SmallVector<Value> out;
    for (int64_t j = 0; j < t.vectors; ++j) {
      Value c = vectorColumn(col, j);
      Value bytes = read(weights, codeRow, c);
      if (shift)
        bytes = arith::ShRUIOp::create(
            b, loc, bytes,
            vector::BroadcastOp::create(b, loc, bytes.getType(), shift));
      Value q = quant::decodeCodes(b, loc, quantized.getFormat(),
                                   zeros != nullptr, bytes, /*high=*/false);
      out.push_back(quant::scaleCodes(b, loc, q, read(scales, group, c),
                                      zeros ? read(zeros, group, c) : Value()));
    }
    return out;
  }
  int64_t nr = t.nr();
  Value panel = arith::DivUIOp::create(b, loc, col, idx(nr)).getResult();
  auto read = [&](Value source, int64_t width, Value row) {
    Type e = cast<RankedTensorType>(source.getType()).getElementType();
    Value pad = isa<FloatType>(e) ? floatConst(b, loc, e, 0.0)
                                  : arith::ConstantIntOp::create(b, loc, e, 0)
                                        .getResult();
    return vector::TransferReadOp::create(
               b, loc, VectorType::get({width}, e), source,
               ValueRange{panel, row, idx(0)}, pad, ArrayRef<bool>{true})
        .getResult();
  };
  QuantFormat format = quantized.getFormat();
  bool unsignedCodes = zeros != nullptr;
  Value q;
  if (!quantized.isPacked()) {
    q = quant::decodeCodes(b, loc, format, unsignedCodes,
                           read(weights, nr, kk), /*high=*/false);
  } else {
    // Low nibbles are the panel's first half, high ones its second.
    Value bytes = read(weights, nr / 2, kk);
    Value lo = quant::decodeCodes(b, loc, format, unsignedCodes, bytes,
                                  /*high=*/false);
    Value hi = quant::decodeCodes(b, loc, format, unsignedCodes, bytes,
                                  /*high=*/true);
    q = vector::ShuffleOp::create(b, loc, lo, hi,
                                  llvm::to_vector(llvm::seq<int64_t>(0, nr)));
  }
  Value group = arith::DivUIOp::create(b, loc, kk,
                                       idx(quantized.getGroupSize()));
  Value w = quant::scaleCodes(b, loc, q, read(scales, nr, group),
                              zeros ? read(zeros, nr, group) : Value());
  SmallVector<Value> out;
  for (int64_t j = 0; j < t.vectors; ++j)
    out.push_back(vector::ExtractStridedSliceOp::create(
        b, loc, w, ArrayRef<int64_t>{j * t.lanes}, ArrayRef<int64_t>{t.lanes},
        ArrayRef<int64_t>{1}));
  return out;
}

Value KernelBuilder::packRows(Value m0, Value rows) {
  // panels[p, k, i] = x[min(m0 + p * MR + i, M - 1), k]: each K step of a
  // micro-tile reads MR consecutive inputs (one cache line), and rows past
  // the end repeat the last one (their sums are never written).
  Value count = b.createOrFold<arith::CeilDivSIOp>(loc, rows, idx(t.rows));
  Value init = emptyTensor(
      b, loc, {getAsOpFoldResult(count), b.getIndexAttr(k),
               b.getIndexAttr(t.rows)},
      f32);
  MLIRContext *ctx = b.getContext();
  Value lastRow = arith::SubIOp::create(b, loc, m, idx(1));
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(3, ctx)},
             iterators(3),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               Value p = linalg::IndexOp::create(nb, nl, 0);
               Value kk = linalg::IndexOp::create(nb, nl, 1);
               Value i = linalg::IndexOp::create(nb, nl, 2);
               Value row = arith::AddIOp::create(
                   nb, nl, m0,
                   arith::AddIOp::create(
                       nb, nl,
                       arith::MulIOp::create(
                           nb, nl, p,
                           arith::ConstantIndexOp::create(nb, nl, t.rows)),
                       i));
               row = arith::MinSIOp::create(nb, nl, row, lastRow);
               Value v = tensor::ExtractOp::create(nb, nl, x,
                                                   ValueRange{row, kk});
               linalg::YieldOp::create(nb, nl, castFloat(nb, nl, v, f32));
             })
      .getResult(0);
}

SmallVector<Value> KernelBuilder::accumulate(Value tile, Value panelsOfX,
                                             Value rowBase, Value r, Value pc,
                                             Value col, Value k0, Value k1,
                                             const MicroTile &mt) {
  int64_t nv = t.vectors;
  // The first K block starts from the bias (or zeros), the others from the
  // partial sums in the tile.
  Value zero = floatConst(b, loc, f32, 0.0);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k0,
                                      idx(0));
  auto start = scf::IfOp::create(
      b, loc, first,
      [&](OpBuilder &nb, Location) {
        InsertHere here(b, nb);
        SmallVector<Value> rowInit;
        for (int64_t j = 0; j < nv; ++j) {
          if (!bias) {
            rowInit.push_back(arith::ConstantOp::create(
                b, loc, DenseElementsAttr::get(vec(f32), b.getF32FloatAttr(0))));
            continue;
          }
          Type e = cast<RankedTensorType>(bias.getType()).getElementType();
          Value c = vectorColumn(col, j);
          rowInit.push_back(toF32(vector::TransferReadOp::create(
              b, loc, vec(e), bias, ValueRange{c}, floatConst(b, loc, e, 0.0),
              ArrayRef<bool>{t.exactCols})));
        }
        SmallVector<Value> all;
        for (int64_t i = 0; i < mt.height; ++i)
          all.append(rowInit);
        scf::YieldOp::create(b, loc, all);
      },
      [&](OpBuilder &nb, Location) {
        InsertHere here(b, nb);
        // The partial sums as one 2-D transfer (scalable: one per vector
        // of a row); rows past the tile read zeros (they are not written).
        if (t.scalable) {
          SmallVector<Value> sums(mt.height * nv);
          auto blockType =
              VectorType::get({mt.height, t.lanes}, f32, {false, true});
          for (int64_t j = 0; j < nv; ++j) {
            Value block = vector::TransferReadOp::create(
                b, loc, blockType, tile, ValueRange{r, vectorColumn(pc, j)},
                zero, ArrayRef<bool>{mt.inBounds, false});
            for (int64_t i = 0; i < mt.height; ++i)
              sums[i * nv + j] = vector::ExtractOp::create(
                  b, loc, block, ArrayRef<int64_t>{i});
          }
          scf::YieldOp::create(b, loc, sums);
          return;
        }
        auto blockType = VectorType::get({mt.height, t.nr()}, f32);
        Value block = vector::TransferReadOp::create(
            b, loc, blockType, tile, ValueRange{r, pc}, zero,
            ArrayRef<bool>{mt.inBounds, t.exactCols});
        SmallVector<Value> sums;
        for (int64_t i = 0; i < mt.height; ++i) {
          Value row = vector::ExtractOp::create(b, loc, block,
                                                ArrayRef<int64_t>{i});
          for (int64_t j = 0; j < nv; ++j)
            sums.push_back(vector::ExtractStridedSliceOp::create(
                b, loc, row, ArrayRef<int64_t>{j * t.lanes},
                ArrayRef<int64_t>{t.lanes}, ArrayRef<int64_t>{1}));
        }
        scf::YieldOp::create(b, loc, sums);
      });
  SmallVector<Value> init(start.getResults());
  // The micro-tile's rows of x: its panel of the packed rows, or (x read
  // in place) each row's index, past M the last row's (whose sums are
  // never written).
  Value panel, inPanel;
  SmallVector<Value> rowOf;
  if (panelsOfX) {
    panel = arith::DivUIOp::create(b, loc, r, idx(t.rows));
    if (mt.height < t.rows)
      inPanel = arith::RemUIOp::create(b, loc, r, idx(t.rows));
  } else {
    Value lastRow = arith::SubIOp::create(b, loc, m, idx(1));
    for (int64_t i = 0; i < mt.height; ++i) {
      Value row = arith::AddIOp::create(b, loc, rowBase,
                                        arith::AddIOp::create(b, loc, r,
                                                              idx(i)));
      rowOf.push_back(mt.inBounds ? row : minIndex(row, lastRow));
    }
  }
  auto loop = scf::ForOp::create(
      b, loc, k0, k1, idx(1), init,
      [&](OpBuilder &nb, Location, Value kk, ValueRange acc) {
        InsertHere here(b, nb);
        SmallVector<Value> w;
        if (quantized)
          w = decodeWeights(kk, col);
        else
          for (int64_t j = 0; j < nv; ++j)
            w.push_back(loadWeights(kk, col, j));
        SmallVector<Value> next;
        for (int64_t i = 0; i < mt.height; ++i) {
          Value slot = inPanel ? arith::AddIOp::create(b, loc, inPanel, idx(i))
                                     .getResult()
                               : idx(i);
          Value a =
              panelsOfX
                  ? tensor::ExtractOp::create(b, loc, panelsOfX,
                                              ValueRange{panel, kk, slot})
                        .getResult()
                  : toF32(tensor::ExtractOp::create(b, loc, x,
                                                    ValueRange{rowOf[i], kk})
                              .getResult());
          Value ab = vector::BroadcastOp::create(b, loc, vec(f32), a);
          for (int64_t j = 0; j < nv; ++j)
            next.push_back(
                vector::FMAOp::create(b, loc, ab, w[j], acc[i * nv + j]));
        }
        scf::YieldOp::create(b, loc, next);
      });
  // The step is already a register tile of FMAs: unrolling it (LLVM fully
  // unrolls static trip counts) only multiplies the code.
  noUnroll(loop);
  return SmallVector<Value>(loop.getResults());
}

Value KernelBuilder::writeRows(Value tile, ValueRange acc, Value r, Value pc,
                               const MicroTile &mt) {
  // One 2-D transfer for the micro-tile (one op for bufferization to
  // analyse): rows past the tile and columns past N are masked; the
  // lowering writes it row by row from the same registers.
  int64_t nv = t.vectors;
  if (t.scalable) {
    // One 2-D transfer per vector of a row: a scalable vector's columns
    // are known at run time only.
    auto blockType = VectorType::get({mt.height, t.lanes}, f32, {false, true});
    Value zeroBlock = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(blockType, b.getF32FloatAttr(0.0f)));
    for (int64_t j = 0; j < nv; ++j) {
      Value block = zeroBlock;
      for (int64_t i = 0; i < mt.height; ++i)
        block = vector::InsertOp::create(b, loc, acc[i * nv + j], block,
                                         ArrayRef<int64_t>{i});
      tile = vector::TransferWriteOp::create(
                 b, loc, block, tile, ValueRange{r, vectorColumn(pc, j)},
                 ArrayRef<bool>{mt.inBounds, false})
                 .getResult();
    }
    return tile;
  }
  auto rowType = VectorType::get({t.nr()}, f32);
  auto blockType = VectorType::get({mt.height, t.nr()}, f32);
  Value block = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(blockType, b.getF32FloatAttr(0.0f)));
  Value zeroRow = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(rowType, b.getF32FloatAttr(0.0f)));
  for (int64_t i = 0; i < mt.height; ++i) {
    Value row = zeroRow;
    for (int64_t j = 0; j < nv; ++j)
      row = vector::InsertStridedSliceOp::create(
          b, loc, acc[i * nv + j], row, ArrayRef<int64_t>{j * t.lanes},
          ArrayRef<int64_t>{1});
    block = vector::InsertOp::create(b, loc, row, block,
                                     ArrayRef<int64_t>{i});
  }
  return vector::TransferWriteOp::create(
             b, loc, block, tile, ValueRange{r, pc},
             ArrayRef<bool>{mt.inBounds, t.exactCols})
      .getResult();
}

Value KernelBuilder::microTiles(Value tile, Value panelsOfX, Value rowBase,
                                Value from, Value to, Value pc, Value col,
                                Value k0, Value k1, const MicroTile &mt) {
  auto loop = scf::ForOp::create(
      b, loc, from, to, idx(mt.height), ValueRange{tile},
      [&](OpBuilder &nb, Location, Value r, ValueRange args) {
        InsertHere inner(b, nb);
        SmallVector<Value> acc = accumulate(args[0], panelsOfX, rowBase, r,
                                            pc, col, k0, k1, mt);
        scf::YieldOp::create(b, loc, writeRows(args[0], acc, r, pc, mt));
      });
  noUnroll(loop);
  return loop.getResult(0);
}

/// The outermost of the sequential loops around `op` (up to the first
/// other op) that `input` does not depend on, or null.
scf::ForOp invariantLoop(Operation *op, Value input) {
  scf::ForOp outer;
  for (auto loop = dyn_cast_if_present<scf::ForOp>(op->getParentOp());
       loop && loop.isDefinedOutsideOfLoop(input);
       loop = dyn_cast_if_present<scf::ForOp>(loop->getParentOp()))
    outer = loop;
  return outer;
}

Value KernelBuilder::build(PackedConstants &packedOf) {
  Value input = op.getInput();
  auto inputType = cast<RankedTensorType>(input.getType());
  // Inside a parallel loop (an attention tile's products) the threads
  // already have their share and the rows stay one tile (below); a static
  // tile of them is packed once, before the sequential loops whose steps
  // all read the same rows (an attention tile's queries, for every key
  // tile). (Reading such a tile in place instead of packing it was no
  // faster on the attention block of scripts/bench_cpu.py, for the
  // probabilities, and slower for the queries, whose heads lie far apart.)
  int64_t rows = rowCount(inputType);
  bool oneTile = op->getParentOfType<scf::ForallOp>() &&
                 !ShapedType::isDynamic(rows) && rows > 0 &&
                 rows <= t.tileRows;
  scf::ForOp packBefore;
  if (oneTile)
    packBefore = invariantLoop(op, input);
  OpBuilder::InsertPoint here = b.saveInsertionPoint();
  if (packBefore)
    b.setInsertionPoint(packBefore);
  // [M, K]: leading dims fold into the rows (rowsOf).
  x = rowsOf(input);
  m = getValueOrCreateConstantIndexOp(b, loc,
                                      tensor::getMixedSize(b, loc, x, 0));
  Value packedOnce;
  if (packBefore)
    packedOnce = packRows(idx(0), m);
  b.restoreInsertionPoint(here);
  lanesValue = idx(t.lanes);
  if (t.scalable)
    lanesValue = arith::MulIOp::create(b, loc, lanesValue,
                                       vector::VectorScaleOp::create(b, loc));
  nrValue = t.scalable
                ? arith::MulIOp::create(b, loc, lanesValue, idx(t.vectors))
                      .getResult()
                : idx(t.nr());
  weights = weightSource(packedOf);
  bias = op.getBias();

  Value out = emptyTensor(b, loc, {getAsOpFoldResult(m), b.getIndexAttr(n)},
                          f32);
  // Rows per tile: MC, or fewer (whole micro-tiles) when the column tiles
  // and MC-row tiles together would be fewer than kMinTiles, so that a
  // short GEMM (a few tokens, a decode step's batch) still spreads over
  // the threads. Inside a parallel loop (an attention tile's products)
  // the threads already have their share: the rows stay whole, and their
  // packing does not depend on the tile.
  int64_t colTiles = llvm::divideCeil(n, t.tileCols);
  Value rowTile = idx(t.tileRows);
  if (colTiles < kMinTiles && !op->getParentOfType<scf::ForallOp>()) {
    auto ceilDiv = [&](Value x, int64_t y) {
      return b.createOrFold<arith::CeilDivSIOp>(loc, x, idx(y));
    };
    Value share = ceilDiv(m, llvm::divideCeil(kMinTiles, colTiles));
    Value whole = b.createOrFold<arith::MulIOp>(loc, ceilDiv(share, t.rows),
                                                idx(t.rows));
    rowTile = b.createOrFold<arith::MinSIOp>(
        loc, idx(t.tileRows),
        b.createOrFold<arith::MaxSIOp>(loc, whole, idx(t.rows)));
  }
  // Outside a parallel loop the micro-tiles read x in place where its
  // rows' cache lines do not collide (readsInPlace); else each tile packs
  // its rows.
  Type xElement = cast<RankedTensorType>(x.getType()).getElementType();
  bool packsRows =
      !packedOnce &&
      !readsInPlace(k * xElement.getIntOrFloatBitWidth() / 8, t.rows);
  // Columns per tile: NC, or fewer (whole panels, at least kMinTileCols,
  // four times that where each tile packs its rows) when the row tiles are
  // still too few: a GEMM of 80 rows makes 7 tiles of 12 rows, 4 for one
  // of two threads and 3 for the other.
  Value rowTiles = b.createOrFold<arith::CeilDivSIOp>(loc, m, rowTile);
  Value colTile = idx(t.tileCols);
  int64_t granule = t.colGranule();
  int64_t minCols = std::min<int64_t>(
      t.tileCols,
      llvm::divideCeil(kMinTileCols * (packsRows ? 4 : 1), granule) * granule);
  if (colTiles < kMinTiles && minCols < std::min(t.tileCols, n) &&
      !op->getParentOfType<scf::ForallOp>()) {
    auto ceilDiv = [&](Value x, Value y) {
      return b.createOrFold<arith::CeilDivSIOp>(loc, x, y);
    };
    Value wanted = ceilDiv(idx(kMinTiles), rowTiles);
    Value width = b.createOrFold<arith::MulIOp>(
        loc, ceilDiv(ceilDiv(idx(n), wanted), idx(granule)), idx(granule));
    colTile = b.createOrFold<arith::MinSIOp>(
        loc, idx(t.tileCols),
        b.createOrFold<arith::MaxSIOp>(loc, width, idx(minCols)));
  }
  // Column tiles outside row tiles: consecutive iterations (a thread's
  // share) reuse one column panel of the weights from the cache.
  SmallVector<OpFoldResult> ubs = {
      getAsOpFoldResult(
          b.createOrFold<arith::CeilDivSIOp>(loc, idx(n), colTile)),
      getAsOpFoldResult(rowTiles)};
  auto forall =
      scf::ForallOp::create(b, loc, ubs, ValueRange{out}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = forall.getBody();
    b.setInsertionPoint(body->getTerminator());
    Value m0 = arith::MulIOp::create(b, loc, body->getArgument(1), rowTile);
    Value n0 =
        arith::MulIOp::create(b, loc, body->getArgument(0), colTile);
    Value tileRows = minIndex(rowTile, arith::SubIOp::create(b, loc, m, m0));
    Value cols = minIndex(colTile,
                          arith::SubIOp::create(b, loc, idx(n), n0));
    OpFoldResult one = b.getIndexAttr(1);
    SmallVector<OpFoldResult> strides = {one, one};
    SmallVector<OpFoldResult> yOffsets = {m0, n0}, ySizes = {tileRows, cols};
    Value tile = tensor::ExtractSliceOp::create(
        b, loc, body->getArguments().back(), yOffsets, ySizes, strides);
    Value panelsOfX = packsRows ? packRows(m0, tileRows) : packedOnce;
    // Per panel, K in blocks of `kBlock` steps: a block's weights stay in
    // cache while every micro-tile of the tile's rows reads them.
    auto panels = scf::ForOp::create(
        b, loc, idx(0), cols, nrValue, ValueRange{tile},
        [&](OpBuilder &nb, Location, Value pc, ValueRange panelArgs) {
          InsertHere here(b, nb);
          Value col = arith::AddIOp::create(b, loc, n0, pc);
          auto kBlocks = scf::ForOp::create(
              b, loc, idx(0), idx(k), idx(t.kBlock), panelArgs,
              [&](OpBuilder &nb1, Location, Value k0, ValueRange kArgs) {
                InsertHere inK(b, nb1);
                Value k1 = minIndex(
                    arith::AddIOp::create(b, loc, k0, idx(t.kBlock)), idx(k));
                // Whole micro-tiles, then the rows past the last one (a
                // row tile's count is a multiple of MR but the last's)
                // in micro-tiles of kTailRows, which stay within a packed
                // panel of MR rows.
                Value y = kArgs[0];
                if (t.exactRows || t.rows <= kTailRows ||
                    t.rows % kTailRows != 0) {
                  y = microTiles(y, panelsOfX, m0, idx(0), tileRows, pc, col,
                                 k0, k1, MicroTile{t.rows, t.exactRows});
                } else {
                  Value whole = arith::SubIOp::create(
                      b, loc, tileRows,
                      arith::RemUIOp::create(b, loc, tileRows, idx(t.rows)));
                  y = microTiles(y, panelsOfX, m0, idx(0), whole, pc, col, k0,
                                 k1, MicroTile{t.rows, true});
                  y = microTiles(y, panelsOfX, m0, whole, tileRows, pc, col,
                                 k0, k1, MicroTile{kTailRows, false});
                }
                scf::YieldOp::create(b, loc, y);
              });
          noUnroll(kBlocks);
          scf::YieldOp::create(b, loc, kBlocks.getResults());
        });
    noUnroll(panels);
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, panels.getResult(0),
                                          body->getArguments().back(),
                                          yOffsets, ySizes, strides);
  }
  Value y = forall.getResult(0);
  if (inputType.getRank() == 1)
    y = tensor::CollapseShapeOp::create(b, loc, y,
                                        ArrayRef<ReassociationIndices>{{0, 1}});
  if (foldsRows(inputType)) {
    SmallVector<OpFoldResult> sizes = tensorSizes(b, loc, input);
    sizes.back() = b.getIndexAttr(n);
    SmallVector<int64_t> shape(inputType.getShape());
    shape.back() = n;
    y = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, f32), y,
        rowGroups(inputType.getRank()), sizes);
  }
  return castToType(b, loc, y, op.getType());
}

/// Erases a weight no other op reads: a constant, or a dequantize and
/// the constants it read.
void eraseUnusedWeight(RewriterBase &rewriter, Operation *weight) {
  if (!weight || !weight->use_empty() ||
      !isa<arith::ConstantOp, DequantizeOp>(weight))
    return;
  SmallVector<Operation *> operands;
  for (Value v : weight->getOperands())
    if (Operation *def = v.getDefiningOp())
      operands.push_back(def);
  rewriter.eraseOp(weight);
  for (Operation *def : operands)
    if (isa<arith::ConstantOp>(def) && def->use_empty())
      rewriter.eraseOp(def);
}

struct LinearKernelPass final
    : mnemo::impl::CPULinearKernelPassBase<LinearKernelPass> {
  using Base::Base;

  void runOnOperation() override {
    if (lanes <= 0 || vectors <= 0 || rows <= 0 || cacheBytes <= 0) {
      getOperation()->emitError("mnemo-cpu-linear-kernel needs positive "
                                "lanes, vectors, rows and cache-bytes");
      return signalPassFailure();
    }
    SmallVector<LinearOp> ops;
    getOperation()->walk([&](LinearOp op) {
      StringRef reason = unsupportedReason(op);
      if (reason.empty())
        ops.push_back(op);
      else if (report)
        op.emitRemark("CPU linear kernel: kept for the generic tiling: ")
            << reason;
    });
    IRRewriter rewriter(&getContext());
    PackedConstants packedOf;
    for (LinearOp op : ops) {
      // Narrow layers take fewer vectors per row (less padding).
      int64_t n = op.getOutFeatures();
      int64_t needed = llvm::divideCeil(n, lanes);
      Tiling t{lanes, std::min<int64_t>(vectors, needed), rows, 0, 0, 0,
               false, false};
      // Scalable vectors read weights (quantized codes too) as [K, N].
      t.scalable = scalable;
      // A K block of one panel's weights takes 64 KiB (at least 64 steps):
      // in the L2 cache with the tile's packed rows; on a 1024^3 GEMM on
      // one thread, 86% of the FMA peak against 83% with 32 KiB blocks
      // (the accumulators go through memory half as often). Scalable
      // vectors count on 256 bits.
      t.kBlock = std::max<int64_t>(
          64, 65536 / (t.nr() * (t.scalable ? 2 : 1) * 4) / 8 * 8);
      // A static row count keeps the full micro-tile height when the last
      // micro-tile's unused rows are few (under 1/16 of the rows: a 12-row
      // step does 24 FMAs per 14 loads, an 8-row one 16 per 10, and LLVM's
      // loop around them leaves the front end less room); else it picks a
      // height that divides it (all of it when it is smaller), so that no
      // micro-tile is partial.
      int64_t m = rowCount(op.getInput().getType());
      if (!ShapedType::isDynamic(m)) {
        int64_t unused = llvm::divideCeil(m, t.rows) * t.rows - m;
        if (m <= t.rows) {
          t.rows = m;
        } else if (unused * 16 <= m) {
          // The full height.
        } else {
          for (int64_t r : {t.rows, t.rows * 2 / 3, t.rows / 2, int64_t(4)})
            if (r > 0 && m % r == 0) {
              t.rows = r;
              break;
            }
        }
        t.exactRows = m % t.rows == 0;
      }
      t.exactCols = !t.scalable && n % t.nr() == 0;
      // A row tile's inputs (MC x K f32) stay within `cacheBytes`, between
      // one and 16 micro-tiles high; column tiles of about 1024 columns, for
      // each of which the tile packs its rows of x again (a 1024^3 GEMM on
      // one thread: 92.6% of the FMA peak against 86% with 512; the attention
      // block's 2048-column projections 2% faster than with 512 or 2048).
      int64_t fit = cacheBytes / (op.getInFeatures() * 4 * t.rows);
      t.tileRows = t.rows * std::clamp<int64_t>(fit, 1, 16);
      t.tileCols = t.colGranule() * std::max<int64_t>(1, 1024 / t.colGranule());
      rewriter.setInsertionPoint(op);
      Value y = KernelBuilder(rewriter, op, t).build(packedOf);
      Operation *weight = op.getWeight().getDefiningOp();
      rewriter.replaceOp(op, y);
      eraseUnusedWeight(rewriter, weight);
    }
  }
};

} // namespace

//===- TileAttention.cpp - FlashAttention tiling ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Tiles mnemo.attention into parallel (batch, KV head, query tile) blocks and
// a sequential loop over key/value tiles carrying the running (max, sum,
// acc) state of the online softmax:
//
//   m' = max(m, rowmax(S))          alpha = exp(m - m')
//   P  = exp(S - m')                l' = alpha l + rowsum(P)
//   acc' = alpha acc + P V          O = acc / l
//
// with S the scaled, capped and masked scores of one [G, Tq] x [Tk] tile. A
// sink starts the state at (m, l) = (sink, 1). Rows whose keys are all masked
// keep m = -inf; every exponent subtracts 0 instead, so they end with l = 0
// and produce zeros, as the reference decomposition does.
//
// K, V or a mask computed element by element from their indices alone (the
// paged cache's gather through the block table, its mask) are computed tile
// by tile where the loop loads them, so a decode step reads each sequence's
// pages directly instead of gathering, padding and copying them whole.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include <limits>

namespace mlir::mnemo {
#define GEN_PASS_DEF_TILEATTENTIONPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Builds the tiled form of one attention op.
class AttentionTiler {
public:
  AttentionTiler(RewriterBase &b, AttentionOp op, int64_t blockQ,
                 int64_t blockKV, bool fuseRope, bool groupInBlock,
                 bool transposeKeys, bool foldTransposes, bool maskEdgesOnly)
      : b(b), op(op), loc(op.getLoc()), ctx(op.getContext()), tq(blockQ),
        tk(blockKV), transposeKeys(transposeKeys),
        maskEdgesOnly(maskEdgesOnly),
        ct(computeType(op.getResult().getType().getElementType())) {
    q = op.getQuery();
    k = op.getKey();
    // Only the query's rope: a query tile is loaded once, a key tile once
    // per query tile, which would recompute the keys' sines and cosines
    // ceil(Sq / block-q) times (and make `forward`'s kernel differ from
    // `prefill`'s, whose keys also go to the cache).
    if (fuseRope)
      qRope = fusibleRope(q);
    if (foldTransposes)
      outTranspose = headsLastTranspose(op);
    group = op.getGroupSize();
    // Fewer query rows than a tile (a decode step's one token): the tile
    // takes just them, rather than padding them to block-q rows that would
    // all be computed.
    // A cast that only forgot a static row count (a paged decode step's
    // query) still tells it.
    int64_t rows = cast<RankedTensorType>(q.getType()).getDimSize(2);
    if (auto cast = q.getDefiningOp<tensor::CastOp>();
        cast && ShapedType::isDynamic(rows))
      rows = cast.getSource().getType().getDimSize(2);
    if (!ShapedType::isDynamic(rows) && rows < tq)
      tq = rows;
    // A GQA group's heads share each key tile, packed as group * tq rows:
    // with groupInBlock (the CPU's register tiles) the packed tile keeps
    // block-q rows (an MQA layer's eight heads would otherwise make it
    // eight times as tall).
    if (groupInBlock && group > 1 && tq * group > blockQ)
      tq = std::max<int64_t>(1, blockQ / group);
    // Keys are worth transposing once when several query tiles read each
    // key tile: not for one query tile (a decode step reads each once), nor
    // under a window with earlier positions (a past longer than the window
    // has keys no query sees, whose transposes would be wasted).
    this->transposeKeys = transposeKeys &&
                          !(op.getWindowSize() && op.getQOffset()) &&
                          (ShapedType::isDynamic(rows) || rows > tq);
    d = cast<RankedTensorType>(q.getType()).getDimSize(3);
    dv = cast<RankedTensorType>(op.getValue().getType()).getDimSize(3);
    id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    rows4 = AffineMap::getMultiDimIdentityMap(4, ctx).getMajorSubMap(3);
    rowId = AffineMap::getMultiDimIdentityMap(3, ctx);
  }

  Value build();

  /// The [B, H, S, D] -> [B, S, H, D] transpose of the result that build()
  /// wrote its tiles through (its result is what build() returned), or null.
  linalg::TransposeOp foldedTranspose() const { return outTranspose; }

private:
  /// The result's only user when it is a transpose to [B, S, H, D] (an
  /// ONNX Transpose before the output projection): the tiles are written
  /// in that layout instead.
  static linalg::TransposeOp headsLastTranspose(AttentionOp op) {
    Value r = op.getResult();
    if (!r.hasOneUse())
      return {};
    auto t = dyn_cast<linalg::TransposeOp>(*r.getUsers().begin());
    if (!t || t.getInput() != r ||
        t.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3})
      return {};
    return t;
  }

  /// A rope producing `v` that may be applied per tile instead. Dynamic-NTK
  /// scaling derives its base from the largest position of a whole row,
  /// which a tile does not see, so such ropes stay whole.
  static RopeOp fusibleRope(Value v) {
    auto rope = v.getDefiningOp<RopeOp>();
    if (!rope || !rope->hasOneUse() ||
        rope.getScalingOrDefault().getKind() == RopeScalingKind::Dynamic)
      return RopeOp();
    return rope;
  }

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value ceilDiv(Value x, int64_t y) {
    return arith::CeilDivSIOp::create(b, loc, x, idx(y));
  }

  /// Pads `dim` of `v` with `pad` up to `length` elements.
  Value padDim(Value v, unsigned dim, Value length, Attribute pad);
  /// The tile of `v` at `offsets` with static `sizes` (unit strides).
  Value slice(Value v, ArrayRef<OpFoldResult> offsets,
              ArrayRef<int64_t> sizes);
  /// The tile of `source` at `offsets`: computed there when `source` is
  /// index-generated, else sliced from `padded` (its padded form, which
  /// build() leaves unpadded for an index-generated source).
  Value tileOf(Value source, Value padded, ArrayRef<OpFoldResult> offsets,
               ArrayRef<int64_t> sizes);
  /// Applies `rope` (same attributes) to `tile` at positions `posTile`.
  Value ropeTile(RopeOp rope, Value tile, Value posTile);
  /// The positions tile of `rope` for sequence offset `start`, length `n`.
  Value positionsTile(Value positions, Value batch, Value start, int64_t n);

  /// Generic over `shape` with the given inputs/maps and output init.
  Value generic(ArrayRef<Value> inputs, ArrayRef<AffineMap> maps, Value init,
                ArrayRef<unsigned> reductions,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body);

  /// The padded keys [B, Hkv, Skv, D] as blocks [B, Hkv, Skv / tk, D, tk].
  Value keyBlocks();
  /// S = Q K^T of one tile, from the key tile [1, 1, tk, D] or, with
  /// `transposed`, from its block [1, 1, D, tk].
  Value scores(Value qTile, Value kTile, bool transposed);
  /// With `hide` false, the positions' masks (causal, window, padded keys)
  /// are left out: for a tile where every row sees every key.
  Value maskScores(Value s, Value maskTile, Value q0, Value k0,
                   bool hide = true);
  /// Whether some key of the tile at k0 is hidden from some row of the
  /// query tile at q0 (i1).
  Value hidesKeys(Value q0, Value k0);

  RewriterBase &b;
  AttentionOp op;
  Location loc;
  MLIRContext *ctx;
  int64_t tq, tk;
  bool transposeKeys;
  bool maskEdgesOnly;
  linalg::TransposeOp outTranspose;
  FloatType ct;
  Value q, k;
  RopeOp qRope;
  int64_t group, d, dv;
  // Maps over [1, G, Tq, X] tiles: identity, and the row (z, g, i) part.
  AffineMap id4, rows4, rowId;
  // Padded operands and run-time sizes, set by build().
  Value qPadded, kPadded, vPadded, maskPadded, qPos, sq, skv, offset;
};

Value AttentionTiler::padDim(Value v, unsigned dim, Value length,
                             Attribute pad) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> low(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> high(type.getRank(), b.getIndexAttr(0));
  high[dim] = sub(length, tensor::DimOp::create(b, loc, v, dim));
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = ShapedType::kDynamic;
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value padValue = arith::ConstantOp::create(b, loc, cast<TypedAttr>(pad));
  return tensor::PadOp::create(b, loc, resultType, v, low, high, padValue);
}

Value AttentionTiler::tileOf(Value source, Value padded,
                             ArrayRef<OpFoldResult> offsets,
                             ArrayRef<int64_t> sizes) {
  linalg::GenericOp g = indexGenerated(source);
  if (!g)
    return slice(padded, offsets, sizes);
  // Element i of the tile is element offset + i of the source; indices
  // past the source's end (the padding, masked) read its last element, so
  // every read stays in bounds. A dim the tile covers whole from 0 (a
  // head's features) needs neither: its index stays the loop's own, so
  // that reads along it are contiguous.
  Value full = g.getDpsInitOperand(0)->get();
  auto fullType = cast<RankedTensorType>(full.getType());
  SmallVector<Value> starts, last;
  SmallVector<bool> whole;
  for (auto [d, offset] : llvm::enumerate(offsets)) {
    whole.push_back(isConstantIntValue(offset, 0) &&
                    fullType.getDimSize(d) == sizes[d]);
    starts.push_back(getValueOrCreateConstantIndexOp(b, loc, offset));
    last.push_back(sub(tensor::DimOp::create(b, loc, full, d), idx(1)));
  }
  auto type = cast<RankedTensorType>(source.getType());
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  Block *body = g.getBody();
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, ValueRange{init},
             g.getIndexingMapsArray(), g.getIteratorTypesArray(),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               IRMapping map;
               map.map(body->getArgument(0), args[0]);
               for (Operation &op : body->without_terminator()) {
                 if (auto index = dyn_cast<linalg::IndexOp>(op)) {
                   uint64_t d = index.getDim();
                   if (whole[d]) {
                     nb.clone(op, map);
                     continue;
                   }
                   Value at = arith::AddIOp::create(
                       nb, nl, linalg::IndexOp::create(nb, nl, d), starts[d]);
                   map.map(index.getResult(),
                           arith::MinSIOp::create(nb, nl, at, last[d]));
                   continue;
                 }
                 nb.clone(op, map);
               }
               linalg::YieldOp::create(
                   nb, nl,
                   map.lookupOrDefault(body->getTerminator()->getOperand(0)));
             })
      .getResult(0);
}

Value AttentionTiler::slice(Value v, ArrayRef<OpFoldResult> offsets,
                            ArrayRef<int64_t> sizes) {
  SmallVector<OpFoldResult> sizeAttrs, strides;
  for (int64_t s : sizes) {
    sizeAttrs.push_back(b.getIndexAttr(s));
    strides.push_back(b.getIndexAttr(1));
  }
  auto type = RankedTensorType::get(
      sizes, cast<RankedTensorType>(v.getType()).getElementType());
  return tensor::ExtractSliceOp::create(b, loc, type, v, offsets, sizeAttrs,
                                        strides);
}

Value AttentionTiler::positionsTile(Value positions, Value batch, Value start,
                                    int64_t n) {
  auto type = cast<RankedTensorType>(positions.getType());
  if (type.getRank() == 1)
    return slice(positions, {start}, {n});
  Value row = type.getDimSize(0) == 1 ? idx(0) : batch;
  return slice(positions, {row, start}, {1, n});
}

Value AttentionTiler::ropeTile(RopeOp rope, Value tile, Value posTile) {
  return RopeOp::create(b, loc, tile.getType(), tile, posTile,
                        rope.getThetaAttr(), rope.getInterleavedAttr(),
                        rope.getRotaryDimAttr(), rope.getScalingAttr());
}

Value AttentionTiler::generic(
    ArrayRef<Value> inputs, ArrayRef<AffineMap> maps, Value init,
    ArrayRef<unsigned> reductions,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  return yieldingGeneric(b, loc, inputs, maps, init, reductions, body);
}

Value AttentionTiler::keyBlocks() {
  auto type = cast<RankedTensorType>(kPadded.getType());
  // Static sizes stay static (the expanded type must agree with them).
  OpFoldResult batch = tensor::getMixedSize(b, loc, kPadded, 0);
  OpFoldResult tiles =
      type.isDynamicDim(2)
          ? OpFoldResult(ceilDiv(tensor::DimOp::create(b, loc, kPadded, 2), tk))
          : OpFoldResult(b.getIndexAttr(type.getDimSize(2) / tk));
  int64_t hkv = type.getDimSize(1);
  auto blocksOf = [&](int64_t x, int64_t y) {
    return SmallVector<OpFoldResult>{batch, b.getIndexAttr(hkv), tiles,
                                     b.getIndexAttr(x), b.getIndexAttr(y)};
  };
  SmallVector<OpFoldResult> rows = blocksOf(tk, d);
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamic;
  dispatchIndexOpFoldResults(rows, dynamic, shape);
  Value split = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), kPadded,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4}}, rows);
  Value init = emptyTensor(b, loc, blocksOf(d, tk), type.getElementType());
  return linalg::TransposeOp::create(b, loc, split, init,
                                     ArrayRef<int64_t>{0, 1, 2, 4, 3})
      .getResult()[0];
}

/// S[0,g,i,j] = sum_d Q[0,g,i,d] K[0,0,j,d], over loops (z, g, i, d, j): the
/// key tile is transposed (here, or once for all tiles by keyBlocks) so that
/// the innermost loop runs along contiguous keys, and the reduction over d
/// is not innermost.
Value AttentionTiler::scores(Value qTile, Value kTile, bool transposed) {
  Value kT = kTile;
  if (!transposed) {
    kT = emptyTensor(b, loc,
                     {b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(d),
                      b.getIndexAttr(tk)},
                     cast<RankedTensorType>(kTile.getType()).getElementType());
    kT = linalg::TransposeOp::create(b, loc, kTile, kT,
                                     ArrayRef<int64_t>{0, 1, 3, 2})
             .getResult()[0];
  }
  AffineExpr z, g, i, e, j;
  bindDims(ctx, z, g, i, e, j);
  AffineExpr zero = getAffineConstantExpr(0, ctx);
  Value init = filledTensor(
      b, loc, {b.getIndexAttr(1), b.getIndexAttr(group), b.getIndexAttr(tq),
               b.getIndexAttr(tk)},
      ct, 0.0);
  return generic({qTile, kT},
                 {AffineMap::get(5, 0, {z, g, i, e}, ctx),
                  AffineMap::get(5, 0, {z, zero, e, j}, ctx),
                  AffineMap::get(5, 0, {z, g, i, j}, ctx)},
                 init, {3}, [&](OpBuilder &nb, Location nl, ValueRange a) {
                   Value p = arith::MulFOp::create(nb, nl,
                                                   castFloat(nb, nl, a[0], ct),
                                                   castFloat(nb, nl, a[1], ct));
                   return arith::AddFOp::create(nb, nl, a[2], p).getResult();
                 });
}

/// Scale, softcap, additive mask, and -inf for padded keys and for keys the
/// causal or window mask hides from row i at absolute position q0 + i + off.
Value AttentionTiler::hidesKeys(Value q0, Value k0) {
  // Keys k0 .. k0 + tk - 1; rows at q0 + off .. q0 + tq - 1 + off (padded
  // rows included: they are dropped, so hiding more for them is harmless).
  Value lastKey = add(k0, idx(tk - 1));
  Value firstRow = add(q0, offset);
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  Value hides = cmp(arith::CmpIPredicate::sge, lastKey, skv);
  if (op.getCausal())
    hides = arith::OrIOp::create(
        b, loc, hides, cmp(arith::CmpIPredicate::sgt, lastKey, firstRow));
  if (std::optional<int64_t> w = op.getWindowSize())
    hides = arith::OrIOp::create(
        b, loc, hides,
        cmp(arith::CmpIPredicate::sge, sub(add(firstRow, idx(tq - 1)), k0),
            idx(*w)));
  return hides;
}

Value AttentionTiler::maskScores(Value s, Value maskTile, Value q0, Value k0,
                                 bool hide) {
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  if (maskTile) {
    auto maskType = cast<RankedTensorType>(maskTile.getType());
    SmallVector<AffineExpr> exprs;
    unsigned lead = 4 - maskType.getRank();
    for (int64_t m = 0; m < maskType.getRank(); ++m)
      exprs.push_back(maskType.getDimSize(m) == 1
                          ? getAffineConstantExpr(0, ctx)
                          : getAffineDimExpr(lead + m, ctx));
    inputs.push_back(maskTile);
    maps.push_back(AffineMap::get(4, 0, exprs, ctx));
  }
  maps.push_back(id);
  double scale = op.getEffectiveScale();
  std::optional<double> softcap = op.getSoftcapValue();
  std::optional<int64_t> window = op.getWindowSize();
  bool causal = op.getCausal();
  Value qBase = add(q0, offset);
  Value keys = skv;
  return generic(
      inputs, maps, s, {}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value v = arith::MulFOp::create(nb, nl, a.back(),
                                        floatConst(nb, nl, ct, scale));
        if (softcap) {
          Value cap = floatConst(nb, nl, ct, *softcap);
          v = arith::MulFOp::create(
              nb, nl,
              math::TanhOp::create(nb, nl,
                                   arith::DivFOp::create(nb, nl, v, cap)),
              cap);
        }
        if (maskTile)
          v = arith::AddFOp::create(nb, nl, v, castFloat(nb, nl, a[0], ct));
        if (!hide)
          return v;
        Value kPos = arith::AddIOp::create(
            nb, nl, k0, linalg::IndexOp::create(nb, nl, 3));
        Value hidden = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::sge, kPos, keys);
        if (causal || window) {
          Value qPos = arith::AddIOp::create(
              nb, nl, qBase, linalg::IndexOp::create(nb, nl, 2));
          if (causal)
            hidden = arith::OrIOp::create(
                nb, nl, hidden,
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sgt, kPos,
                                      qPos));
          if (window)
            hidden = arith::OrIOp::create(
                nb, nl, hidden,
                arith::CmpIOp::create(
                    nb, nl, arith::CmpIPredicate::sge,
                    arith::SubIOp::create(nb, nl, qPos, kPos),
                    arith::ConstantIndexOp::create(nb, nl, *window)));
        }
        return arith::SelectOp::create(nb, nl, hidden,
                                       floatConst(nb, nl, ct, kNegInf), v)
            .getResult();
      });
}

Value AttentionTiler::build() {
  Value v = op.getValue();
  Type elem = op.getResult().getType().getElementType();
  Value qSrc = qRope ? qRope.getInput() : q;
  // Sizes come from the rope's input when the query's rope is fused, so
  // that the whole-tensor rope dies.
  Value batch = tensor::DimOp::create(b, loc, qSrc, 0);
  sq = tensor::DimOp::create(b, loc, qSrc, 2);
  skv = tensor::DimOp::create(b, loc, k, 2);
  offset = op.getQOffset() ? op.getQOffset() : idx(0);
  int64_t hkv = cast<RankedTensorType>(k.getType()).getDimSize(1);

  // Pad the sequences to tile multiples once; every tile is then static.
  Value numQTiles = ceilDiv(sq, tq);
  Value sqPadded = mul(numQTiles, idx(tq));
  Value skvPadded = mul(ceilDiv(skv, tk), idx(tk));
  auto zeroOf = [&](Value t) -> Attribute {
    Type e = cast<RankedTensorType>(t.getType()).getElementType();
    return isa<FloatType>(e) ? Attribute(b.getFloatAttr(e, 0.0))
                             : Attribute(b.getIntegerAttr(e, 0));
  };
  qPadded = padDim(qSrc, 2, sqPadded, zeroOf(qSrc));
  // An index-generated K, V or mask is never padded: its tiles are computed
  // where they are loaded (tileOf), so its "padded" form is itself.
  auto padKeys = [&](Value t, unsigned dim) {
    return indexGenerated(t) ? t : padDim(t, dim, skvPadded, zeroOf(t));
  };
  kPadded = padKeys(k, 2);
  vPadded = padKeys(v, 2);
  // Each key tile is read by every query tile that sees it: transposed
  // once here, not in each of those steps (see the constructor).
  Value kBlocks;
  if (transposeKeys && !indexGenerated(k))
    kBlocks = keyBlocks();
  if (qRope) {
    Value p = qRope.getPositions();
    unsigned last = cast<RankedTensorType>(p.getType()).getRank() - 1;
    qPos = padDim(p, last, sqPadded, zeroOf(p));
  }
  if (Value mask = op.getMask()) {
    auto type = cast<RankedTensorType>(mask.getType());
    unsigned r = type.getRank();
    maskPadded = mask;
    if (!indexGenerated(mask)) {
      if (type.getDimSize(r - 2) != 1)
        maskPadded = padDim(maskPadded, r - 2, sqPadded, zeroOf(mask));
      if (type.getDimSize(r - 1) != 1)
        maskPadded = padDim(maskPadded, r - 1, skvPadded, zeroOf(mask));
    }
  }

  // [B, Hq, S, Dv], or [B, S, Hq, Dv] through the transpose.
  SmallVector<OpFoldResult> outSizes = {
      OpFoldResult(batch), b.getIndexAttr(group * hkv), OpFoldResult(sqPadded),
      b.getIndexAttr(dv)};
  if (outTranspose)
    std::swap(outSizes[1], outSizes[2]);
  Value outInit = emptyTensor(b, loc, outSizes, elem);
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{batch, b.getIndexAttr(hkv), numQTiles},
      ValueRange{outInit}, std::nullopt);
  Block *body = forall.getBody();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(body->getTerminator());
  Value bi = body->getArgument(0), hi = body->getArgument(1),
        qt = body->getArgument(2);
  // Causal query tiles see more keys the later they sit: the forall
  // visits them last to first, so that threads claiming its iterations in
  // order end on the short ones.
  if (op.getCausal())
    qt = sub(sub(numQTiles, idx(1)), qt);
  Value q0 = mul(qt, idx(tq));
  Value head0 = mul(hi, idx(group));

  Value qTile = slice(qPadded, {bi, head0, q0, b.getIndexAttr(0)},
                      {1, group, tq, d});
  if (qRope)
    qTile = ropeTile(qRope, qTile, positionsTile(qPos, bi, q0, tq));

  // Key tiles that some row of this query tile can see: rows sit at
  // q0 + off .. min(q0 + tq, sq) - 1 + off.
  Value kvLo = idx(0), kvHi = skv;
  Value firstRow = add(q0, offset);
  if (op.getCausal()) {
    Value lastRow = add(
        sub(arith::MinSIOp::create(b, loc, add(q0, idx(tq)), sq), idx(1)),
        offset);
    kvHi = arith::MaxSIOp::create(
        b, loc, idx(0),
        arith::MinSIOp::create(b, loc, skv, add(lastRow, idx(1))));
  }
  if (std::optional<int64_t> w = op.getWindowSize())
    kvLo = arith::MaxSIOp::create(b, loc, idx(0),
                                  add(sub(firstRow, idx(*w)), idx(1)));
  Value tileLo = arith::DivSIOp::create(b, loc, kvLo, idx(tk));
  Value tileHi = ceilDiv(kvHi, tk);

  // Initial state; a sink enters as (m, l) = (sink, 1).
  SmallVector<OpFoldResult> rowSizes = {b.getIndexAttr(1),
                                        b.getIndexAttr(group),
                                        b.getIndexAttr(tq)};
  Value m0, l0;
  if (Value sink = op.getSink()) {
    Value sinkTile = slice(sink, {head0}, {group});
    m0 = generic({sinkTile}, {AffineMap::get(3, 0, getAffineDimExpr(1, ctx)),
                             rowId},
                 emptyTensor(b, loc, rowSizes, ct), {},
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   return castFloat(nb, nl, a[0], ct);
                 });
    l0 = filledTensor(b, loc, rowSizes, ct, 1.0);
  } else {
    m0 = filledTensor(b, loc, rowSizes, ct, kNegInf);
    l0 = filledTensor(b, loc, rowSizes, ct, 0.0);
  }
  SmallVector<OpFoldResult> accSizes = {b.getIndexAttr(1),
                                        b.getIndexAttr(group),
                                        b.getIndexAttr(tq), b.getIndexAttr(dv)};
  Value acc0 = filledTensor(b, loc, accSizes, ct, 0.0);

  auto loop = scf::ForOp::create(b, loc, tileLo, tileHi, idx(1),
                                 ValueRange{m0, l0, acc0});
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    Value m = loop.getRegionIterArg(0), l = loop.getRegionIterArg(1),
          acc = loop.getRegionIterArg(2);
    Value k0 = mul(kt, idx(tk));
    Value kTile;
    if (kBlocks) {
      // The block [1, 1, 1, D, tk] without its tile dim.
      OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
      kTile = tensor::ExtractSliceOp::create(
          b, loc,
          RankedTensorType::get({1, 1, d, tk}, cast<RankedTensorType>(
                                                   kBlocks.getType())
                                                   .getElementType()),
          kBlocks, ArrayRef<OpFoldResult>{bi, hi, kt, zero, zero},
          ArrayRef<OpFoldResult>{one, one, one, b.getIndexAttr(d),
                                 b.getIndexAttr(tk)},
          ArrayRef<OpFoldResult>{one, one, one, one, one});
    } else {
      kTile =
          tileOf(k, kPadded, {bi, hi, k0, b.getIndexAttr(0)}, {1, 1, tk, d});
    }
    Value vTile = tileOf(op.getValue(), vPadded,
                         {bi, hi, k0, b.getIndexAttr(0)}, {1, 1, tk, dv});
    Value maskTile;
    if (maskPadded) {
      auto type = cast<RankedTensorType>(op.getMask().getType());
      unsigned lead = 4 - type.getRank();
      SmallVector<OpFoldResult> offsets;
      SmallVector<int64_t> sizes;
      Value full[4] = {bi, head0, q0, k0};
      int64_t tileSize[4] = {1, group, tq, tk};
      for (int64_t r = 0; r < type.getRank(); ++r) {
        bool bcast = type.getDimSize(r) == 1;
        offsets.push_back(bcast ? OpFoldResult(b.getIndexAttr(0))
                                : OpFoldResult(full[lead + r]));
        sizes.push_back(bcast ? 1 : tileSize[lead + r]);
      }
      maskTile = tileOf(op.getMask(), maskPadded, offsets, sizes);
    }

    Value s = scores(qTile, kTile, bool(kBlocks));
    if (maskEdgesOnly) {
      // Most tiles of a causal or windowed attention hide no key from any
      // row: they skip the positions' masks (index vectors, compares and
      // selects on every score).
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{s.getType()},
                                    hidesKeys(q0, k0), /*withElse=*/true);
      for (bool hide : {true, false}) {
        OpBuilder::InsertionGuard branchGuard(b);
        b.setInsertionPointToStart(hide ? ifOp.thenBlock() : ifOp.elseBlock());
        scf::YieldOp::create(b, loc,
                             maskScores(s, maskTile, q0, k0, hide));
      }
      s = ifOp.getResult(0);
    } else {
      s = maskScores(s, maskTile, q0, k0);
    }
    auto safe = [&](OpBuilder &nb, Location nl, Value x) -> Value {
      Value isNegInf = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                             x, floatConst(nb, nl, ct, kNegInf));
      return arith::SelectOp::create(nb, nl, isNegInf,
                                     floatConst(nb, nl, ct, 0.0), x);
    };
    // The state is updated in place (each new value is written over the
    // old one's tensor) so that bufferization keeps one buffer per carried
    // value: every read of the old m happens before m is overwritten.
    // r = rowmax(S)
    Value rowMax = generic({s}, {id4, rows4},
                           filledTensor(b, loc, rowSizes, ct, kNegInf), {3},
                           [&](OpBuilder &nb, Location nl, ValueRange a) {
                             return arith::MaximumFOp::create(nb, nl, a[0], a[1])
                                 .getResult();
                           });
    // alpha = exp(m - safe(max(m, r)))
    Value alpha = generic(
        {m, rowMax}, {rowId, rowId, rowId}, emptyTensor(b, loc, rowSizes, ct),
        {}, [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value mNew = arith::MaximumFOp::create(nb, nl, a[0], a[1]);
          return math::ExpOp::create(
                     nb, nl,
                     arith::SubFOp::create(nb, nl, a[0], safe(nb, nl, mNew)))
              .getResult();
        });
    // m' = max(m, r), over m
    Value mNew = generic({rowMax}, {rowId, rowId}, m, {},
                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                           return arith::MaximumFOp::create(nb, nl, a[1], a[0])
                               .getResult();
                         });
    // P = exp(S - safe(m')), over S
    Value p = generic({mNew}, {rows4, id4}, s, {},
                      [&](OpBuilder &nb, Location nl, ValueRange a) {
                        return math::ExpOp::create(
                                   nb, nl,
                                   arith::SubFOp::create(nb, nl, a[1],
                                                         safe(nb, nl, a[0])))
                            .getResult();
                      });
    // l' = alpha l + rowsum(P), over l
    Value lScaled = generic({alpha}, {rowId, rowId}, l, {},
                            [&](OpBuilder &nb, Location nl, ValueRange a) {
                              return arith::MulFOp::create(nb, nl, a[1], a[0])
                                  .getResult();
                            });
    Value lNew = generic({p}, {id4, rows4}, lScaled, {3},
                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                           return arith::AddFOp::create(nb, nl, a[1], a[0])
                               .getResult();
                         });
    // acc' = alpha acc + P V, over acc   (loops z, g, i, j, e: the innermost
    // loop runs along contiguous value features)
    Value accScaled = generic({alpha}, {rows4, id4}, acc, {},
                              [&](OpBuilder &nb, Location nl, ValueRange a) {
                                return arith::MulFOp::create(nb, nl, a[1], a[0])
                                    .getResult();
                              });
    AffineExpr z, g, i, j, e;
    bindDims(ctx, z, g, i, j, e);
    AffineExpr zero = getAffineConstantExpr(0, ctx);
    Value accNew = generic(
        {p, vTile},
        {AffineMap::get(5, 0, {z, g, i, j}, ctx),
         AffineMap::get(5, 0, {z, zero, j, e}, ctx),
         AffineMap::get(5, 0, {z, g, i, e}, ctx)},
        accScaled, {3}, [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value prod = arith::MulFOp::create(nb, nl, a[0],
                                             castFloat(nb, nl, a[1], ct));
          return arith::AddFOp::create(nb, nl, a[2], prod).getResult();
        });
    scf::YieldOp::create(b, loc, ValueRange{mNew, lNew, accNew});
  }

  // O = acc / l, zero for rows with nothing visible; [1, tq, G, Dv]
  // through the transpose.
  SmallVector<OpFoldResult> tileSizes = accSizes;
  AffineMap outMap = id4;
  if (outTranspose) {
    std::swap(tileSizes[1], tileSizes[2]);
    outMap = AffineMap::getPermutationMap(ArrayRef<unsigned>{0, 2, 1, 3}, ctx);
  }
  Value outTile = generic(
      {loop.getResult(2), loop.getResult(1)}, {id4, rows4, outMap},
      emptyTensor(b, loc, tileSizes, elem), {},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value zero = floatConst(nb, nl, ct, 0.0);
        Value empty = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            a[1], zero);
        Value r = arith::SelectOp::create(
            nb, nl, empty, zero, arith::DivFOp::create(nb, nl, a[0], a[1]));
        return castFloat(nb, nl, r, elem);
      });

  b.setInsertionPointToStart(forall.getTerminator().getBody());
  SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
  SmallVector<OpFoldResult> tileOffsets = {bi, head0, q0, b.getIndexAttr(0)};
  if (outTranspose)
    std::swap(tileOffsets[1], tileOffsets[2]);
  tensor::ParallelInsertSliceOp::create(b, loc, outTile, body->getArgument(3),
                                        tileOffsets, tileSizes, ones);

  b.setInsertionPointAfter(forall);
  SmallVector<OpFoldResult> resultSizes = {
      OpFoldResult(batch), b.getIndexAttr(group * hkv), OpFoldResult(sq),
      b.getIndexAttr(dv)};
  if (outTranspose)
    std::swap(resultSizes[1], resultSizes[2]);
  SmallVector<OpFoldResult> zeros(4, b.getIndexAttr(0));
  Value result = tensor::ExtractSliceOp::create(
      b, loc, forall.getResult(0), zeros, resultSizes, ones);
  return castToType(b, loc, result,
                    outTranspose ? outTranspose.getResult()[0].getType()
                                 : op.getResult().getType());
}

struct TileAttentionPass final
    : mnemo::impl::TileAttentionPassBase<TileAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockQ <= 0 || blockKV <= 0) {
      getOperation()->emitError("mnemo-tile-attention needs positive tile "
                                "sizes, got block-q=")
          << static_cast<int64_t>(blockQ)
          << " block-kv=" << static_cast<int64_t>(blockKV);
      return signalPassFailure();
    }
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops) {
      rewriter.setInsertionPoint(op);
      AttentionTiler tiler(rewriter, op, blockQ, blockKV, fuseRope,
                           groupInBlock, transposeKeys, foldTransposes,
                           maskEdgesOnly);
      Value result = tiler.build();
      auto rope = op.getQuery().getDefiningOp<RopeOp>();
      if (linalg::TransposeOp t = tiler.foldedTranspose()) {
        rewriter.replaceOp(t, result);
        rewriter.eraseOp(op);
      } else {
        rewriter.replaceOp(op, result);
      }
      // A query rope applied per tile is dead now.
      if (rope && rope->use_empty())
        rewriter.eraseOp(rope);
    }
  }
};

} // namespace

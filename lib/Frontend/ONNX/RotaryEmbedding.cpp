//===- RotaryEmbedding.cpp - RotaryEmbedding as mnemo.rope_tables ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ai.onnx RotaryEmbedding-23 (input, cos_cache, sin_cache[, position_ids])
// and com.microsoft RotaryEmbedding (input, position_ids, cos_cache,
// sin_cache) become one mnemo.rope_tables:
// * input [B, H, S, D], or [B, S, H*D] split by `num_heads` (heads inferred
//   from the cache width when the attribute is absent, as ORT does);
// * the half-width caches [P, r/2] are gathered at position_ids [B, S] (a
//   position outside the cache reads row 0 rather than memory past it), or
//   are [B, S, r/2] (or [1, S, r/2], shared by the batch) already; they are widened to the full rotary width r as
//   the pairing reads them (halves repeated, or each entry twice when
//   `interleaved`);
// * rotary_embedding_dim r (0 or absent: D); features past r pass through.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

/// Full-width table [B, S, r] from a half-width cache: [P, r/2] gathered at
/// `positions` [B, S], or [B, S, r/2] when `positions` is null.
Value mlir::mnemo::onnx_import::ropeTable(OpBuilder &b, Location loc, Value cache, Value positions,
                Value like, int64_t r, bool interleaved) {
  auto cacheType = cast<RankedTensorType>(cache.getType());
  SmallVector<OpFoldResult> x = builders::tensorSizes(b, loc, like);
  Value init = builders::emptyTensor(b, loc, {x[0], x[2], b.getIndexAttr(r)},
                                     cacheType.getElementType());
  auto id = AffineMap::getMultiDimIdentityMap(3, b.getContext());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, init,
             ArrayRef<AffineMap>{id}, builders::iterators(3),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               auto cIdx = [&](int64_t v) -> Value {
                 return arith::ConstantIndexOp::create(nb, nl, v);
               };
               Value bi = linalg::IndexOp::create(nb, nl, 0);
               Value si = linalg::IndexOp::create(nb, nl, 1);
               Value d = linalg::IndexOp::create(nb, nl, 2);
               Value k = interleaved
                             ? arith::DivUIOp::create(nb, nl, d, cIdx(2))
                                   .getResult()
                             : arith::RemUIOp::create(nb, nl, d, cIdx(r / 2))
                                   .getResult();
               SmallVector<Value> at;
               if (positions) {
                 Value p = tensor::ExtractOp::create(nb, nl, positions,
                                                     ValueRange{bi, si});
                 p = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), p);
                 Value rows = tensor::DimOp::create(nb, nl, cache, 0);
                 Value valid = arith::CmpIOp::create(
                     nb, nl, arith::CmpIPredicate::ult, p, rows);
                 at = {arith::SelectOp::create(nb, nl, valid, p, cIdx(0)), k};
               } else {
                 // [1, S, r/2] serves every batch entry.
                 Value row = cacheType.getDimSize(0) == 1 ? cIdx(0) : bi;
                 at = {row, si, k};
               }
               linalg::YieldOp::create(
                   nb, nl,
                   tensor::ExtractOp::create(nb, nl, cache, at).getResult());
             })
      .getResult(0);
}

namespace {

/// Positions offset + s for every batch entry, [B, S] like `like`'s B, S.
Value offsetPositions(OpBuilder &b, Location loc, Value offset, Value like) {
  SmallVector<OpFoldResult> x = builders::tensorSizes(b, loc, like);
  Type i64 = b.getI64Type();
  Value init = builders::emptyTensor(b, loc, {x[0], x[2]}, i64);
  auto id = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{}, init,
             ArrayRef<AffineMap>{id}, builders::iterators(2),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
               Value o = tensor::ExtractOp::create(nb, nl, offset,
                                                   ValueRange{zero});
               if (o.getType() != i64)
                 o = arith::ExtSIOp::create(nb, nl, i64, o);
               Value s = arith::IndexCastOp::create(
                   nb, nl, i64, linalg::IndexOp::create(nb, nl, 1));
               linalg::YieldOp::create(
                   nb, nl, arith::AddIOp::create(nb, nl, o, s).getResult());
             })
      .getResult(0);
}

/// Shared by both domains once the inputs are known.
LogicalResult rotary(NodeContext &ctx, unsigned xIn, unsigned cosIn,
                     unsigned sinIn, std::optional<unsigned> posIn) {
  FailureOr<Value> x = ctx.input(xIn), cos = ctx.input(cosIn),
                   sin = ctx.input(sinIn);
  if (failed(x) || failed(cos) || failed(sin))
    return failure();
  Value positions;
  if (posIn && ctx.hasInput(*posIn)) {
    FailureOr<Value> p = ctx.input(*posIn);
    if (failed(p))
      return failure();
    positions = *p;
    auto pt = cast<RankedTensorType>(positions.getType());
    bool offset = pt.getRank() == 1 && pt.getDimSize(0) == 1;
    if (!isa<IntegerType>(pt.getElementType()) ||
        (pt.getRank() != 2 && !offset))
      return ctx.error("position_ids must be an integer tensor [B, S] (or "
                       "[1], a start offset)");
  }
  auto xType = cast<RankedTensorType>(x->getType());
  auto cType = cast<RankedTensorType>(cos->getType());
  if (cType != sin->getType())
    return ctx.error("cos_cache and sin_cache differ in type");
  if (cType.getRank() != (positions ? 2 : 3))
    return ctx.error(positions ? "cos_cache must be [max_position, r/2] with "
                                 "position_ids"
                               : "cos_cache must be [B, S, r/2] without "
                                 "position_ids");
  int64_t half = cType.getDimSize(cType.getRank() - 1);
  if (ShapedType::isDynamic(half))
    return ctx.error("the cache width must be static");
  if (xType.getRank() != 3 && xType.getRank() != 4)
    return ctx.error("input must be [B, H, S, D] or [B, S, H*D]");
  if (xType.isDynamicDim(xType.getRank() - 1))
    return ctx.error("the head size must be static");

  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  Value x4 = *x;
  int64_t r = ctx.getInt("rotary_embedding_dim", 0);
  if (xType.getRank() == 3) {
    int64_t hidden = xType.getDimSize(2);
    int64_t heads = ctx.getInt("num_heads", 0);
    if (heads <= 0 && r == 0 && hidden % (2 * half) == 0)
      heads = hidden / (2 * half);
    if (heads <= 0 || hidden % heads != 0)
      return ctx.error("3-D input needs num_heads dividing the hidden size (" +
                       llvm::Twine(hidden) + ")");
    SmallVector<OpFoldResult> sizes = builders::tensorSizes(b, loc, *x);
    auto split = RankedTensorType::get(
        {xType.getDimSize(0), xType.getDimSize(1), heads, hidden / heads},
        xType.getElementType());
    x4 = tensor::ExpandShapeOp::create(
        b, loc, split, *x, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}},
        SmallVector<OpFoldResult>{sizes[0], sizes[1], b.getIndexAttr(heads),
                                  b.getIndexAttr(hidden / heads)});
    x4 = transposeValue(b, loc, x4, {0, 2, 1, 3});
  }
  int64_t d = cast<RankedTensorType>(x4.getType()).getDimSize(3);
  if (r == 0)
    r = d;
  if (r <= 0 || r > d || r % 2 != 0 || r / 2 != half)
    return ctx.error("rotary dim " + llvm::Twine(r) + " (head size " +
                     llvm::Twine(d) + ") does not match the cache width " +
                     llvm::Twine(half) + " (r/2)");
  bool interleaved = ctx.getInt("interleaved", 0) != 0;
  if (positions &&
      cast<RankedTensorType>(positions.getType()).getRank() == 1)
    positions = offsetPositions(b, loc, positions, x4);
  Value cosTable = ropeTable(b, loc, *cos, positions, x4, r, interleaved);
  Value sinTable = ropeTable(b, loc, *sin, positions, x4, r, interleaved);
  Value y = RopeTablesOp::create(b, loc, x4.getType(), x4, cosTable, sinTable,
                                 interleaved ? b.getUnitAttr() : UnitAttr());
  ctx.raised(ctx.proto().domain() == "com.microsoft"
                 ? "rope_tables (com.microsoft.RotaryEmbedding)"
                 : "rope_tables (RotaryEmbedding)");
  if (xType.getRank() == 3) {
    y = transposeValue(b, loc, y, {0, 2, 1, 3});
    y = tensor::CollapseShapeOp::create(
        b, loc, xType, y, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  }
  return ctx.setOutput(0, y);
}

LogicalResult rotaryEmbedding(NodeContext &ctx) {
  return rotary(ctx, 0, 1, 2, 3u);
}

LogicalResult rotaryEmbeddingMicrosoft(NodeContext &ctx) {
  if (ctx.getFloat("scale", 1.0f) != 1.0f)
    return ctx.error("scale other than 1 is not supported yet");
  if (ctx.getInt("is_packed_batching", 0) != 0)
    return ctx.error("is_packed_batching is not supported yet");
  return rotary(ctx, 0, 2, 3, 1u);
}

} // namespace

void mlir::mnemo::onnx_import::registerRotaryHandlers(HandlerRegistry &r) {
  r.add("", "RotaryEmbedding", 23, rotaryEmbedding);
  r.add("com.microsoft", "RotaryEmbedding", 1, rotaryEmbeddingMicrosoft);
}

//===- LinalgBuilders.cpp - helpers for mnemo lowerings ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cstring>
#include <vector>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

FloatType builders::computeType(Type elementType) {
  if (elementType.isF64())
    return cast<FloatType>(elementType);
  return Float32Type::get(elementType.getContext());
}

Value builders::castFloat(OpBuilder &b, Location loc, Value v, Type type) {
  unsigned from = v.getType().getIntOrFloatBitWidth();
  unsigned to = type.getIntOrFloatBitWidth();
  if (v.getType() == type)
    return v;
  if (from < to)
    return arith::ExtFOp::create(b, loc, type, v);
  return arith::TruncFOp::create(b, loc, type, v);
}

void builders::yieldMultiplyAdd(OpBuilder &b, Location loc, Value x, Value y,
                                Value acc, Type type) {
  Value p = arith::MulFOp::create(b, loc, castFloat(b, loc, x, type),
                                  castFloat(b, loc, y, type));
  linalg::YieldOp::create(b, loc,
                          arith::AddFOp::create(b, loc, acc, p).getResult());
}

Value builders::floatConst(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value builders::emptyTensor(OpBuilder &b, Location loc,
                          ArrayRef<OpFoldResult> sizes, Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value builders::filledTensor(OpBuilder &b, Location loc,
                           ArrayRef<OpFoldResult> sizes, Type elementType,
                           double value) {
  Value empty = emptyTensor(b, loc, sizes, elementType);
  Value scalar = floatConst(b, loc, elementType, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

Value builders::castToType(OpBuilder &b, Location loc, Value value,
                            Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, loc, type, value);
}

SmallVector<OpFoldResult> builders::tensorSizes(OpBuilder &b, Location loc,
                                              Value t) {
  return tensor::getMixedSizes(b, loc, t);
}

AffineMap builders::projection(MLIRContext *ctx, unsigned numDims,
                             ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

AffineMap builders::broadcastMap(MLIRContext *ctx, unsigned numDims,
                               RankedTensorType operand) {
  SmallVector<AffineExpr> exprs;
  unsigned lead = numDims - operand.getRank();
  for (int64_t i = 0; i < operand.getRank(); ++i)
    exprs.push_back(operand.getDimSize(i) == 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(lead + i, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

Value builders::yieldingGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<AffineMap> maps,
    Value init, ArrayRef<unsigned> reductions,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  unsigned loops = maps.front().getNumDims();
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, init, maps,
             iterators(loops, reductions),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, args));
             })
      .getResult(0);
}

Value builders::filledIntegers(OpBuilder &b, Location loc, OpFoldResult size,
                               Type type, int64_t value) {
  Value empty = emptyTensor(b, loc, {size}, type);
  Value v = type.isIndex() ? indexConst(b, loc, value)
                           : Value(arith::ConstantOp::create(
                                 b, loc, type, b.getIntegerAttr(type, value)));
  return linalg::FillOp::create(b, loc, v, empty).getResult(0);
}

Value builders::castElements(OpBuilder &b, Location loc, Value v,
                             Type elementType) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == elementType)
    return v;
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                   b.getContext());
  Value init = emptyTensor(b, loc, tensorSizes(b, loc, v), elementType);
  return linalg::GenericOp::create(
             b, loc, init.getType(), v, init, ArrayRef<AffineMap>{id, id},
             iterators(type.getRank()),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               linalg::YieldOp::create(nb, nl,
                                       castFloat(nb, nl, a[0], elementType));
             })
      .getResult(0);
}

std::pair<Value, Value> builders::clampedIndex(OpBuilder &b, Location loc,
                                              Value raw, Value bound) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value valid = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, bound));
  return {arith::SelectOp::create(b, loc, valid, i, zero), valid};
}

Value builders::transposedExperts(OpBuilder &b, Location loc, Value w) {
  auto constant = w.getDefiningOp<arith::ConstantOp>();
  auto value = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  if (!value || value.getType().getRank() != 3 ||
      value.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return {};
  auto type = cast<RankedTensorType>(value.getType());
  int64_t e = type.getDimSize(0), r = type.getDimSize(1),
          c = type.getDimSize(2);
  auto transposed = RankedTensorType::get({e, c, r}, type.getElementType());
  if (value.isSplat())
    return arith::ConstantOp::create(b, loc, value.reshape(transposed));
  size_t bytes = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> raw = value.getRawData();
  std::vector<char> out(raw.size());
  for (int64_t x = 0; x < e; ++x)
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j)
        std::memcpy(&out[((x * c + j) * r + i) * bytes],
                    &raw[((x * r + i) * c + j) * bytes], bytes);
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::getFromRawBuffer(transposed, out));
}

Value builders::indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

SmallVector<utils::IteratorType>
builders::iterators(unsigned numDims, ArrayRef<unsigned> reductions) {
  SmallVector<utils::IteratorType> types(numDims,
                                         utils::IteratorType::parallel);
  for (unsigned r : reductions)
    types[r] = utils::IteratorType::reduction;
  return types;
}

linalg::GenericOp builders::indexGenerated(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 0 || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0 ||
      !g.getIndexingMapsArray().front().isIdentity() ||
      !g.getDpsInitOperand(0)->get().getDefiningOp<tensor::EmptyOp>() ||
      !g.getBody()->getArgument(0).use_empty())
    return {};
  bool nestedIndex = false;
  g.getBody()->walk([&](linalg::IndexOp index) {
    nestedIndex |= index->getBlock() != g.getBody();
  });
  return nestedIndex ? linalg::GenericOp() : g;
}

Value builders::throughCasts(Value v) {
  while (auto cast = v.getDefiningOp<tensor::CastOp>())
    v = cast.getSource();
  return v;
}

std::optional<builders::TwoPartConcat> builders::matchTwoPartConcat(Value v) {
  auto outer = v.getDefiningOp<tensor::InsertSliceOp>();
  auto inner = outer ? outer.getDest().getDefiningOp<tensor::InsertSliceOp>()
                     : tensor::InsertSliceOp();
  if (!inner || !inner.getDest().getDefiningOp<tensor::EmptyOp>())
    return std::nullopt;
  int64_t rank = outer.getResultType().getRank();
  if (inner.getSourceType().getRank() != rank ||
      outer.getSourceType().getRank() != rank)
    return std::nullopt;
  auto all = [](ArrayRef<OpFoldResult> values, int64_t c) {
    return llvm::all_of(values, [&](OpFoldResult v) {
      std::optional<int64_t> k = getConstantIntValue(v);
      return k && *k == c;
    });
  };
  if (!all(inner.getMixedOffsets(), 0) || !all(inner.getMixedStrides(), 1) ||
      !all(outer.getMixedStrides(), 1))
    return std::nullopt;
  SmallVector<OpFoldResult> offsets = outer.getMixedOffsets();
  int64_t axis = -1;
  for (auto [i, o] : llvm::enumerate(offsets)) {
    std::optional<int64_t> k = getConstantIntValue(o);
    if (k && *k == 0)
      continue;
    if (axis >= 0)
      return std::nullopt; // offsets on two dims
    axis = i;
  }
  if (axis < 0)
    return std::nullopt;
  return TwoPartConcat{inner.getSource(), outer.getSource(), axis,
                       offsets[axis]};
}

Value builders::sinkRowInit(OpBuilder &b, Location loc,
                            ArrayRef<OpFoldResult> rowSizes, Value sink,
                            FloatType ct, double fallback, Value rowMax) {
  if (!sink)
    return filledTensor(b, loc, rowSizes, ct, fallback);
  MLIRContext *ctx = b.getContext();
  AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
  SmallVector<Value> inputs = {sink};
  SmallVector<AffineMap> maps = {projection(ctx, 3, {1})};
  if (rowMax) {
    inputs.push_back(rowMax);
    maps.push_back(id3);
  }
  maps.push_back(id3);
  Value init = emptyTensor(b, loc, rowSizes, ct);
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, init, maps, iterators(3),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value s = castFloat(nb, nl, args[0], ct);
               if (rowMax)
                 s = math::ExpOp::create(
                     nb, nl, arith::SubFOp::create(nb, nl, s, args[1]));
               linalg::YieldOp::create(nb, nl, s);
             })
      .getResult(0);
}

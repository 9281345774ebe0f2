//===- Indexing.cpp - ONNX Gather, ScatterND and constants ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Gather (a linalg.generic reading the table with tensor.extract),
// ScatterND over constant indices that cover a box (tensor.insert_slice),
// and the constant producers Constant, ConstantOfShape and Shape.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {

LogicalResult gather(NodeContext &ctx) {
  FailureOr<Value> data = ctx.input(0), indices = ctx.input(1);
  if (failed(data) || failed(indices))
    return failure();
  auto dt = cast<RankedTensorType>(data->getType());
  auto it = cast<RankedTensorType>(indices->getType());
  if (!it.getElementType().isInteger())
    return ctx.error("indices must be integers");
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0),
                                              dt.getRank());
  if (failed(axis))
    return failure();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  MLIRContext *mctx = b.getContext();
  int64_t ri = it.getRank(), rank = dt.getRank() - 1 + ri;
  SmallVector<OpFoldResult> dataSizes = builders::tensorSizes(b, loc, *data);
  SmallVector<OpFoldResult> idxSizes = builders::tensorSizes(b, loc, *indices);
  SmallVector<OpFoldResult> sizes(dataSizes.begin(), dataSizes.begin() + *axis);
  sizes.append(idxSizes);
  sizes.append(dataSizes.begin() + *axis + 1, dataSizes.end());
  Value init = builders::emptyTensor(b, loc, sizes, dt.getElementType());
  SmallVector<AffineExpr> idxExprs;
  for (int64_t i = 0; i < ri; ++i)
    idxExprs.push_back(getAffineDimExpr(*axis + i, mctx));
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, idxExprs, mctx),
      AffineMap::getMultiDimIdentityMap(rank, mctx)};
  Value extent = tensor::DimOp::create(b, loc, *data, *axis);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{*indices}, init, maps,
      builders::iterators(rank), [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value id = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]);
        Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
        // Negative indices count from the end; others out of range read 0.
        Value neg = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                          id, zero);
        id = arith::SelectOp::create(
            nb, nl, neg, arith::AddIOp::create(nb, nl, id, extent), id);
        Value inRange = arith::AndIOp::create(
            nb, nl,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, id, zero),
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, id,
                                  extent));
        id = arith::SelectOp::create(nb, nl, inRange, id, zero);
        SmallVector<Value> at;
        for (int64_t d = 0; d < *axis; ++d)
          at.push_back(linalg::IndexOp::create(nb, nl, d));
        at.push_back(id);
        for (int64_t d = *axis + ri; d < rank; ++d)
          at.push_back(linalg::IndexOp::create(nb, nl, d));
        Value v = tensor::ExtractOp::create(nb, nl, *data, at);
        Value zeroV = arith::ConstantOp::create(
            nb, nl, nb.getZeroAttr(dt.getElementType()));
        linalg::YieldOp::create(
            nb, nl, arith::SelectOp::create(nb, nl, inRange, v, zeroV)
                        .getResult());
      });
  return ctx.setOutput(0, generic.getResult(0));
}

/// ScatterND with constant indices [q..., k] that enumerate, in row-major
/// order, base + (0, ..., 0, i_1, ..., i_m) over the box q: the update is one
/// slice of the data.
LogicalResult scatterND(NodeContext &ctx) {
  FailureOr<Value> data = ctx.input(0), updates = ctx.input(2);
  FailureOr<DenseElementsAttr> indices = ctx.constantInput(1);
  if (failed(data) || failed(updates) || failed(indices))
    return failure();
  if (ctx.getString("reduction", "none") != "none")
    return ctx.error("only reduction 'none' is supported");
  auto dt = cast<RankedTensorType>(data->getType());
  auto it = cast<RankedTensorType>(indices->getType());
  if (!dt.hasStaticShape() || it.getRank() < 1)
    return ctx.error("expects static data and indices of rank >= 1");
  int64_t k = it.getShape().back(), m = it.getRank() - 1;
  if (k < m || k > dt.getRank())
    return ctx.error("unsupported indices shape (not a slice of the data)");
  SmallVector<int64_t> idx = toInt64s(*indices);
  ArrayRef<int64_t> box = it.getShape().drop_back();
  SmallVector<int64_t> base(idx.begin(), idx.begin() + std::min<int64_t>(
                                                          k, idx.size()));
  for (int64_t d = 0; d < k; ++d)
    if (base[d] < 0)
      base[d] += dt.getDimSize(d);
  // Check every tuple against base + position in the box.
  int64_t count = idx.size() / std::max<int64_t>(k, 1);
  for (int64_t t = 0; t < count; ++t) {
    SmallVector<int64_t> pos(m);
    for (int64_t rem = t, d = m - 1; d >= 0; --d) {
      pos[d] = rem % box[d];
      rem /= box[d];
    }
    for (int64_t d = 0; d < k; ++d) {
      int64_t want = base[d] + (d >= k - m ? pos[d - (k - m)] : 0);
      int64_t got = idx[t * k + d];
      if (got < 0)
        got += dt.getDimSize(d);
      if (got != want)
        return ctx.error("indices that do not cover a contiguous slice are "
                         "not supported yet");
    }
  }
  OpBuilder &b = ctx.builder();
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < dt.getRank(); ++d) {
    int64_t size = d < k - m   ? 1
                   : d < k     ? box[d - (k - m)]
                               : dt.getDimSize(d);
    int64_t offset = d < k ? base[d] : 0;
    if (offset < 0 || offset + size > dt.getDimSize(d))
      return ctx.error("indices are out of range");
    offsets.push_back(b.getIndexAttr(offset));
    sizes.push_back(b.getIndexAttr(size));
    strides.push_back(b.getIndexAttr(1));
  }
  auto ut = cast<RankedTensorType>(updates->getType());
  SmallVector<int64_t> want(box);
  want.append(dt.getShape().begin() + k, dt.getShape().end());
  if (ut.getShape() != ArrayRef<int64_t>(want))
    return ctx.error("updates shape does not match the indexed slice");
  Value out = tensor::InsertSliceOp::create(b, ctx.getLoc(), *updates, *data,
                                            offsets, sizes, strides);
  return ctx.setOutput(0, out);
}

LogicalResult constant(NodeContext &ctx) {
  Builder b(ctx.getContext());
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    FailureOr<DenseElementsAttr> v = ctx.loadTensor(a->t());
    return failed(v) ? failure() : ctx.setConstantOutput(0, *v);
  }
  if (const onnx::AttributeProto *a = ctx.attr("value_float"))
    return ctx.setConstantOutput(
        0, DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                  a->f()));
  if (const onnx::AttributeProto *a = ctx.attr("value_int"))
    return ctx.setConstantOutput(
        0, DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                  int64_t(a->i())));
  if (const onnx::AttributeProto *a = ctx.attr("value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    return ctx.setConstantOutput(
        0, DenseElementsAttr::get(
               RankedTensorType::get({int64_t(v.size())}, b.getF32Type()),
               ArrayRef<float>(v)));
  }
  if (const onnx::AttributeProto *a = ctx.attr("value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    return ctx.setConstantOutput(
        0, DenseElementsAttr::get(
               RankedTensorType::get({int64_t(v.size())}, b.getI64Type()),
               ArrayRef<int64_t>(v)));
  }
  return ctx.error("unsupported value attribute");
}

LogicalResult constantOfShape(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> shape = ctx.intsInput(0);
  if (failed(shape))
    return failure();
  for (int64_t d : *shape)
    if (d < 0)
      return ctx.error("negative dimension in shape");
  Builder b(ctx.getContext());
  DenseElementsAttr fill =
      DenseElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()), 0.0f);
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    FailureOr<DenseElementsAttr> v = ctx.loadTensor(a->t());
    if (failed(v))
      return failure();
    if (v->getNumElements() != 1)
      return ctx.error("value must have one element");
    fill = *v;
  }
  auto type = RankedTensorType::get(*shape, fill.getElementType());
  return ctx.setConstantOutput(
      0, DenseElementsAttr::get(type, fill.getValues<Attribute>()[0]));
}

LogicalResult shapeOp(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.inputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  int64_t start = ctx.getInt("start", 0), end = ctx.getInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) {
    if (type->isDynamicDim(d))
      return ctx.error("shapes of dynamic tensors are not supported yet");
    dims.push_back(type->getDimSize(d));
  }
  Builder b(ctx.getContext());
  return ctx.setConstantOutput(
      0, DenseElementsAttr::get(
             RankedTensorType::get({int64_t(dims.size())}, b.getI64Type()),
             ArrayRef<int64_t>(dims)));
}

} // namespace

void mlir::mnemo::onnx_import::registerIndexingHandlers(HandlerRegistry &r) {
  r.add("", "Gather", 1, gather);
  r.add("", "ScatterND", 11, scatterND);
  r.add("", "Constant", 1, constant);
  r.add("", "ConstantOfShape", 9, constantOfShape);
  r.add("", "Shape", 1, shapeOp);
}

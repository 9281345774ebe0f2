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

#include "GraphImporter.h"
#include "Importer.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include <cmath>

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
  if (!indices->getElementType().isInteger())
    return ctx.error("expects integer indices");
  if (indices->getNumElements() > kMaxFoldedElements)
    return ctx.error("expects at most " + llvm::Twine(kMaxFoldedElements) +
                     " constant indices");
  auto dt = cast<RankedTensorType>(data->getType());
  auto it = cast<RankedTensorType>(indices->getType());
  if (it.getRank() < 1)
    return ctx.error("expects indices of rank >= 1");
  int64_t k = it.getShape().back(), m = it.getRank() - 1;
  if (k < m || k > dt.getRank())
    return ctx.error("unsupported indices shape (not a slice of the data)");
  for (int64_t d = 0; d < k; ++d)
    if (dt.isDynamicDim(d))
      return ctx.error("indexed data dims must be static");
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
  SmallVector<OpFoldResult> dataSizes =
      builders::tensorSizes(b, ctx.getLoc(), *data);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < dt.getRank(); ++d) {
    if (d >= k) {
      // The trailing dims are copied whole (and may be dynamic).
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(dataSizes[d]);
      strides.push_back(b.getIndexAttr(1));
      continue;
    }
    int64_t size = d < k - m ? 1 : box[d - (k - m)];
    int64_t offset = base[d];
    if (offset < 0 || offset + size > dt.getDimSize(d))
      return ctx.error("indices are out of range");
    offsets.push_back(b.getIndexAttr(offset));
    sizes.push_back(b.getIndexAttr(size));
    strides.push_back(b.getIndexAttr(1));
  }
  auto ut = cast<RankedTensorType>(updates->getType());
  SmallVector<int64_t> want(box);
  want.append(dt.getShape().begin() + k, dt.getShape().end());
  bool matches = ut.getRank() == int64_t(want.size());
  for (int64_t d = 0; matches && d < ut.getRank(); ++d)
    matches = ut.getDimSize(d) == want[d] || ut.isDynamicDim(d) ||
              ShapedType::isDynamic(want[d]);
  if (!matches)
    return ctx.error("updates shape does not match the indexed slice");
  // The slice type, static where the sizes are; updates cast to it.
  SmallVector<int64_t> sliceShape;
  for (OpFoldResult sz : sizes) {
    std::optional<int64_t> c = getConstantIntValue(sz);
    sliceShape.push_back(c ? *c : ShapedType::kDynamic);
  }
  Value source = builders::castToType(
      b, ctx.getLoc(), *updates,
      RankedTensorType::get(sliceShape, ut.getElementType()));
  Value out = tensor::InsertSliceOp::create(b, ctx.getLoc(), source, *data,
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
  FailureOr<SmallVector<OpFoldResult>> shape = ctx.shapeInput(0);
  if (failed(shape))
    return failure();
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
  SmallVector<int64_t> dims;
  for (OpFoldResult d : *shape) {
    std::optional<int64_t> c = getConstantIntValue(d);
    if (c && *c < 0)
      return ctx.error("negative dimension in shape");
    dims.push_back(c ? *c : ShapedType::kDynamic);
  }
  auto type = RankedTensorType::get(dims, fill.getElementType());
  TypedAttr scalar = cast<TypedAttr>(fill.getValues<Attribute>()[0]);
  if (type.hasStaticShape())
    return ctx.setConstantOutput(0, DenseElementsAttr::get(type, scalar));
  OpBuilder &ob = ctx.builder();
  Location loc = ctx.getLoc();
  Value init = builders::emptyTensor(ob, loc, *shape, fill.getElementType());
  Value value = arith::ConstantOp::create(ob, loc, scalar);
  return ctx.setOutput(
      0, linalg::FillOp::create(ob, loc, value, init).getResult(0));
}

/// Range(start, limit, delta): start + i * delta for i < max(ceil((limit -
/// start) / delta), 0). Integer bounds may be computed from shapes.
LogicalResult range(NodeContext &ctx) {
  FailureOr<RankedTensorType> t = ctx.inputType(0);
  if (failed(t))
    return failure();
  Type element = t->getElementType();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  if (isa<FloatType>(element)) {
    FailureOr<DenseElementsAttr> s = ctx.constantInput(0),
                                 l = ctx.constantInput(1),
                                 d = ctx.constantInput(2);
    if (failed(s) || failed(l) || failed(d))
      return failure();
    // Scalars of the one float type (an empty or integer bound has no
    // float to read).
    auto print = [](auto x) {
      std::string out;
      llvm::raw_string_ostream(out) << x;
      return out;
    };
    for (auto [name, v] : {std::pair{"start", *s}, {"limit", *l},
                           {"delta", *d}})
      if (v.getNumElements() != 1 || v.getElementType() != element)
        return ctx.error(Twine(name) + " must be one " + print(element) +
                         " value, got " + print(v.getType()));
    double start = (*s->getValues<APFloat>().begin()).convertToDouble();
    double limit = (*l->getValues<APFloat>().begin()).convertToDouble();
    double delta = (*d->getValues<APFloat>().begin()).convertToDouble();
    if (delta == 0.0)
      return ctx.error("delta is zero");
    // Folded: its length must be finite and bounded (NaN fails too).
    double count = std::ceil((limit - start) / delta);
    if (!(count <= double(kMaxFoldedElements)))
      return ctx.error("a range of more than " + Twine(kMaxFoldedElements) +
                       " elements (start, limit and delta are constants)");
    int64_t n = count > 0 ? int64_t(count) : 0;
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < n; ++i) {
      APFloat v(start + double(i) * delta);
      bool lost;
      v.convert(cast<FloatType>(element).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
    return ctx.setConstantOutput(
        0, DenseElementsAttr::get(RankedTensorType::get({n}, element),
                                  values));
  }
  FailureOr<SmallVector<OpFoldResult>> s = ctx.shapeInput(0),
                                       l = ctx.shapeInput(1),
                                       d = ctx.shapeInput(2);
  if (failed(s) || failed(l) || failed(d))
    return failure();
  if (s->size() != 1 || l->size() != 1 || d->size() != 1)
    return ctx.error("start, limit and delta must be scalars");
  std::optional<int64_t> cd = getConstantIntValue((*d)[0]);
  if (!cd || *cd == 0)
    return ctx.error("delta must be a non-zero constant");
  auto value = [&](OpFoldResult v) {
    return getValueOrCreateConstantIndexOp(b, loc, v);
  };
  std::optional<int64_t> cs = getConstantIntValue((*s)[0]),
                         cl = getConstantIntValue((*l)[0]);
  // A constant range is folded when it is small; its length and elements
  // in 128 bits, as limit - start may not fit 64.
  __int128 count = 0;
  if (cs && cl) {
    __int128 span = __int128(*cl) - *cs;
    count = span / *cd + (span % *cd != 0 && (span > 0) == (*cd > 0));
  }
  if (cs && cl && count <= kMaxFoldedElements) {
    int64_t n = count > 0 ? int64_t(count) : 0;
    SmallVector<APInt> values;
    for (int64_t i = 0; i < n; ++i)
      values.push_back(APInt(element.getIntOrFloatBitWidth(),
                             int64_t(__int128(*cs) + __int128(i) * *cd),
                             /*isSigned=*/true));
    return ctx.setConstantOutput(
        0, DenseElementsAttr::get(RankedTensorType::get({n}, element), values));
  }
  Value start = value((*s)[0]);
  Value span = arith::SubIOp::create(b, loc, value((*l)[0]), start);
  Value n = arith::MaxSIOp::create(
      b, loc,
      arith::CeilDivSIOp::create(b, loc, span,
                                 arith::ConstantIndexOp::create(b, loc, *cd)),
      arith::ConstantIndexOp::create(b, loc, 0));
  OpFoldResult size = getAsOpFoldResult(n);
  Value init = builders::emptyTensor(b, loc, {size}, element);
  auto id = AffineMap::getMultiDimIdentityMap(1, b.getContext());
  Value out =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{}, init, ArrayRef<AffineMap>{id},
          builders::iterators(1),
          [&](OpBuilder &nb, Location nl, ValueRange) {
            Value i = linalg::IndexOp::create(nb, nl, 0);
            Value v = arith::AddIOp::create(
                nb, nl, start,
                arith::MulIOp::create(
                    nb, nl, i, arith::ConstantIndexOp::create(nb, nl, *cd)));
            linalg::YieldOp::create(
                nb, nl,
                arith::IndexCastOp::create(nb, nl, element, v).getResult());
          })
          .getResult(0);
  return ctx.setOutput(0, out);
}

/// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of
/// the last two dims, zero elsewhere.
LogicalResult trilu(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t k = 0;
  if (ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> kv = ctx.intsInput(1);
    if (failed(kv))
      return failure();
    if (kv->size() != 1)
      return ctx.error("k must hold one value");
    k = (*kv)[0];
  }
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  if (rank < 2)
    return ctx.error("input must have rank >= 2");
  bool upper = ctx.getInt("upper", 1) != 0;
  Type element = type.getElementType();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  Value init = builders::emptyTensor(b, loc, builders::tensorSizes(b, loc, *x),
                                     element);
  auto id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  Value out =
      linalg::GenericOp::create(
          b, loc, init.getType(), *x, init, ArrayRef<AffineMap>{id, id},
          builders::iterators(rank),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value i = linalg::IndexOp::create(nb, nl, rank - 2);
            Value j = linalg::IndexOp::create(nb, nl, rank - 1);
            Value diff = arith::SubIOp::create(nb, nl, j, i);
            Value keep = arith::CmpIOp::create(
                nb, nl,
                upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
                diff, arith::ConstantIndexOp::create(nb, nl, k));
            Value zero =
                arith::ConstantOp::create(nb, nl, nb.getZeroAttr(element));
            linalg::YieldOp::create(
                nb, nl,
                arith::SelectOp::create(nb, nl, keep, a[0], zero).getResult());
          })
          .getResult(0);
  return ctx.setOutput(0, out);
}

/// GatherND with batch_dims = 0: out[i..., rest...] =
/// data[indices[i..., 0], ..., indices[i..., k-1], rest...].
LogicalResult gatherND(NodeContext &ctx) {
  if (ctx.getInt("batch_dims", 0) != 0)
    return ctx.error("batch_dims other than 0 are not supported yet");
  FailureOr<Value> data = ctx.input(0), indices = ctx.input(1);
  if (failed(data) || failed(indices))
    return failure();
  auto dt = cast<RankedTensorType>(data->getType());
  auto it = cast<RankedTensorType>(indices->getType());
  if (!it.getElementType().isInteger() || it.getRank() < 1 ||
      it.isDynamicDim(it.getRank() - 1))
    return ctx.error("indices must be integers with a static last dim");
  int64_t k = it.getDimSize(it.getRank() - 1);
  if (k > dt.getRank())
    return ctx.error("indices address more dims than the data has");
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  SmallVector<OpFoldResult> is = builders::tensorSizes(b, loc, *indices);
  SmallVector<OpFoldResult> ds = builders::tensorSizes(b, loc, *data);
  SmallVector<OpFoldResult> sizes(is.begin(), is.end() - 1);
  sizes.append(ds.begin() + k, ds.end());
  int64_t lead = it.getRank() - 1, rank = sizes.size();
  Value init = builders::emptyTensor(b, loc, sizes, dt.getElementType());
  auto id = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  Value out =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{}, init, ArrayRef<AffineMap>{id},
          builders::iterators(rank),
          [&](OpBuilder &nb, Location nl, ValueRange) {
            SmallVector<Value> at, idx;
            for (int64_t d = 0; d < lead; ++d)
              idx.push_back(linalg::IndexOp::create(nb, nl, d));
            for (int64_t j = 0; j < k; ++j) {
              SmallVector<Value> where(idx);
              where.push_back(arith::ConstantIndexOp::create(nb, nl, j));
              Value v = tensor::ExtractOp::create(nb, nl, *indices, where);
              v = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), v);
              // Negative indices count from the end; out of range reads 0.
              Value dim = tensor::DimOp::create(nb, nl, *data, j);
              Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
              Value neg = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::slt, v, zero);
              v = arith::SelectOp::create(
                  nb, nl, neg, arith::AddIOp::create(nb, nl, v, dim), v);
              Value ok = arith::AndIOp::create(
                  nb, nl,
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, v,
                                        zero),
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, v,
                                        dim));
              at.push_back(arith::SelectOp::create(nb, nl, ok, v, zero));
            }
            for (int64_t d = lead; d < rank; ++d)
              at.push_back(linalg::IndexOp::create(nb, nl, d));
            linalg::YieldOp::create(
                nb, nl, tensor::ExtractOp::create(nb, nl, *data, at).getResult());
          })
          .getResult(0);
  return ctx.setOutput(0, out);
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
  r.add("", "Range", 11, range);
  r.add("", "GatherND", 11, gatherND);
  r.add("", "Trilu", 14, trilu);
}

//===- ShapeOps.cpp - ONNX shape ops ----------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reshape, Transpose, Concat, Slice, Split, Unsqueeze, Squeeze and Expand as
// tensor reshapes and slices and linalg.transpose. Shape operands (target
// shapes, slice bounds, axes) must be constants.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {

/// `src` reshaped to the static `shape` (same element count).
Value reshapeTo(OpBuilder &b, Location loc, Value src, ArrayRef<int64_t> shape) {
  auto srcType = cast<RankedTensorType>(src.getType());
  auto dstType = RankedTensorType::get(shape, srcType.getElementType());
  if (srcType == dstType)
    return src;
  if (srcType.getRank() > dstType.getRank()) {
    if (auto r = getReassociationIndicesForCollapse(srcType.getShape(), shape))
      return tensor::CollapseShapeOp::create(b, loc, dstType, src, *r);
  } else if (srcType.getRank() < dstType.getRank()) {
    if (auto r = getReassociationIndicesForCollapse(shape, srcType.getShape()))
      return tensor::ExpandShapeOp::create(b, loc, dstType, src, *r);
  }
  // Through one dimension.
  int64_t n = srcType.getNumElements();
  Value flat = src;
  if (srcType.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t i = 0; i < srcType.getRank(); ++i)
      all[0].push_back(i);
    flat = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({n}, srcType.getElementType()), src,
        srcType.getRank() ? all : SmallVector<ReassociationIndices>{});
  }
  if (dstType.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t i = 0; i < dstType.getRank(); ++i)
    all[0].push_back(i);
  return tensor::ExpandShapeOp::create(
      b, loc, dstType, flat,
      dstType.getRank() ? all : SmallVector<ReassociationIndices>{});
}

/// Where extent `dim` of `v` comes from, followed through ops whose result
/// extents are operand extents (destination-style ops to their inits,
/// tensor.empty to its size operands, shape-preserving mnemo ops, casts,
/// reshapes to their shape elements, tensor.dim to what it reads): two
/// extents with the same origin are equal at run time.
std::pair<Value, int64_t> extentOrigin(Value v, int64_t dim) {
  for (int steps = 0; steps < 256; ++steps) {
    Operation *op = v.getDefiningOp();
    if (!op)
      break;
    auto result = dyn_cast<OpResult>(v);
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
      v = dps.getDpsInits()[result.getResultNumber()];
      continue;
    }
    if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
      if (!empty.getType().isDynamicDim(dim))
        break;
      Value size = empty.getDynamicSize(dim);
      auto d = size.getDefiningOp<tensor::DimOp>();
      std::optional<int64_t> index = d ? d.getConstantIndex() : std::nullopt;
      if (!index)
        return {size, -1};
      v = d.getSource();
      dim = *index;
      continue;
    }
    if (auto reshape = dyn_cast<tensor::ReshapeOp>(op)) {
      auto from = reshape.getShape().getDefiningOp<tensor::FromElementsOp>();
      if (!from)
        break;
      Value size = from.getElements()[dim];
      auto d = size.getDefiningOp<tensor::DimOp>();
      std::optional<int64_t> index = d ? d.getConstantIndex() : std::nullopt;
      if (!index)
        return {size, -1};
      v = d.getSource();
      dim = *index;
      continue;
    }
    if (isa<tensor::CastOp, mnemo::RmsNormOp, mnemo::SwiGluOp, mnemo::RopeOp,
            mnemo::RopeTablesOp>(op)) {
      v = op->getOperand(0);
      continue;
    }
    // Attention's [B, H, Sq, Dv] is the query's but for Dv.
    if (isa<mnemo::AttentionOp>(op) && dim < 3) {
      v = op->getOperand(0);
      continue;
    }
    break;
  }
  return {v, dim};
}

/// Reshape to sizes that are not all known at compile time: tensor.reshape
/// with the shape built at run time (0 copies the input extent, -1 takes
/// what is left; statically when the dynamic extents of the input and of
/// the target have the same origins).
LogicalResult dynamicReshape(NodeContext &ctx, Value x,
                             ArrayRef<OpFoldResult> target, bool allowZero) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> in = builders::tensorSizes(b, loc, x);
  auto value = [&](OpFoldResult v) {
    return getValueOrCreateConstantIndexOp(b, loc, v);
  };
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (OpFoldResult d : in)
    count = arith::MulIOp::create(b, loc, count, value(d));
  SmallVector<OpFoldResult> sizes(target);
  // A target extent that is one of the input's (the same origin, or one
  // dim_param) is taken from the input itself, so that the reshape can
  // become an expand or collapse of the input's dims.
  auto originOf = [&](OpFoldResult d) -> std::optional<std::pair<Value, int64_t>> {
    auto dimOp = dyn_cast_if_present<Value>(d)
                     ? cast<Value>(d).getDefiningOp<tensor::DimOp>()
                     : tensor::DimOp();
    std::optional<int64_t> index =
        dimOp ? dimOp.getConstantIndex() : std::nullopt;
    if (!index)
      return std::nullopt;
    return ctx.canonicalExtent(extentOrigin(dimOp.getSource(), *index));
  };
  for (auto [i, d] : llvm::enumerate(sizes)) {
    if (int64_t(i) >= type.getRank() || !type.isDynamicDim(i))
      continue;
    std::optional<std::pair<Value, int64_t>> origin = originOf(d);
    if (origin &&
        *origin == ctx.canonicalExtent(extentOrigin(x, int64_t(i))))
      d = in[i];
  }
  // With the input's extents taken over, one computed extent left alone is
  // what the element count leaves for it (as -1 would be): inferred, so
  // that it becomes static where the rest cancels.
  SmallVector<unsigned> computed;
  bool minusOne = false;
  for (auto [i, d] : llvm::enumerate(sizes)) {
    std::optional<int64_t> c = getConstantIntValue(d);
    minusOne |= c && *c == -1;
    bool taken = int64_t(i) < type.getRank() && d == in[i];
    if (!c && !taken)
      computed.push_back(i);
  }
  if (!minusOne && computed.size() == 1)
    sizes[computed.front()] = b.getIndexAttr(-1);
  int64_t inferred = -1;
  Value known = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [i, d] : llvm::enumerate(sizes)) {
    std::optional<int64_t> c = getConstantIntValue(d);
    if (c && *c == 0 && !allowZero) {
      if (int64_t(i) >= type.getRank())
        return ctx.error("shape copies a dimension the input does not have");
      d = in[i];
    } else if (c && *c == -1) {
      if (inferred >= 0)
        return ctx.error("shape has more than one -1");
      inferred = i;
      continue;
    } else if (c && *c < 0) {
      return ctx.error("bad target dimension " + llvm::Twine(*c));
    }
    known = arith::MulIOp::create(b, loc, known, value(d));
  }
  if (inferred >= 0) {
    // Cancel the dynamic extents of the target against the input's.
    SmallVector<std::pair<Value, int64_t>> pending;
    int64_t staticIn = 1, staticOut = 1;
    for (auto [i, d] : llvm::enumerate(in)) {
      if (std::optional<int64_t> c = getConstantIntValue(d))
        staticIn *= *c;
      else
        pending.push_back(ctx.canonicalExtent(extentOrigin(x, i)));
    }
    bool cancelled = true;
    for (auto [i, d] : llvm::enumerate(sizes)) {
      if (int64_t(i) == inferred)
        continue;
      if (std::optional<int64_t> c = getConstantIntValue(d)) {
        staticOut *= *c;
        continue;
      }
      auto dimOp = cast<Value>(d).getDefiningOp<tensor::DimOp>();
      std::optional<int64_t> index =
          dimOp ? dimOp.getConstantIndex() : std::nullopt;
      auto origin =
          index ? ctx.canonicalExtent(extentOrigin(dimOp.getSource(), *index))
                : std::make_pair(cast<Value>(d), int64_t(-1));
      auto it = llvm::find(pending, origin);
      if (it == pending.end()) {
        cancelled = false;
        break;
      }
      pending.erase(it);
    }
    if (cancelled && pending.empty() && staticOut > 0 &&
        staticIn % staticOut == 0)
      sizes[inferred] = b.getIndexAttr(staticIn / staticOut);
    else
      sizes[inferred] =
          arith::DivSIOp::create(b, loc, count, known).getResult();
  }
  SmallVector<int64_t> shape;
  SmallVector<Value> elements;
  for (OpFoldResult d : sizes) {
    std::optional<int64_t> c = getConstantIntValue(d);
    shape.push_back(c ? *c : ShapedType::kDynamic);
    elements.push_back(value(d));
  }
  Value shapeTensor = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({int64_t(elements.size())},
                                    b.getIndexType()),
      elements);
  Value out = tensor::ReshapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), x,
      shapeTensor);
  return ctx.setOutput(0, out);
}

LogicalResult reshape(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.inputType(0);
  FailureOr<SmallVector<OpFoldResult>> symbolic = ctx.shapeInput(1);
  if (failed(type) || failed(symbolic))
    return failure();
  bool allowZero = ctx.getInt("allowzero", 0);
  SmallVector<int64_t> constant;
  for (OpFoldResult d : *symbolic)
    if (std::optional<int64_t> c = getConstantIntValue(d))
      constant.push_back(*c);
  if (!type->hasStaticShape() || constant.size() != symbolic->size())
    return dynamicReshape(ctx, *ctx.input(0), *symbolic, allowZero);
  SmallVector<int64_t> *target = &constant;
  SmallVector<int64_t> shape(*target);
  int64_t known = 1, inferred = -1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == 0 && !allowZero) {
      if (int64_t(i) >= type->getRank())
        return ctx.error("shape copies a dimension the input does not have");
      d = type->getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        return ctx.error("shape has more than one -1");
      inferred = i;
      continue;
    }
    if (d < 0)
      return ctx.error("bad target dimension " + llvm::Twine(d));
    if (llvm::MulOverflow(known, d, known))
      return ctx.error("target shape of more than 2^63 elements");
  }
  int64_t count = type->getNumElements();
  if (inferred >= 0)
    shape[inferred] = known ? count / known : 0;
  int64_t total = inferred >= 0 ? known * shape[inferred] : known;
  if (total != count)
    return ctx.error("cannot reshape " + llvm::Twine(count) +
                     " elements to " + llvm::Twine(total));
  Value src = *ctx.input(0);
  return ctx.setOutput(0, reshapeTo(ctx.builder(), ctx.getLoc(), src, shape));
}

LogicalResult transpose(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> perm = ctx.getInts("perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  SmallVector<bool> seen(rank, false);
  if (int64_t(perm.size()) != rank)
    return ctx.error("perm has " + llvm::Twine(perm.size()) +
                     " entries for rank " + llvm::Twine(rank));
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return ctx.error("perm is not a permutation");
    seen[p] = true;
  }
  return ctx.setOutput(0,
                       transposeValue(ctx.builder(), ctx.getLoc(), *x, perm));
}

LogicalResult concat(NodeContext &ctx) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    FailureOr<Value> v = ctx.input(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty())
    return ctx.error("needs at least one input");
  auto first = cast<RankedTensorType>(inputs[0].getType());
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), first.getRank());
  if (failed(axis))
    return failure();
  for (Value v : inputs) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return ctx.error("inputs differ in rank or element type");
  }
  return ctx.setOutput(0,
                       concatValues(ctx.builder(), ctx.getLoc(), inputs, *axis));
}

/// `v` (a start or end of Slice) normalized against extent `dim`: negative
/// values count from the end, the result is clamped to [0, dim].
OpFoldResult sliceBound(OpBuilder &b, Location loc, OpFoldResult v,
                        OpFoldResult dim) {
  std::optional<int64_t> cv = getConstantIntValue(v),
                         cd = getConstantIntValue(dim);
  if (cv && cd) {
    int64_t x = *cv < 0 ? *cv + *cd : *cv;
    return b.getIndexAttr(std::clamp<int64_t>(x, 0, *cd));
  }
  Value x = getValueOrCreateConstantIndexOp(b, loc, v);
  Value d = getValueOrCreateConstantIndexOp(b, loc, dim);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  x = arith::SelectOp::create(b, loc, negative,
                              arith::AddIOp::create(b, loc, x, d), x);
  x = arith::MaxSIOp::create(b, loc, x, zero);
  return arith::MinSIOp::create(b, loc, x, d).getResult();
}

LogicalResult slice(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<SmallVector<OpFoldResult>> starts = ctx.shapeInput(1),
                                       ends = ctx.shapeInput(2);
  if (failed(x) || failed(starts) || failed(ends))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (ctx.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> a = ctx.intsInput(3);
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (ctx.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> s = ctx.intsInput(4);
    if (failed(s))
      return failure();
    steps = *s;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return ctx.error("starts, ends, axes and steps differ in length");
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = builders::tensorSizes(b, loc, *x);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  for (size_t i = 0; i < axes.size(); ++i) {
    FailureOr<int64_t> axis = ctx.normalizeAxis(axes[i], rank);
    if (failed(axis))
      return failure();
    int64_t step = steps[i];
    if (step <= 0)
      return ctx.error("only positive steps are supported");
    OpFoldResult dim = sizes[*axis];
    OpFoldResult start = sliceBound(b, loc, (*starts)[i], dim);
    OpFoldResult end = sliceBound(b, loc, (*ends)[i], dim);
    std::optional<int64_t> cs = getConstantIntValue(start),
                           ce = getConstantIntValue(end);
    OpFoldResult size;
    if (cs && ce) {
      size = b.getIndexAttr(*ce > *cs ? (*ce - *cs + step - 1) / step : 0);
    } else {
      Value e = getValueOrCreateConstantIndexOp(b, loc, end);
      Value st = getValueOrCreateConstantIndexOp(b, loc, start);
      Value span = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, e, st),
          arith::ConstantIndexOp::create(b, loc, 0));
      size = arith::CeilDivSIOp::create(
                 b, loc, span, arith::ConstantIndexOp::create(b, loc, step))
                 .getResult();
    }
    std::optional<int64_t> empty = getConstantIntValue(size);
    offsets[*axis] = empty && *empty == 0 ? b.getIndexAttr(0) : start;
    sizes[*axis] = size;
    strides[*axis] = b.getIndexAttr(step);
  }
  Value out =
      tensor::ExtractSliceOp::create(b, loc, *x, offsets, sizes, strides);
  return ctx.setOutput(0, out);
}

LogicalResult split(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  if (ShapedType::isDynamic(dim))
    return ctx.error("splitting a dynamic dimension is not supported yet");
  SmallVector<int64_t> parts = ctx.getInts("split");
  if (ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> s = ctx.intsInput(1);
    if (failed(s))
      return failure();
    parts = *s;
  }
  unsigned n = ctx.numOutputs();
  if (parts.empty()) {
    int64_t chunk = (dim + n - 1) / n;
    for (unsigned i = 0; i < n; ++i)
      parts.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  int64_t sum = 0;
  for (int64_t p : parts)
    sum += p;
  if (parts.size() != n || sum != dim)
    return ctx.error("split sizes do not cover the axis");
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  int64_t offset = 0;
  for (unsigned i = 0; i < n; ++i) {
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = builders::tensorSizes(b, loc, *x);
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    // An empty part reads from offset 0 (an offset at the end is invalid).
    offsets[*axis] = b.getIndexAttr(parts[i] == 0 ? 0 : offset);
    sizes[*axis] = b.getIndexAttr(parts[i]);
    Value part =
        tensor::ExtractSliceOp::create(b, loc, *x, offsets, sizes, strides);
    if (failed(ctx.setOutput(i, part)))
      return failure();
    offset += parts[i];
  }
  return success();
}

/// Axes from the input (newer opsets) or the attribute (older ones).
FailureOr<SmallVector<int64_t>> axesOf(NodeContext &ctx, unsigned input) {
  if (ctx.hasInput(input))
    return ctx.intsInput(input);
  return ctx.getInts("axes");
}

/// Groups each output dim that is not in `unit` with the unit dims before it
/// (trailing unit dims join the last group).
SmallVector<ReassociationIndices> groupUnitDims(int64_t rank,
                                                ArrayRef<bool> unit) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t i = 0; i < rank; ++i) {
    pending.push_back(i);
    if (!unit[i]) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  return groups;
}

LogicalResult unsqueeze(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> axes = axesOf(ctx, 1);
  if (failed(x) || failed(axes))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank() + axes->size();
  SmallVector<bool> unit(rank, false);
  for (int64_t a : *axes) {
    FailureOr<int64_t> axis = ctx.normalizeAxis(a, rank);
    if (failed(axis))
      return failure();
    if (unit[*axis])
      return ctx.error("repeated axis");
    unit[*axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0, j = 0; i < rank; ++i)
    shape.push_back(unit[i] ? 1 : type.getDimSize(j++));
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value out = tensor::ExpandShapeOp::create(ctx.builder(), ctx.getLoc(),
                                            resultType, *x,
                                            groupUnitDims(rank, unit));
  return ctx.setOutput(0, out);
}

LogicalResult squeeze(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> axes = axesOf(ctx, 1);
  if (failed(x) || failed(axes))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  SmallVector<bool> unit(rank, false);
  if (axes->empty())
    for (int64_t i = 0; i < rank; ++i)
      unit[i] = type.getDimSize(i) == 1;
  for (int64_t a : *axes) {
    FailureOr<int64_t> axis = ctx.normalizeAxis(a, rank);
    if (failed(axis))
      return failure();
    if (type.getDimSize(*axis) != 1)
      return ctx.error("squeezed axis " + llvm::Twine(a) + " is not 1");
    unit[*axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    if (!unit[i])
      shape.push_back(type.getDimSize(i));
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value out = tensor::CollapseShapeOp::create(ctx.builder(), ctx.getLoc(),
                                              resultType, *x,
                                              groupUnitDims(rank, unit));
  return ctx.setOutput(0, out);
}

/// Flatten: [d0 * ... * d(axis-1), d(axis) * ... * d(r-1)] (an empty side
/// is 1).
LogicalResult flatten(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  int64_t axis = ctx.getInt("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.error("axis " + llvm::Twine(axis) + " is outside [-" +
                     llvm::Twine(rank) + ", " + llvm::Twine(rank) + "]");
  if (axis < 0)
    axis += rank;
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  SmallVector<ReassociationIndices> groups;
  for (auto [begin, end] : {std::pair{int64_t(0), axis}, {axis, rank}}) {
    if (begin == end)
      continue;
    groups.emplace_back();
    for (int64_t i = begin; i < end; ++i)
      groups.back().push_back(i);
  }
  Value v = *x;
  if (int64_t(groups.size()) != rank)
    v = tensor::CollapseShapeOp::create(b, loc, v, groups);
  if (groups.size() == 2)
    return ctx.setOutput(0, v);
  // One side is empty: add its unit dim.
  auto collapsed = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1)};
  SmallVector<int64_t> shape = {1, 1};
  int64_t wide = axis == 0 ? 1 : 0;
  SmallVector<ReassociationIndices> expand;
  if (collapsed.getRank() == 1) {
    sizes[wide] = tensor::getMixedSize(b, loc, v, 0);
    shape[wide] = collapsed.getDimSize(0);
    expand.push_back({0, 1});
  }
  Value out = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v, expand,
      sizes);
  return ctx.setOutput(0, out);
}

LogicalResult expand(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<SmallVector<OpFoldResult>> target = ctx.shapeInput(1);
  if (failed(x) || failed(target))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  SmallVector<OpFoldResult> in = builders::tensorSizes(b, loc, *x);
  int64_t rank = std::max<int64_t>(type.getRank(), target->size());
  // numpy broadcast of the input's extents with the target's: a target
  // extent of 1 keeps the input's, an input extent of 1 takes the target's.
  SmallVector<OpFoldResult> sizes;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t di = d - (rank - type.getRank());
    int64_t dt = d - (rank - int64_t(target->size()));
    OpFoldResult t = dt >= 0 ? (*target)[dt] : b.getIndexAttr(1);
    OpFoldResult v = di >= 0 ? in[di] : b.getIndexAttr(1);
    std::optional<int64_t> ct = getConstantIntValue(t),
                           cv = getConstantIntValue(v);
    OpFoldResult r;
    if (ct && *ct == 1)
      r = v;
    else if (cv && *cv == 1)
      r = t;
    else if (ct && cv && *ct != *cv)
      return ctx.error("input does not broadcast to the target shape");
    else
      r = cv ? v : t;
    sizes.push_back(r);
    std::optional<int64_t> cr = getConstantIntValue(r);
    shape.push_back(cr ? *cr : ShapedType::kDynamic);
  }
  MLIRContext *mctx = b.getContext();
  Value init = builders::emptyTensor(b, loc, sizes, type.getElementType());
  SmallVector<AffineMap> maps = {builders::broadcastMap(mctx, rank, type),
                                 AffineMap::getMultiDimIdentityMap(rank, mctx)};
  Value out = linalg::GenericOp::create(
                  b, loc, init.getType(), *x, init, maps,
                  builders::iterators(rank),
                  [](OpBuilder &nb, Location nl, ValueRange a) {
                    linalg::YieldOp::create(nb, nl, a[0]);
                  })
                  .getResult(0);
  return ctx.setOutput(0, out);
}

/// Pad (constant mode): the input placed at the leading pads inside a
/// tensor filled with constant_value.
LogicalResult pad(NodeContext &ctx) {
  if (ctx.getString("mode", "constant") != "constant")
    return ctx.error("only mode 'constant' is supported");
  FailureOr<Value> x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> pads = ctx.intsInput(1);
  if (failed(x) || failed(pads))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> axes;
  if (ctx.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> a = ctx.intsInput(3);
    if (failed(a))
      return failure();
    for (int64_t v : *a) {
      FailureOr<int64_t> axis = ctx.normalizeAxis(v, rank);
      if (failed(axis))
        return failure();
      axes.push_back(*axis);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (pads->size() != 2 * axes.size())
    return ctx.error("pads must hold two values per padded axis");
  Type element = type.getElementType();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  Value fill;
  if (ctx.hasInput(2)) {
    FailureOr<Value> v = ctx.input(2);
    if (failed(v))
      return failure();
    auto vt = cast<RankedTensorType>(v->getType());
    if (!vt.hasStaticShape() || vt.getNumElements() != 1 ||
        vt.getElementType() != element)
      return ctx.error("constant_value must be one value of the input type");
    SmallVector<Value> at(vt.getRank(),
                          arith::ConstantIndexOp::create(b, loc, 0));
    fill = tensor::ExtractOp::create(b, loc, *v, at);
  } else {
    fill = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  }
  SmallVector<OpFoldResult> sizes = builders::tensorSizes(b, loc, *x);
  SmallVector<OpFoldResult> inSizes(sizes), offsets(rank, b.getIndexAttr(0));
  for (auto [i, axis] : llvm::enumerate(axes)) {
    int64_t before = (*pads)[i], after = (*pads)[i + axes.size()];
    if (before < 0 || after < 0)
      return ctx.error("negative pads are not supported yet");
    std::optional<int64_t> c = getConstantIntValue(sizes[axis]);
    sizes[axis] =
        c ? OpFoldResult(b.getIndexAttr(*c + before + after))
          : OpFoldResult(arith::AddIOp::create(
                             b, loc,
                             getValueOrCreateConstantIndexOp(b, loc,
                                                             sizes[axis]),
                             arith::ConstantIndexOp::create(b, loc,
                                                            before + after))
                             .getResult());
    offsets[axis] = b.getIndexAttr(before);
  }
  Value init = builders::emptyTensor(b, loc, sizes, element);
  Value filled =
      linalg::FillOp::create(b, loc, ValueRange{fill}, init).getResult(0);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  Value out = tensor::InsertSliceOp::create(b, loc, *x, filled, offsets,
                                            inSizes, strides);
  return ctx.setOutput(0, out);
}

} // namespace

Value mlir::mnemo::onnx_import::transposeValue(OpBuilder &b, Location loc,
                                               Value x,
                                               ArrayRef<int64_t> perm) {
  // The identity moves nothing (and upstream's linalg.transpose verifier
  // crashes on a rank-0 one: a scalar's Transpose, found by fuzzing).
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> in = builders::tensorSizes(b, loc, x);
  SmallVector<OpFoldResult> sizes;
  for (int64_t p : perm)
    sizes.push_back(in[p]);
  Value init = builders::emptyTensor(b, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(b, loc, x, init, perm).getResult()[0];
}

Value mlir::mnemo::onnx_import::concatValues(OpBuilder &b, Location loc,
                                             ValueRange inputs, int64_t axis) {
  auto first = cast<RankedTensorType>(inputs[0].getType());
  // Offsets along the axis, folded while the extents are static.
  auto add = [&](OpFoldResult x, OpFoldResult y) -> OpFoldResult {
    std::optional<int64_t> cx = getConstantIntValue(x),
                           cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(*cx + *cy);
    return arith::AddIOp::create(b, loc,
                                 getValueOrCreateConstantIndexOp(b, loc, x),
                                 getValueOrCreateConstantIndexOp(b, loc, y))
        .getResult();
  };
  OpFoldResult total = b.getIndexAttr(0);
  for (Value v : inputs)
    total = add(total, tensor::getMixedSize(b, loc, v, axis));
  SmallVector<OpFoldResult> sizes = builders::tensorSizes(b, loc, inputs[0]);
  sizes[axis] = total;
  Value result = builders::emptyTensor(b, loc, sizes, first.getElementType());
  OpFoldResult offset = b.getIndexAttr(0);
  for (Value v : inputs) {
    // Empty inputs add nothing (and an offset at the end is invalid).
    if (cast<RankedTensorType>(v.getType()).getDimSize(axis) == 0)
      continue;
    SmallVector<OpFoldResult> offsets(first.getRank(), b.getIndexAttr(0));
    offsets[axis] = offset;
    SmallVector<OpFoldResult> strides(first.getRank(), b.getIndexAttr(1));
    result = tensor::InsertSliceOp::create(
        b, loc, v, result, offsets, builders::tensorSizes(b, loc, v), strides);
    offset = add(offset, tensor::getMixedSize(b, loc, v, axis));
  }
  return result;
}

void mlir::mnemo::onnx_import::registerShapeHandlers(HandlerRegistry &r) {
  r.add("", "Pad", 18, pad);
  r.add("", "Reshape", 5, reshape);
  r.add("", "Transpose", 1, transpose);
  r.add("", "Concat", 4, concat);
  r.add("", "Slice", 10, slice);
  r.add("", "Split", 2, split);
  r.add("", "Unsqueeze", 1, unsqueeze);
  r.add("", "Squeeze", 1, squeeze);
  r.add("", "Expand", 8, expand);
  r.add("", "Flatten", 1, flatten);
}

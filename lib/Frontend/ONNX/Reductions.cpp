//===- Reductions.cpp - ONNX reductions and Softmax -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ReduceSum/Mean/Max and Softmax as linalg.generic reductions followed by
// elementwise generics that read the reduced tensor along the kept dims.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

AffineMap mlir::mnemo::onnx_import::keptDimsMap(MLIRContext *ctx, int64_t rank,
                                                ArrayRef<int64_t> axes) {
  SmallVector<unsigned> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      kept.push_back(d);
  return builders::projection(ctx, rank, kept);
}

Value mlir::mnemo::onnx_import::reduceAxes(OpBuilder &b, Location loc, Value x,
                                           ArrayRef<int64_t> axes,
                                           Type accType, double init,
                                           Combine combine, Pre pre) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> all = builders::tensorSizes(b, loc, x), sizes;
  SmallVector<unsigned> reductions;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d))
      reductions.push_back(d);
    else
      sizes.push_back(all[d]);
  }
  Value acc = builders::filledTensor(b, loc, sizes, accType, init);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 keptDimsMap(ctx, rank, axes)};
  return linalg::GenericOp::create(
             b, loc, acc.getType(), x, acc, maps,
             builders::iterators(rank, reductions),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value v = pre ? pre(nb, nl, a[0]) : a[0];
               linalg::YieldOp::create(nb, nl, combine(nb, nl, a[1], v));
             })
      .getResult(0);
}

Value mlir::mnemo::onnx_import::mapGeneric(OpBuilder &b, Location loc,
                                           Value like, ValueRange inputs,
                                           ArrayRef<AffineMap> maps,
                                           Type element, ScalarBody body) {
  auto type = cast<RankedTensorType>(like.getType());
  Value init = builders::emptyTensor(b, loc, builders::tensorSizes(b, loc, like),
                                     element);
  SmallVector<AffineMap> all(maps);
  all.push_back(AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                  b.getContext()));
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, init, all,
             builders::iterators(type.getRank()),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, a.drop_back()));
             })
      .getResult(0);
}

namespace {

Value addF(OpBuilder &b, Location loc, Value acc, Value v) {
  return arith::AddFOp::create(b, loc, acc, v);
}
Value maxF(OpBuilder &b, Location loc, Value acc, Value v) {
  return arith::MaximumFOp::create(b, loc, acc, v);
}

/// Input 0, which must be a float tensor.
FailureOr<Value> floatInput(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  if (!isa<FloatType>(cast<RankedTensorType>(x->getType()).getElementType()))
    return ctx.error("expects a float input");
  return x;
}

LogicalResult softmax(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  Type element = type.getElementType();
  int64_t rank = type.getRank();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  MLIRContext *mctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, mctx);
  AffineMap kept = keptDimsMap(mctx, rank, *axis);
  Value max = reduceAxes(b, loc, *x, *axis, element,
                         -std::numeric_limits<double>::infinity(), maxF);
  Value e = mapGeneric(b, loc, *x, {*x, max}, {id, kept}, element,
                       [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                         // A row of -inf gives NaN, as in ONNX.
                         Value d = arith::SubFOp::create(nb, nl, a[0], a[1]);
                         return math::ExpOp::create(nb, nl, d);
                       });
  Value sum = reduceAxes(b, loc, e, *axis, element, 0.0, addF);
  Value y = mapGeneric(b, loc, *x, {e, sum}, {id, kept}, element,
                       [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                         return arith::DivFOp::create(nb, nl, a[0], a[1]);
                       });
  return ctx.setOutput(0, y);
}

enum class ReduceKind { Sum, Mean, Max };

template <ReduceKind kind, bool axesAsInput>
LogicalResult reduce(NodeContext &ctx) {
  // Integer sums (valid-token counts from attention masks); other
  // reductions need floats.
  bool intSum = false;
  if (kind == ReduceKind::Sum) {
    FailureOr<RankedTensorType> t = ctx.inputType(0);
    if (failed(t))
      return failure();
    intSum = isa<IntegerType>(t->getElementType());
  }
  FailureOr<Value> x = intSum ? ctx.input(0) : floatInput(ctx);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  Type element = type.getElementType();
  int64_t rank = type.getRank();
  SmallVector<int64_t> given = ctx.getInts("axes");
  if (axesAsInput && ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> a = ctx.intsInput(1);
    if (failed(a))
      return failure();
    given = *a;
  }
  SmallVector<int64_t> axes;
  for (int64_t a : given) {
    FailureOr<int64_t> axis = ctx.normalizeAxis(a, rank);
    if (failed(axis))
      return failure();
    if (!llvm::is_contained(axes, *axis))
      axes.push_back(*axis);
  }
  if (axes.empty()) {
    if (ctx.getInt("noop_with_empty_axes", 0))
      return ctx.setOutput(0, *x);
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  llvm::sort(axes);
  // The mean's divisor, as a float: a product of extents as an integer
  // could overflow (found by the fuzzer: a dynamic extent multiplied in).
  double count = 1;
  for (int64_t a : axes) {
    if (kind != ReduceKind::Mean)
      break;
    if (type.isDynamicDim(a))
      return ctx.error("mean over a dynamic dimension is not supported yet");
    count *= static_cast<double>(type.getDimSize(a));
  }
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  Value r;
  if (intSum) {
    // An integer accumulator of the element type, zero-filled.
    SmallVector<OpFoldResult> all = builders::tensorSizes(b, loc, *x), sizes;
    SmallVector<unsigned> reductions;
    for (int64_t d = 0; d < rank; ++d) {
      if (llvm::is_contained(axes, d))
        reductions.push_back(d);
      else
        sizes.push_back(all[d]);
    }
    Value zero = arith::ConstantOp::create(b, loc, element,
                                           b.getIntegerAttr(element, 0));
    Value acc = linalg::FillOp::create(
                    b, loc, zero,
                    builders::emptyTensor(b, loc, sizes, element))
                    .getResult(0);
    MLIRContext *mctx = b.getContext();
    r = linalg::GenericOp::create(
            b, loc, acc.getType(), *x, acc,
            ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, mctx),
                                keptDimsMap(mctx, rank, axes)},
            builders::iterators(rank, reductions),
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              linalg::YieldOp::create(
                  nb, nl, arith::AddIOp::create(nb, nl, a[1], a[0]).getResult());
            })
            .getResult(0);
  } else {
    r = kind == ReduceKind::Max
            ? reduceAxes(b, loc, *x, axes, element,
                         -std::numeric_limits<double>::infinity(), maxF)
            : reduceAxes(b, loc, *x, axes, element, 0.0, addF);
  }
  if (kind == ReduceKind::Mean) {
    auto rt = cast<RankedTensorType>(r.getType());
    r = mapGeneric(b, loc, r, r,
                   AffineMap::getMultiDimIdentityMap(rt.getRank(),
                                                     b.getContext()),
                   element, [&](OpBuilder &nb, Location nl, ValueRange a) {
                     return arith::DivFOp::create(
                                nb, nl, a[0],
                                builders::floatConst(nb, nl, element, count))
                         .getResult();
                   });
  }
  if (ctx.getInt("keepdims", 1)) {
    SmallVector<int64_t> shape(type.getShape());
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (int64_t d = 0; d < rank; ++d) {
      pending.push_back(d);
      if (llvm::is_contained(axes, d)) {
        shape[d] = 1;
        continue;
      }
      groups.push_back(pending);
      pending.clear();
    }
    if (!pending.empty() && !groups.empty())
      groups.back().append(pending.begin(), pending.end());
    r = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, element), r, groups);
  }
  return ctx.setOutput(0, r);
}

/// CumSum along a constant axis (exclusive, reverse): for each output
/// element the sum over the axis of the elements at or before it (after
/// it, when reversed), as a reduction over a second loop on the axis.
LogicalResult cumSum(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> axisIn = ctx.intsInput(1);
  if (failed(x) || failed(axisIn))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  if (axisIn->size() != 1)
    return ctx.error("axis must hold one value");
  FailureOr<int64_t> axis = ctx.normalizeAxis((*axisIn)[0], rank);
  if (failed(axis))
    return failure();
  bool exclusive = ctx.getInt("exclusive", 0), reverse = ctx.getInt("reverse", 0);
  Type element = type.getElementType();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  MLIRContext *mctx = b.getContext();
  bool isFloatElem = isa<FloatType>(element);
  TypedAttr zeroAttr = isFloatElem ? TypedAttr(b.getFloatAttr(element, 0.0))
                                   : TypedAttr(b.getIntegerAttr(element, 0));
  Value zero = arith::ConstantOp::create(b, loc, zeroAttr);
  Value acc = linalg::FillOp::create(
                  b, loc, zero,
                  builders::emptyTensor(b, loc,
                                        builders::tensorSizes(b, loc, *x),
                                        element))
                  .getResult(0);
  // Loops: the output's dims, then j along the axis (reduction).
  SmallVector<AffineExpr> in;
  for (int64_t d = 0; d < rank; ++d)
    in.push_back(getAffineDimExpr(d == *axis ? rank : d, mctx));
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank + 1, 0, in, mctx),
      builders::projection(mctx, rank + 1,
                           llvm::to_vector(llvm::seq<unsigned>(0, rank)))};
  Value out =
      linalg::GenericOp::create(
          b, loc, acc.getType(), *x, acc, maps,
          builders::iterators(rank + 1, {unsigned(rank)}),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value i = linalg::IndexOp::create(nb, nl, *axis);
            Value j = linalg::IndexOp::create(nb, nl, rank);
            auto pred = reverse ? (exclusive ? arith::CmpIPredicate::sgt
                                             : arith::CmpIPredicate::sge)
                                : (exclusive ? arith::CmpIPredicate::slt
                                             : arith::CmpIPredicate::sle);
            Value take = arith::CmpIOp::create(nb, nl, pred, j, i);
            Value sum = isFloatElem
                            ? arith::AddFOp::create(nb, nl, a[1], a[0])
                                  .getResult()
                            : arith::AddIOp::create(nb, nl, a[1], a[0])
                                  .getResult();
            linalg::YieldOp::create(
                nb, nl,
                arith::SelectOp::create(nb, nl, take, sum, a[1]).getResult());
          })
          .getResult(0);
  return ctx.setOutput(0, out);
}

} // namespace

void mlir::mnemo::onnx_import::registerReductionHandlers(HandlerRegistry &r) {
  r.add("", "CumSum", 11, cumSum);
  r.add("", "Softmax", 13, softmax);
  r.add("", "ReduceSum", 1, reduce<ReduceKind::Sum, false>);
  r.add("", "ReduceSum", 13, reduce<ReduceKind::Sum, true>);
  r.add("", "ReduceMean", 1, reduce<ReduceKind::Mean, false>);
  r.add("", "ReduceMean", 18, reduce<ReduceKind::Mean, true>);
  r.add("", "ReduceMax", 1, reduce<ReduceKind::Max, false>);
  r.add("", "ReduceMax", 18, reduce<ReduceKind::Max, true>);
}

//===- Normalization.cpp - ONNX RMS and layer normalization -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// RMSNormalization-23 over the last dim with a vector scale becomes
// mnemo.rms_norm. Other RMSNormalization-23 and LayerNormalization-17 forms
// normalize over the trailing dims from `axis`: a reduction to the leading
// dims, then one elementwise generic that applies the scale (and bias),
// broadcast on the right.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {

struct NormOperands {
  Value x, scale, bias;
  Type element, compute;
  SmallVector<int64_t> axes;
  int64_t count = 1;
};

FailureOr<NormOperands> normOperands(NodeContext &ctx, bool withBias) {
  NormOperands n;
  FailureOr<Value> x = ctx.input(0), scale = ctx.input(1);
  if (failed(x) || failed(scale))
    return failure();
  n.x = *x;
  n.scale = *scale;
  if (withBias && ctx.hasInput(2)) {
    FailureOr<Value> bias = ctx.input(2);
    if (failed(bias))
      return failure();
    n.bias = *bias;
  }
  auto type = cast<RankedTensorType>(n.x.getType());
  n.element = type.getElementType();
  if (!isa<FloatType>(n.element) ||
      cast<RankedTensorType>(n.scale.getType()).getElementType() != n.element)
    return ctx.error("expects float input and scale of one element type");
  int64_t stash = ctx.getInt("stash_type", 1);
  n.compute = stash == 1 ? Float32Type::get(ctx.getContext())
                         : builders::computeType(n.element);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  for (int64_t d = *axis; d < type.getRank(); ++d) {
    if (type.isDynamicDim(d))
      return ctx.error("normalizing a dynamic dimension is not supported yet");
    n.axes.push_back(d);
    n.count *= type.getDimSize(d);
  }
  for (Value p : {n.scale, n.bias})
    if (p && cast<RankedTensorType>(p.getType()).getRank() > type.getRank())
      return ctx.error("scale or bias has a higher rank than the input");
  return n;
}

/// y = (x - mean) * rsqrt(var + eps) * scale (+ bias); `center` false gives
/// RMS normalization (no mean, mean of squares).
LogicalResult normalize(NodeContext &ctx, bool center) {
  FailureOr<NormOperands> n = normOperands(ctx, center);
  if (failed(n))
    return failure();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  MLIRContext *mctx = b.getContext();
  Type ct = n->compute;
  auto type = cast<RankedTensorType>(n->x.getType());
  int64_t rank = type.getRank();
  double eps = ctx.getFloat("epsilon", 1e-5f);
  // RMS normalization over the last dim with a vector scale is
  // mnemo.rms_norm; other forms stay generic below.
  auto scaleType = cast<RankedTensorType>(n->scale.getType());
  if (!center && n->axes.size() == 1 && n->axes[0] == rank - 1 &&
      scaleType.getRank() == 1 &&
      scaleType.getDimSize(0) == type.getDimSize(rank - 1) &&
      ct == builders::computeType(n->element) && ctx.numOutputs() == 1) {
    Value y = RmsNormOp::create(b, loc, type, n->x, n->scale,
                                b.getF64FloatAttr(eps), UnitAttr());
    ctx.raised("rms_norm (RMSNormalization)");
    return ctx.setOutput(0, y);
  }
  auto toCompute = [&](OpBuilder &nb, Location nl, Value v) {
    return builders::castFloat(nb, nl, v, ct);
  };
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, mctx);
  AffineMap kept = keptDimsMap(mctx, rank, n->axes);
  auto scaleBy = [&](OpBuilder &nb, Location nl, Value v) {
    return arith::DivFOp::create(
        nb, nl, v, builders::floatConst(nb, nl, ct, double(n->count)));
  };

  Value mean;
  if (center) {
    Value sum = reduceAxes(
        b, loc, n->x, n->axes, ct, 0.0,
        [](OpBuilder &nb, Location nl, Value acc, Value v) -> Value {
          return arith::AddFOp::create(nb, nl, acc, v);
        },
        toCompute);
    mean = mapGeneric(b, loc, sum, sum,
                      AffineMap::getMultiDimIdentityMap(
                          cast<RankedTensorType>(sum.getType()).getRank(),
                          mctx),
                      ct, [&](OpBuilder &nb, Location nl, ValueRange a) {
                        return scaleBy(nb, nl, a[0]).getResult();
                      });
  }
  // Sum of squares (of deviations when centering).
  Value centered = n->x;
  if (center)
    centered = mapGeneric(b, loc, n->x, {n->x, mean}, {id, kept}, ct,
                          [&](OpBuilder &nb, Location nl, ValueRange a) {
                            return arith::SubFOp::create(
                                       nb, nl, toCompute(nb, nl, a[0]), a[1])
                                .getResult();
                          });
  Value squares = reduceAxes(
      b, loc, centered, n->axes, ct, 0.0,
      [](OpBuilder &nb, Location nl, Value acc, Value v) -> Value {
        return arith::AddFOp::create(nb, nl, acc, v);
      },
      [&](OpBuilder &nb, Location nl, Value v) -> Value {
        v = toCompute(nb, nl, v);
        return arith::MulFOp::create(nb, nl, v, v);
      });

  SmallVector<Value> inputs = {centered, squares, n->scale};
  SmallVector<AffineMap> maps = {
      id, kept,
      builders::broadcastMap(mctx, rank,
                             cast<RankedTensorType>(n->scale.getType()))};
  if (n->bias) {
    inputs.push_back(n->bias);
    maps.push_back(builders::broadcastMap(
        mctx, rank, cast<RankedTensorType>(n->bias.getType())));
  }
  Value y = mapGeneric(
      b, loc, n->x, inputs, maps, n->element,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value var = scaleBy(nb, nl, a[1]);
        Value inv = math::RsqrtOp::create(
            nb, nl,
            arith::AddFOp::create(nb, nl, var,
                                  builders::floatConst(nb, nl, ct, eps)));
        Value v = arith::MulFOp::create(nb, nl, toCompute(nb, nl, a[0]), inv);
        v = arith::MulFOp::create(nb, nl, v, toCompute(nb, nl, a[2]));
        if (a.size() > 3)
          v = arith::AddFOp::create(nb, nl, v, toCompute(nb, nl, a[3]));
        return builders::castFloat(nb, nl, v, n->element);
      });
  if (ctx.numOutputs() > 1)
    return ctx.error("the mean and inverse deviation outputs are not "
                     "supported yet");
  return ctx.setOutput(0, y);
}

LogicalResult rmsNormalization(NodeContext &ctx) {
  return normalize(ctx, /*center=*/false);
}
LogicalResult layerNormalization(NodeContext &ctx) {
  return normalize(ctx, /*center=*/true);
}

/// com.microsoft SkipSimplifiedLayerNormalization: s = input + skip
/// (+ bias), output = rms_norm(s) * gamma over the last dim; output 3 is s.
LogicalResult skipSimplifiedLayerNormalization(NodeContext &ctx) {
  for (unsigned i : {1u, 2u})
    if (i < ctx.numOutputs() && !ctx.proto().output(i).empty())
      return ctx.error("the mean and inverse deviation outputs are not "
                       "supported yet");
  SmallVector<Value> terms;
  for (unsigned i : {0u, 1u, 3u}) {
    if (i == 3 && !ctx.hasInput(3))
      continue;
    FailureOr<Value> v = ctx.input(i);
    if (failed(v))
      return failure();
    terms.push_back(*v);
  }
  FailureOr<Value> gamma = ctx.input(2);
  if (failed(gamma))
    return failure();
  auto type = cast<RankedTensorType>(terms[0].getType());
  auto gType = cast<RankedTensorType>(gamma->getType());
  int64_t rank = type.getRank();
  if (!isa<FloatType>(type.getElementType()) || gType.getRank() != 1 ||
      gType.getElementType() != type.getElementType() || rank < 1 ||
      gType.getDimSize(0) != type.getDimSize(rank - 1))
    return ctx.error("expects float input and a gamma over its last dim");
  FailureOr<Value> sum = broadcastElementwise(
      ctx, terms, type.getElementType(),
      [&](OpBuilder &nb, Location loc, ValueRange v) -> Value {
        Value acc = v[0];
        for (Value t : v.drop_front())
          acc = arith::AddFOp::create(nb, loc, acc, t);
        return acc;
      },
      type.getShape());
  if (failed(sum))
    return failure();
  OpBuilder &b = ctx.builder();
  double eps = ctx.getFloat("epsilon", 1e-12f);
  Value y = RmsNormOp::create(b, ctx.getLoc(), type, *sum, *gamma,
                              b.getF64FloatAttr(eps), UnitAttr());
  ctx.raised("rms_norm (SkipSimplifiedLayerNormalization)");
  if (ctx.numOutputs() > 3 && !ctx.proto().output(3).empty() &&
      failed(ctx.setOutput(3, *sum)))
    return failure();
  return ctx.setOutput(0, y);
}

} // namespace

void mlir::mnemo::onnx_import::registerNormalizationHandlers(
    HandlerRegistry &r) {
  r.add("", "RMSNormalization", 23, rmsNormalization);
  r.add("", "LayerNormalization", 17, layerNormalization);
  // ONNX Runtime's RMS normalization, registered in both domains.
  r.add("", "SimplifiedLayerNormalization", 1, rmsNormalization);
  r.add("com.microsoft", "SimplifiedLayerNormalization", 1, rmsNormalization);
  r.add("com.microsoft", "SkipSimplifiedLayerNormalization", 1,
        skipSimplifiedLayerNormalization);
}

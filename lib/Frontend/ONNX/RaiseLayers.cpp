//===- RaiseLayers.cpp - exported RMSNorm and SwiGLU to mnemo ops ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// * RMSNorm written out (exports before opset 23):
//     Mul(w, Div(x, Sqrt(Add(ReduceMean(Pow(x, 2), axes=[-1]), eps))))
//   with Mul(x, x) for the square, Mul(x, Reciprocal(Sqrt(..))) for the
//   division, operands of Mul/Add in either order -> mnemo.rms_norm.
// * SwiGLU: Mul(Mul(g, Sigmoid(g)), up) -> mnemo.swiglu(g, up).
//
//===----------------------------------------------------------------------===//

#include "Raising.h"

#include "dialects/Mnemo/IR/MnemoOps.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {

/// The two inputs of a binary node, swapped when `swap`.
std::pair<std::string, std::string> operands(const onnx::NodeProto &node,
                                             bool swap) {
  std::string a = inputName(node, 0).str(), b = inputName(node, 1).str();
  return swap ? std::make_pair(b, a) : std::make_pair(a, b);
}

/// mean(x^2) over the last axis, keeping it: returns x.
std::optional<std::string> meanSquare(RaiseContext &ctx,
                                      const std::string &name) {
  const onnx::NodeProto *mean = ctx.def(name, "ReduceMean");
  if (!mean || ctx.intAttr(*mean, "keepdims", 1) != 1)
    return std::nullopt;
  RankedTensorType t = ctx.type(inputName(*mean, 0).str());
  auto axes = ctx.intsOperand(*mean, "axes", 1, 18);
  if (!t || !axes || axes->size() != 1 ||
      ((*axes)[0] != -1 && (*axes)[0] != t.getRank() - 1))
    return std::nullopt;
  std::string x;
  if (const onnx::NodeProto *pow = ctx.def(inputName(*mean, 0).str(), "Pow")) {
    std::optional<double> e = ctx.scalar(inputName(*pow, 1).str());
    if (!e || *e != 2.0)
      return std::nullopt;
    x = inputName(*pow, 0).str();
    ctx.cover(pow);
  } else if (const onnx::NodeProto *sq =
                 ctx.def(inputName(*mean, 0).str(), "Mul")) {
    if (inputName(*sq, 0).str() != inputName(*sq, 1).str())
      return std::nullopt;
    x = inputName(*sq, 0).str();
    ctx.cover(sq);
  } else {
    return std::nullopt;
  }
  ctx.cover(mean);
  return x;
}

/// Sqrt(Add(mean(x^2), eps)): returns (x, eps).
std::optional<std::pair<std::string, double>>
rootMeanSquare(RaiseContext &ctx, const std::string &name) {
  const onnx::NodeProto *sqrt = ctx.def(name, "Sqrt");
  const onnx::NodeProto *add =
      sqrt ? ctx.def(inputName(*sqrt, 0).str(), "Add") : nullptr;
  if (!add)
    return std::nullopt;
  for (bool swap : {false, true}) {
    auto [meanName, epsName] = operands(*add, swap);
    std::optional<double> eps = ctx.scalar(epsName);
    if (!eps)
      continue;
    std::optional<std::string> x = meanSquare(ctx, meanName);
    if (!x)
      continue;
    ctx.cover(sqrt);
    ctx.cover(add);
    return std::make_pair(*x, *eps);
  }
  return std::nullopt;
}

/// x / rms(x), as Div or as Mul by Reciprocal: returns (x, eps).
std::optional<std::pair<std::string, double>>
normalized(RaiseContext &ctx, const std::string &name) {
  if (const onnx::NodeProto *div = ctx.def(name, "Div")) {
    auto rms = rootMeanSquare(ctx, inputName(*div, 1).str());
    if (!rms || rms->first != inputName(*div, 0).str())
      return std::nullopt;
    ctx.cover(div);
    return rms;
  }
  const onnx::NodeProto *mul = ctx.def(name, "Mul");
  if (!mul)
    return std::nullopt;
  for (bool swap : {false, true}) {
    auto [x, inv] = operands(*mul, swap);
    const onnx::NodeProto *recip = ctx.def(inv, "Reciprocal");
    if (!recip)
      continue;
    auto rms = rootMeanSquare(ctx, inputName(*recip, 0).str());
    if (!rms || rms->first != x)
      continue;
    ctx.cover(mul);
    ctx.cover(recip);
    return rms;
  }
  return std::nullopt;
}

} // namespace

Value mlir::mnemo::onnx_import::raiseRmsNorm(RaiseContext &ctx) {
  const onnx::NodeProto &mul = ctx.anchor();
  for (bool swap : {false, true}) {
    auto [weight, norm] = operands(mul, swap);
    RankedTensorType w = ctx.type(weight);
    if (!w || w.getRank() != 1)
      continue;
    auto found = normalized(ctx, norm);
    if (!found)
      continue;
    RankedTensorType x = ctx.type(found->first);
    if (!x || x.getRank() < 1 || x.getElementType() != w.getElementType() ||
        w.isDynamicDim(0) || x.getDimSize(x.getRank() - 1) != w.getDimSize(0))
      return {};
    OpBuilder &b = ctx.builder();
    return RmsNormOp::create(b, ctx.getLoc(), x, ctx.value(found->first),
                             ctx.value(weight),
                             b.getF64FloatAttr(found->second),
                             /*unit_offset=*/UnitAttr());
  }
  return {};
}

Value mlir::mnemo::onnx_import::raiseSwiGlu(RaiseContext &ctx) {
  const onnx::NodeProto &mul = ctx.anchor();
  for (bool swap : {false, true}) {
    auto [silu, up] = operands(mul, swap);
    const onnx::NodeProto *inner = ctx.def(silu, "Mul");
    if (!inner)
      continue;
    for (bool innerSwap : {false, true}) {
      auto [gate, sig] = operands(*inner, innerSwap);
      const onnx::NodeProto *sigmoid = ctx.def(sig, "Sigmoid");
      if (!sigmoid || inputName(*sigmoid, 0).str() != gate)
        continue;
      RankedTensorType g = ctx.type(gate), u = ctx.type(up);
      if (!g || g != u)
        return {};
      ctx.cover(inner);
      ctx.cover(sigmoid);
      return SwiGluOp::create(ctx.builder(), ctx.getLoc(), g, ctx.value(gate),
                              ctx.value(up), FloatAttr());
    }
  }
  return {};
}

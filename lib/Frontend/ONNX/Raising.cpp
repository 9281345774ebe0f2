//===- Raising.cpp - what raising patterns see of the graph -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Raising.h"

#include "GraphImporter.h"

using namespace mlir;
using namespace mlir::mnemo::onnx_import;

const onnx::NodeProto *RaiseContext::def(llvm::StringRef name,
                                         llvm::StringRef opType) {
  const onnx::NodeProto *node = graph.producer(name);
  if (!node || node->op_type() != opType ||
      !(node->domain().empty() || node->domain() == "ai.onnx"))
    return nullptr;
  return node;
}

Value RaiseContext::value(llvm::StringRef name) {
  FailureOr<Value> v = graph.lookup(name);
  return succeeded(v) ? *v : Value();
}

RankedTensorType RaiseContext::type(llvm::StringRef name) {
  if (DenseElementsAttr c = graph.lookupConstant(name))
    return dyn_cast<RankedTensorType>(c.getType());
  Value v = value(name);
  return v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

DenseElementsAttr RaiseContext::constant(llvm::StringRef name) {
  return graph.lookupConstant(name);
}

std::optional<double> RaiseContext::scalar(llvm::StringRef name) {
  DenseElementsAttr c = constant(name);
  if (!c || !isa<FloatType>(c.getElementType()))
    return std::nullopt;
  if (!c.isSplat() && c.getNumElements() != 1)
    return std::nullopt;
  return (*c.getValues<APFloat>().begin()).convertToDouble();
}

int64_t RaiseContext::intAttr(const onnx::NodeProto &node,
                              llvm::StringRef name, int64_t otherwise) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::INT)
      return a.i();
  return otherwise;
}

std::optional<SmallVector<int64_t>>
RaiseContext::intsOperand(const onnx::NodeProto &node, llvm::StringRef name,
                          unsigned input, int64_t since) {
  if (opset() >= since) {
    if (int(input) >= node.input_size() || node.input(input).empty())
      return SmallVector<int64_t>();
    DenseElementsAttr c = constant(node.input(input));
    if (!c || !isa<IntegerType>(c.getElementType()))
      return std::nullopt;
    return toInt64s(c);
  }
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return SmallVector<int64_t>(a.ints().begin(), a.ints().end());
  return SmallVector<int64_t>();
}

int64_t RaiseContext::opset() const { return graph.opset(); }

std::optional<RaiseContext::SliceSpec>
RaiseContext::slice(const onnx::NodeProto &node) {
  if (node.input_size() < 3)
    return std::nullopt;
  RankedTensorType in = type(node.input(0));
  if (!in)
    return std::nullopt;
  auto ints = [&](unsigned i) -> std::optional<SmallVector<int64_t>> {
    if (int(i) >= node.input_size() || node.input(i).empty())
      return SmallVector<int64_t>();
    DenseElementsAttr c = constant(node.input(i));
    if (!c || !isa<IntegerType>(c.getElementType()))
      return std::nullopt;
    return toInt64s(c);
  };
  auto starts = ints(1), ends = ints(2), axes = ints(3), steps = ints(4);
  if (!starts || !ends || !axes || !steps || starts->size() != 1 ||
      ends->size() != 1 || axes->size() > 1 || steps->size() > 1)
    return std::nullopt;
  int64_t rank = in.getRank();
  int64_t axis = axes->empty() ? 0 : (*axes)[0];
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank || in.isDynamicDim(axis))
    return std::nullopt;
  int64_t n = in.getDimSize(axis);
  int64_t step = steps->empty() ? 1 : (*steps)[0];
  if (step <= 0)
    return std::nullopt;
  auto clampIndex = [&](int64_t v) {
    if (v < 0)
      v += n;
    return std::clamp<int64_t>(v, 0, n);
  };
  return SliceSpec{axis, clampIndex((*starts)[0]), clampIndex((*ends)[0]),
                   step};
}

ArrayRef<RaisePattern> mlir::mnemo::onnx_import::raisePatterns() {
  static const RaisePattern patterns[] = {
      {"attention (MatMul-Softmax-MatMul)", "MatMul", raiseAttention},
      {"rope_tables (rotate-half)", "Add", raiseRopeRotateHalf},
      {"rope_tables (interleaved)", "Add", raiseRopeInterleaved},
      {"rope_tables (split halves)", "Concat", raiseRopeSplitHalves},
      {"rms_norm (ReduceMean-Sqrt)", "Mul", raiseRmsNorm},
      {"swiglu (Sigmoid-Mul)", "Mul", raiseSwiGlu},
  };
  return patterns;
}

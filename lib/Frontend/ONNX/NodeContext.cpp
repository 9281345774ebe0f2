//===- NodeContext.cpp - handler-side view of a node ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// NodeContext accessors (inputs, constants, attributes, outputs, errors) and
// the handler registry.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

LogicalResult NodeContext::error(const llvm::Twine &message) {
  graph.fail("node '" + cast<NameLoc>(loc).getName().getValue() + "' (" +
             node.op_type() + "): " + message);
  return failure();
}

LogicalResult NodeContext::verifyBuilt(Operation *op, const llvm::Twine &what) {
  std::string message;
  {
    // The verifier's diagnostic joins this node's error instead of being
    // printed as a line of its own.
    ScopedDiagnosticHandler capture(op->getContext(), [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    if (succeeded(mlir::verify(op)))
      return success();
  }
  return error(what + (message.empty() ? "" : ": " + message));
}

void NodeContext::raised(llvm::StringRef what) {
  graph.noteRaised(what, {&node});
}

bool NodeContext::hasInput(unsigned i) const {
  return int(i) < node.input_size() && !node.input(i).empty();
}

FailureOr<Value> NodeContext::input(unsigned i) {
  if (!hasInput(i)) {
    (void)error("missing input " + llvm::Twine(i));
    return failure();
  }
  FailureOr<Value> v = graph.lookup(node.input(i));
  if (failed(v))
    (void)error("input '" + node.input(i) + "' is not defined");
  return v;
}

FailureOr<RankedTensorType> NodeContext::inputType(unsigned i) {
  FailureOr<Value> v = input(i);
  if (failed(v))
    return failure();
  auto type = dyn_cast<RankedTensorType>(v->getType());
  if (!type) {
    (void)error("input '" + node.input(i) + "' is not a ranked tensor");
    return failure();
  }
  return type;
}

FailureOr<DenseElementsAttr> NodeContext::constantInput(unsigned i) {
  if (!hasInput(i)) {
    (void)error("missing input " + llvm::Twine(i));
    return failure();
  }
  if (DenseElementsAttr c = graph.lookupConstant(node.input(i)))
    return c;
  (void)error("input '" + node.input(i) +
              "' must be a constant (computed values are not supported yet)");
  return failure();
}

FailureOr<SmallVector<int64_t>> NodeContext::intsInput(unsigned i) {
  FailureOr<DenseElementsAttr> c = constantInput(i);
  if (failed(c))
    return failure();
  if (!c->getElementType().isInteger()) {
    (void)error("input '" + node.input(i) + "' must be an integer tensor");
    return failure();
  }
  return toInt64s(*c);
}

std::pair<Value, int64_t>
NodeContext::canonicalExtent(std::pair<Value, int64_t> e) const {
  return graph.canonicalExtent(e);
}

FailureOr<SmallVector<OpFoldResult>> NodeContext::shapeInput(unsigned i) {
  if (hasInput(i))
    if (const SmallVector<OpFoldResult> *k = graph.lookupKnown(node.input(i)))
      return *k;
  FailureOr<SmallVector<int64_t>> ints = intsInput(i);
  if (failed(ints))
    return failure();
  SmallVector<OpFoldResult> out;
  for (int64_t v : *ints)
    out.push_back(b.getIndexAttr(v));
  return out;
}

const onnx::AttributeProto *NodeContext::attr(llvm::StringRef name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeContext::getInt(llvm::StringRef name, int64_t otherwise) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : otherwise;
}

float NodeContext::getFloat(llvm::StringRef name, float otherwise) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->f() : otherwise;
}

SmallVector<int64_t> NodeContext::getInts(llvm::StringRef name) const {
  SmallVector<int64_t> out;
  if (const onnx::AttributeProto *a = attr(name))
    out.append(a->ints().begin(), a->ints().end());
  return out;
}

std::string NodeContext::getString(llvm::StringRef name,
                                   llvm::StringRef otherwise) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->s() : otherwise.str();
}

FailureOr<DenseElementsAttr>
NodeContext::loadTensor(const onnx::TensorProto &tensor) {
  std::string why;
  FailureOr<DenseElementsAttr> value = graph.loadTensor(tensor, why);
  if (failed(value))
    (void)error("tensor '" + tensor.name() + "': " + why);
  return value;
}

LogicalResult NodeContext::setOutput(unsigned i, Value value) {
  if (int(i) >= node.output_size() || node.output(i).empty())
    return success();
  if (!graph.define(node.output(i), value))
    return error("output '" + node.output(i) + "' is defined twice");
  return success();
}

LogicalResult NodeContext::setConstantOutput(unsigned i,
                                             DenseElementsAttr value) {
  if (int(i) >= node.output_size() || node.output(i).empty())
    return success();
  if (!graph.defineConstant(node.output(i), value))
    return error("output '" + node.output(i) + "' is defined twice");
  return success();
}

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    (void)error("axis " + llvm::Twine(axis) + " is out of range for rank " +
                llvm::Twine(rank));
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Registry and entry point
//===----------------------------------------------------------------------===//

void HandlerRegistry::add(llvm::StringRef domain, llvm::StringRef opType,
                          int64_t since, Handler handler) {
  handlers[{domain.str(), opType.str()}][since] = handler;
}

Handler HandlerRegistry::lookup(llvm::StringRef domain, llvm::StringRef opType,
                                int64_t opset) const {
  auto it = handlers.find({domain.str(), opType.str()});
  if (it == handlers.end())
    return nullptr;
  auto version = it->second.upper_bound(opset);
  if (version == it->second.begin())
    return nullptr;
  return std::prev(version)->second;
}

void HandlerRegistry::forEach(
    llvm::function_ref<void(llvm::StringRef, llvm::StringRef, int64_t)> fn)
    const {
  for (const auto &[key, versions] : handlers)
    for (const auto &version : versions)
      fn(key.first, key.second, version.first);
}

const HandlerRegistry &HandlerRegistry::get() {
  static const HandlerRegistry registry = [] {
    HandlerRegistry r;
    registerElementwiseHandlers(r);
    registerMatMulHandlers(r);
    registerShapeHandlers(r);
    registerIndexingHandlers(r);
    registerReductionHandlers(r);
    registerNormalizationHandlers(r);
    registerAttentionHandlers(r);
    registerRotaryHandlers(r);
    registerContribAttentionHandlers(r);
    return r;
  }();
  return registry;
}

SmallVector<int64_t> mlir::mnemo::onnx_import::toInt64s(DenseElementsAttr attr) {
  SmallVector<int64_t> out;
  for (const APInt &v : attr.getValues<APInt>())
    out.push_back(v.getSExtValue());
  return out;
}


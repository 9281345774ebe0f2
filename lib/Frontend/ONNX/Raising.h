//===- Raising.h - ONNX subgraphs raised into mnemo ops ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Raising patterns recognize what exporters decompose (attention as
// MatMul/Softmax/MatMul, RoPE as Slice/Neg/Concat/Mul/Add, RMSNorm as
// Pow/ReduceMean/Sqrt/Div/Mul, SwiGLU as Sigmoid/Mul) and import the whole
// subgraph as one mnemo op.
//
// A pattern is tried when the importer reaches its anchor, the subgraph's
// last node. Everything before the anchor has been imported already, op by
// op; a pattern that matches defines the anchor's output from the mnemo op
// it builds, which leaves the ops of the subgraph's interior without users,
// and the importer erases them at the end. A pattern therefore never changes
// what the graph computes: an interior value that is also used elsewhere
// simply stays alive. A pattern that does not match builds nothing.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_ONNX_RAISING_H
#define MNEMO_LIB_FRONTEND_ONNX_RAISING_H

#include "Importer.h"

#include <optional>

namespace mlir::mnemo::onnx_import {

class GraphImporter;

/// The graph around one anchor node, for matching, and a builder at the
/// anchor's position, for emitting.
class RaiseContext {
public:
  RaiseContext(GraphImporter &graph, const onnx::NodeProto &anchor,
               OpBuilder &builder, Location loc)
      : graph(graph), anchorNode(anchor), b(builder), loc(loc) {}

  const onnx::NodeProto &anchor() const { return anchorNode; }
  OpBuilder &builder() { return b; }
  Location getLoc() const { return loc; }

  /// The node that produces `name` when it is an ai.onnx node of type
  /// `opType`; null otherwise (graph input, initializer, other op).
  const onnx::NodeProto *def(llvm::StringRef name, llvm::StringRef opType);
  /// The value named `name` (imported already), or null.
  Value value(llvm::StringRef name);
  /// The type of `name`, or null when it is unknown.
  RankedTensorType type(llvm::StringRef name);
  /// The constant named `name` (initializer or folded), or null.
  DenseElementsAttr constant(llvm::StringRef name);
  /// A float constant holding one value (scalar, [1] or a splat).
  std::optional<double> scalar(llvm::StringRef name);
  /// Integer attribute of `node`.
  int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name,
                  int64_t otherwise);
  /// Integer list: the attribute `name` of `node`, or, from opset `since`
  /// on, its constant input `input`. Empty when absent.
  std::optional<SmallVector<int64_t>> intsOperand(const onnx::NodeProto &node,
                                                  llvm::StringRef name,
                                                  unsigned input,
                                                  int64_t since);
  int64_t opset() const;

  /// A Slice of one axis, with constant bounds normalized against the
  /// input's static extent on that axis.
  struct SliceSpec {
    int64_t axis, start, end, step;
  };
  std::optional<SliceSpec> slice(const onnx::NodeProto &node);

  /// Records `node` as part of the subgraph being raised.
  void cover(const onnx::NodeProto *node) { covered.push_back(node); }
  ArrayRef<const onnx::NodeProto *> coveredNodes() const { return covered; }

private:
  GraphImporter &graph;
  const onnx::NodeProto &anchorNode;
  OpBuilder &b;
  Location loc;
  SmallVector<const onnx::NodeProto *> covered;
};

/// One raising pattern: the op type of the anchor it is tried on, and the
/// function that matches and emits, returning the value for the anchor's
/// output 0, or null when the subgraph does not match.
struct RaisePattern {
  const char *name;
  const char *anchorOpType;
  Value (*raise)(RaiseContext &);
};

/// Every pattern, in the order they are tried on an anchor.
ArrayRef<RaisePattern> raisePatterns();

/// The pattern families.
Value raiseAttention(RaiseContext &ctx);
Value raiseRopeRotateHalf(RaiseContext &ctx);
Value raiseRopeInterleaved(RaiseContext &ctx);
Value raiseRopeSplitHalves(RaiseContext &ctx);
Value raiseRmsNorm(RaiseContext &ctx);
Value raiseSwiGlu(RaiseContext &ctx);

} // namespace mlir::mnemo::onnx_import

#endif // MNEMO_LIB_FRONTEND_ONNX_RAISING_H

//===- Importer.h - ONNX importer internals ---------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the per-op-family handlers see: a NodeContext for the node being
// imported (its inputs as values or constants, its attributes, its outputs)
// and the registry that maps (domain, op_type, since-version) to a handler.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_ONNX_IMPORTER_H
#define MNEMO_LIB_FRONTEND_ONNX_IMPORTER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MemoryBuffer.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <string>

namespace mlir::mnemo::onnx_import {

class GraphImporter;

/// One node being imported. Errors are recorded once, as a single line naming
/// the node; every accessor that fails returns failure after recording one.
class NodeContext {
public:
  NodeContext(GraphImporter &graph, const onnx::NodeProto &node,
              OpBuilder &builder, Location loc)
      : graph(graph), node(node), b(builder), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location getLoc() const { return loc; }
  const onnx::NodeProto &proto() const { return node; }
  MLIRContext *getContext() const { return b.getContext(); }

  /// Inputs: an absent or empty-named optional input is not present.
  bool hasInput(unsigned i) const;
  unsigned numInputs() const { return node.input_size(); }
  unsigned numOutputs() const { return node.output_size(); }
  FailureOr<Value> input(unsigned i);
  FailureOr<RankedTensorType> inputType(unsigned i);
  /// An input that must be a constant (initializer or Constant node).
  FailureOr<DenseElementsAttr> constantInput(unsigned i);
  /// A constant integer tensor input, as int64 values.
  FailureOr<SmallVector<int64_t>> intsInput(unsigned i);
  /// A small integer input known element by element (a constant, or a shape
  /// computation folded at import, ShapeFolding.cpp): attributes where
  /// constant, index values where dynamic.
  FailureOr<SmallVector<OpFoldResult>> shapeInput(unsigned i);
  /// The extent a graph input's dim_param names (GraphImporter's
  /// canonicalExtent).
  std::pair<Value, int64_t> canonicalExtent(std::pair<Value, int64_t> e) const;

  /// Attributes.
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name, int64_t otherwise) const;
  float getFloat(llvm::StringRef name, float otherwise) const;
  SmallVector<int64_t> getInts(llvm::StringRef name) const;
  std::string getString(llvm::StringRef name, llvm::StringRef otherwise) const;

  /// A TensorProto held by an attribute (Constant's value), loaded.
  FailureOr<DenseElementsAttr> loadTensor(const onnx::TensorProto &tensor);

  /// Outputs.
  LogicalResult setOutput(unsigned i, Value value);
  LogicalResult setConstantOutput(unsigned i, DenseElementsAttr value);

  /// Counts this node as imported into the mnemo op `what` (for the import
  /// report).
  void raised(llvm::StringRef what);

  /// Records "node 'NAME' (OP): message" and returns failure.
  LogicalResult error(const llvm::Twine &message);

  /// Verifies `op`, built from the node's inputs; when it is invalid,
  /// records "node ...: WHAT: <the verifier's message>" as the one error.
  LogicalResult verifyBuilt(Operation *op, const llvm::Twine &what);

  /// An axis in [-rank, rank) normalized to [0, rank), or an error.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

private:
  GraphImporter &graph;
  const onnx::NodeProto &node;
  OpBuilder &b;
  Location loc;
};

/// Input `i` of `node`, or "" (an absent optional input) past its inputs:
/// folders and raisers look at nodes before any handler has checked them.
inline llvm::StringRef inputName(const onnx::NodeProto &node, int i) {
  return i < node.input_size() ? llvm::StringRef(node.input(i))
                               : llvm::StringRef();
}

using Handler = LogicalResult (*)(NodeContext &);

/// Handlers keyed by (domain, op_type); each op may have several versions,
/// and a model with opset N uses the newest whose since-version is <= N.
class HandlerRegistry {
public:
  void add(llvm::StringRef domain, llvm::StringRef opType, int64_t since,
           Handler handler);
  /// Null when no version of the op applies at `opset`.
  Handler lookup(llvm::StringRef domain, llvm::StringRef opType,
                 int64_t opset) const;
  /// Calls `fn(domain, opType, since)` for every handler version (the
  /// fuzzer's vocabulary of operators).
  void forEach(llvm::function_ref<void(llvm::StringRef, llvm::StringRef,
                                       int64_t)>
                   fn) const;
  /// The whole registry, built once.
  static const HandlerRegistry &get();

private:
  std::map<std::pair<std::string, std::string>, std::map<int64_t, Handler>>
      handlers;
};

void registerElementwiseHandlers(HandlerRegistry &registry);
void registerMatMulHandlers(HandlerRegistry &registry);
void registerShapeHandlers(HandlerRegistry &registry);
void registerIndexingHandlers(HandlerRegistry &registry);
void registerReductionHandlers(HandlerRegistry &registry);
void registerNormalizationHandlers(HandlerRegistry &registry);
void registerAttentionHandlers(HandlerRegistry &registry);
void registerRotaryHandlers(HandlerRegistry &registry);
void registerContribAttentionHandlers(HandlerRegistry &registry);

/// The MLIR element type of an ONNX TensorProto data type, or null.
Type convertElementType(MLIRContext *ctx, int32_t dataType);

/// The onnx package's checker on `model`, read from `path` (Checker.cpp):
/// its message, on one line, when the model is invalid. Only for ai.onnx
/// opsets up to kCheckerMaxOpset and IR versions up to the library's, the
/// newest the linked onnx library knows.
constexpr int64_t kCheckerMaxOpset = 17;
std::optional<std::string> checkModel(const onnx::ModelProto &model,
                                      const std::string &path);

/// The most elements a tensor the importer reads (an initializer, a
/// Constant, a declared value) may have.
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

/// Whether static dims `dims` are a shape the importer takes: none negative
/// and at most kMaxTensorElements elements in all; else why not, as a
/// phrase ("dimension -4 (negative)").
std::optional<std::string> badDimension(llvm::ArrayRef<int64_t> dims);

/// Reads TensorProtos (initializers, Constant values), mapping each external
/// data file once.
class TensorLoader {
public:
  explicit TensorLoader(llvm::StringRef modelDir) : dir(modelDir.str()) {}
  /// The tensor's value; on failure sets `error` to why (the caller names
  /// the tensor).
  FailureOr<DenseElementsAttr> load(const onnx::TensorProto &tensor,
                                    MLIRContext *ctx, std::string &error);

private:
  FailureOr<llvm::ArrayRef<char>>
  externalBytes(const onnx::TensorProto &tensor, std::string &error);

  std::string dir;
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> files;
};

//===----------------------------------------------------------------------===//
// Builders shared by the handlers
//===----------------------------------------------------------------------===//

/// A linalg.generic over the numpy broadcast of `operands` (or over
/// `resultShape` when given, which the operands must broadcast to), whose
/// body maps one element of each operand to one result element.
using ScalarBody =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;
FailureOr<Value> broadcastElementwise(NodeContext &ctx, ValueRange operands,
                                      Type resultElement, ScalarBody body,
                                      ArrayRef<int64_t> resultShape = {});

/// The numpy broadcast of two shapes, or failure when they do not broadcast.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b);

/// `x` reduced over the sorted, distinct `axes` (dropped from the result):
/// acc = combine(acc, pre(x)) from `init`, in `accType` elements.
using Combine = llvm::function_ref<Value(OpBuilder &, Location, Value, Value)>;
using Pre = llvm::function_ref<Value(OpBuilder &, Location, Value)>;
Value reduceAxes(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes,
                 Type accType, double init, Combine combine, Pre pre = {});

/// The map from the loops over a rank-`rank` tensor to the dims not in
/// `axes` (how a reduced tensor is read next to the tensor it came from).
AffineMap keptDimsMap(MLIRContext *ctx, int64_t rank, ArrayRef<int64_t> axes);

/// A linalg.generic over the loops of `like`'s shape reading `inputs` through
/// `maps` and producing `element`s.
Value mapGeneric(OpBuilder &b, Location loc, Value like, ValueRange inputs,
                 ArrayRef<AffineMap> maps, Type element, ScalarBody body);

/// `x` transposed: result dim i is `x`'s dim perm[i] (a valid permutation).
Value transposeValue(OpBuilder &b, Location loc, Value x,
                     ArrayRef<int64_t> perm);

/// `inputs` (same rank and element type, static along `axis`) concatenated
/// along `axis`.
Value concatValues(OpBuilder &b, Location loc, ValueRange inputs,
                   int64_t axis);

/// A full-width rope table [B, S, r] (as mnemo.rope_tables reads it) from a
/// half-width cache: [P, r/2] gathered at `positions` [B, S] (a position
/// outside the cache reads row 0), or [B, S, r/2] when `positions` is null.
/// `like` is the [B, H, S, D] input; `interleaved` repeats each entry twice
/// instead of repeating the halves.
Value ropeTable(OpBuilder &b, Location loc, Value cache, Value positions,
                Value like, int64_t r, bool interleaved);

/// Values of an integer DenseElementsAttr as int64.
SmallVector<int64_t> toInt64s(DenseElementsAttr attr);

} // namespace mlir::mnemo::onnx_import

#endif // MNEMO_LIB_FRONTEND_ONNX_IMPORTER_H

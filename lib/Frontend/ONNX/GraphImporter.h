//===- GraphImporter.h - one ONNX graph into one function -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The state of importing one graph: the values and constants defined so far
// by name, the model's opsets and the first error.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_ONNX_GRAPHIMPORTER_H
#define MNEMO_LIB_FRONTEND_ONNX_GRAPHIMPORTER_H

#include "Importer.h"

#include "mnemo/Frontend/ONNX/ImportONNX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Path.h"

namespace mlir::mnemo::onnx_import {

/// Constant tensors up to this many elements are evaluated at import
/// (computed attention masks of sequences up to 2048).
constexpr int64_t kMaxFoldedElements = int64_t(1) << 22;

/// Imports one graph into one function.
class GraphImporter {
public:
  GraphImporter(MLIRContext *ctx, llvm::StringRef path)
      : ctx(ctx), fileName(llvm::sys::path::filename(path).str()),
        tensors(llvm::sys::path::parent_path(path)) {}

  OwningOpRef<ModuleOp> run(const onnx::ModelProto &model);

  /// What was raised and what stayed generic, once run() succeeded.
  ONNXImportReport report;
  /// Counts `node` as imported into the mnemo op `what`.
  void noteRaised(llvm::StringRef what,
                  ArrayRef<const onnx::NodeProto *> nodes);
  /// The node producing `name`, or null (graph input or initializer).
  const onnx::NodeProto *producer(llvm::StringRef name) const {
    return producers.lookup(name);
  }
  int64_t opset() const { return opsets.lookup(""); }

  /// The one-line error, empty while none.
  std::string error;

  /// `extent` (dim `second` of value `first`) named for the first graph
  /// input dim with the same dim_param when it is a graph input's: the
  /// exporter says the two are one extent (a batch read from input_ids and
  /// one read from position_ids).
  std::pair<Value, int64_t>
  canonicalExtent(std::pair<Value, int64_t> extent) const;

  FailureOr<Value> lookup(llvm::StringRef name);
  /// Small integer tensors known element by element (shape computations):
  /// constants as attributes, extents of dynamic tensors as index values.
  const SmallVector<OpFoldResult> *lookupKnown(llvm::StringRef name) const {
    auto it = known.find(name);
    return it == known.end() ? nullptr : &it->second;
  }
  void defineKnown(llvm::StringRef name, ArrayRef<OpFoldResult> elements) {
    known[name] = SmallVector<OpFoldResult>(elements);
  }
  DenseElementsAttr lookupConstant(llvm::StringRef name) const {
    return constants.lookup(name);
  }
  bool define(llvm::StringRef name, Value value) {
    return values.try_emplace(name, value).second &&
           !constants.count(name);
  }
  bool defineConstant(llvm::StringRef name, DenseElementsAttr value) {
    return !values.count(name) && constants.try_emplace(name, value).second;
  }
  FailureOr<DenseElementsAttr> loadTensor(const onnx::TensorProto &t,
                                         std::string &why) {
    return tensors.load(t, ctx, why);
  }
  void fail(const llvm::Twine &message) {
    if (error.empty())
      error = (fileName + ": " + message).str();
  }

private:
  FailureOr<RankedTensorType> valueType(const onnx::ValueInfoProto &info);
  LogicalResult importNode(const onnx::NodeProto &node, unsigned index,
                           OpBuilder &b);
  /// Folds a shape computation at `node` (ShapeFolding.cpp); true when it
  /// defined the node's output.
  bool foldShape(const onnx::NodeProto &node, OpBuilder &b, Location loc);
  /// Evaluates `node` when all its inputs are constants (ConstantFolding.cpp:
  /// elementwise arithmetic, comparisons and logic, Where, Cast, Expand,
  /// Trilu, Range); true when it defined the node's output.
  bool foldConstants(const onnx::NodeProto &node);
  /// Tries the raising patterns anchored at `node`; true when one fired.
  bool raise(const onnx::NodeProto &node, OpBuilder &b, Location loc);

  MLIRContext *ctx;
  std::string fileName;
  TensorLoader tensors;
  llvm::StringMap<int64_t> opsets;
  llvm::StringMap<Value> values;
  llvm::StringMap<DenseElementsAttr> constants;
  llvm::StringMap<const onnx::NodeProto *> producers;
  llvm::StringMap<SmallVector<OpFoldResult>> known;
  llvm::DenseSet<const onnx::NodeProto *> covered;
  Block *entry = nullptr;
  /// (argument, dim) -> the first (argument, dim) with its dim_param.
  llvm::DenseMap<std::pair<unsigned, int64_t>, std::pair<unsigned, int64_t>>
      dimParamOrigins;
};

} // namespace mlir::mnemo::onnx_import

#endif // MNEMO_LIB_FRONTEND_ONNX_GRAPHIMPORTER_H

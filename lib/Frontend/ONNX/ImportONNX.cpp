//===- ImportONNX.cpp - ONNX protobuf walker --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Parses the ModelProto, makes one public function of the main graph (graph
// inputs become named arguments, dim_params dynamic dims), turns initializers
// into constants and imports each node through the handler registry. Every
// node's name becomes its ops' location.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Frontend/ONNX/ImportONNX.h"
#include "mnemo/Frontend/OneLineError.h"

#include "GraphImporter.h"
#include "Raising.h"
#include "dialects/Mnemo/IR/MnemoDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;


FailureOr<Value> GraphImporter::lookup(llvm::StringRef name) {
  if (Value v = values.lookup(name))
    return v;
  DenseElementsAttr c = constants.lookup(name);
  if (!c)
    return failure();
  // Constants are materialized once, at the top of the function.
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  Value v = arith::ConstantOp::create(
      b, NameLoc::get(StringAttr::get(ctx, name)), c);
  values[name] = v;
  return v;
}

FailureOr<RankedTensorType>
GraphImporter::valueType(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type()) {
    fail("value '" + info.name() + "' is not a tensor");
    return failure();
  }
  const onnx::TypeProto::Tensor &t = info.type().tensor_type();
  Type element = convertElementType(ctx, t.elem_type());
  if (!element) {
    fail("value '" + info.name() + "' has unsupported element type " +
         llvm::Twine(t.elem_type()));
    return failure();
  }
  if (!t.has_shape()) {
    fail("value '" + info.name() + "' has no shape (rank unknown)");
    return failure();
  }
  // Static dimensions are bounded like an initializer's, so that element
  // counts and strides computed from them cannot overflow.
  SmallVector<int64_t> shape, known;
  for (const onnx::TensorShapeProto::Dimension &d : t.shape().dim()) {
    shape.push_back(d.has_dim_value() ? d.dim_value() : ShapedType::kDynamic);
    if (d.has_dim_value())
      known.push_back(d.dim_value());
  }
  if (std::optional<std::string> bad = badDimension(known)) {
    fail("value '" + info.name() + "' has " + *bad);
    return failure();
  }
  return RankedTensorType::get(shape, element);
}

std::pair<Value, int64_t>
GraphImporter::canonicalExtent(std::pair<Value, int64_t> extent) const {
  auto arg = dyn_cast<BlockArgument>(extent.first);
  if (!arg || arg.getOwner() != entry)
    return extent;
  auto it = dimParamOrigins.find({arg.getArgNumber(), extent.second});
  if (it == dimParamOrigins.end())
    return extent;
  return {entry->getArgument(it->second.first), it->second.second};
}

void GraphImporter::noteRaised(llvm::StringRef what,
                               ArrayRef<const onnx::NodeProto *> nodes) {
  ++report.raised[what.str()];
  covered.insert(nodes.begin(), nodes.end());
}

bool GraphImporter::raise(const onnx::NodeProto &node, OpBuilder &b,
                          Location loc) {
  if (node.output_size() != 1 || values.count(node.output(0)) ||
      constants.count(node.output(0)))
    return false;
  for (const RaisePattern &pattern : raisePatterns()) {
    if (node.op_type() != pattern.anchorOpType)
      continue;
    RaiseContext context(*this, node, b, loc);
    Value result = pattern.raise(context);
    if (!result)
      continue;
    values[node.output(0)] = result;
    context.cover(&node);
    noteRaised(pattern.name, context.coveredNodes());
    return true;
  }
  return false;
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        unsigned index, OpBuilder &b) {
  std::string name =
      node.name().empty() ? "#" + std::to_string(index) : node.name();
  llvm::StringRef domain = node.domain();
  if (domain == "ai.onnx")
    domain = "";
  Location loc = NameLoc::get(StringAttr::get(ctx, name),
                              FileLineColLoc::get(ctx, fileName, 0, 0));
  if (domain.empty() && (foldShape(node, b, loc) || foldConstants(node) ||
                         raise(node, b, loc)))
    return success();
  auto opset = opsets.find(domain);
  Handler handler =
      opset == opsets.end()
          ? nullptr
          : HandlerRegistry::get().lookup(domain, node.op_type(),
                                          opset->second);
  if (!handler) {
    fail("node '" + name + "' (" + node.op_type() + "): unsupported operator " +
         (domain.empty() ? "ai.onnx" : domain) + "::" + node.op_type() +
         (opset == opsets.end()
              ? std::string(" (domain not imported)")
              : " at opset " + std::to_string(opset->second)));
    return failure();
  }
  NodeContext context(*this, node, b, loc);
  if (failed(handler(context))) {
    if (error.empty())
      fail("node '" + name + "' (" + node.op_type() + "): import failed");
    return failure();
  }
  for (const std::string &out : node.output())
    if (!out.empty() && !values.count(out) && !constants.count(out)) {
      fail("node '" + name + "' (" + node.op_type() + "): output '" + out +
           "' was not produced");
      return failure();
    }
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  if (!opsets.count(""))
    opsets[""] = 1;
  if (int64_t v = opsets[""]; v < 13 || v > 25) {
    fail("ai.onnx opset " + llvm::Twine(v) +
         " is not supported (this importer reads opsets 13 to 25)");
    return nullptr;
  }
  const onnx::GraphProto &graph = model.graph();
  Location fileLoc = FileLineColLoc::get(ctx, fileName, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);

  // Initializers: constants, and never graph inputs (even when listed).
  for (const onnx::TensorProto &t : graph.initializer()) {
    std::string why;
    FailureOr<DenseElementsAttr> value = tensors.load(t, ctx, why);
    if (failed(value)) {
      fail("initializer '" + t.name() + "': " + why);
      return nullptr;
    }
    if (!defineConstant(t.name(), *value)) {
      fail("initializer '" + t.name() + "' is defined twice");
      return nullptr;
    }
  }

  // Signature.
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  llvm::StringMap<std::pair<unsigned, int64_t>> firstWithDimParam;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (constants.count(in.name()))
      continue;
    FailureOr<RankedTensorType> type = valueType(in);
    if (failed(type))
      return nullptr;
    unsigned arg = argTypes.size();
    for (auto [d, dim] : llvm::enumerate(in.type().tensor_type().shape().dim()))
      if (dim.has_dim_param() && !dim.dim_param().empty())
        dimParamOrigins[{arg, int64_t(d)}] =
            firstWithDimParam.try_emplace(dim.dim_param(), arg, int64_t(d))
                .first->second;
    argTypes.push_back(*type);
    argNames.push_back(in.name());
  }
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  std::string funcName = graph.name().empty() ? "main" : graph.name();
  for (char &c : funcName)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  auto func = func::FuncOp::create(b, fileLoc, funcName,
                                   b.getFunctionType(argTypes, {}));
  entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "mnemo.name", b.getStringAttr(name));
    values[name] = entry->getArgument(i);
  }

  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &out : node.output())
      if (!out.empty())
        producers.try_emplace(out, &node);

  b.setInsertionPointToEnd(entry);
  for (auto [i, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, i, b)))
      return nullptr;
  for (const onnx::NodeProto &node : graph.node())
    if (!covered.count(&node))
      ++report.generic[node.op_type()];

  // Results, cast to the declared type where that says less (dim_params).
  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    FailureOr<Value> v = lookup(out.name());
    if (failed(v)) {
      fail("graph output '" + out.name() + "' is never produced");
      return nullptr;
    }
    Value result = *v;
    if (out.type().has_tensor_type() && out.type().tensor_type().has_shape()) {
      FailureOr<RankedTensorType> declared = valueType(out);
      if (failed(declared))
        return nullptr;
      auto actual = cast<RankedTensorType>(result.getType());
      if (declared->getElementType() != actual.getElementType() ||
          !tensor::CastOp::areCastCompatible(actual, *declared)) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "graph output '" << out.name() << "' is declared " << *declared
           << " but computed as " << actual;
        fail(text);
        return nullptr;
      }
      if (actual != *declared)
        result = tensor::CastOp::create(b, fileLoc, *declared, result);
    }
    results.push_back(result);
  }
  func::ReturnOp::create(b, fileLoc, results);
  SmallVector<Type> resultTypes;
  for (Value r : results)
    resultTypes.push_back(r.getType());
  func.setFunctionType(b.getFunctionType(argTypes, resultTypes));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "mnemo.name", b.getStringAttr(out.name()));

  // An extent of an input named by a dim_param another input has first is
  // that input's (ONNX: one name, one size): read it there, so that later
  // passes can prove the sizes equal (a reshape to a computed shape then
  // folds into an expand or collapse of its operand's dims).
  SmallVector<tensor::DimOp> inputDims;
  func.walk([&](tensor::DimOp dim) {
    if (auto arg = dyn_cast<BlockArgument>(dim.getSource()))
      if (arg.getOwner() == entry && dim.getConstantIndex())
        inputDims.push_back(dim);
  });
  for (tensor::DimOp dim : inputDims) {
    std::pair<Value, int64_t> extent = {dim.getSource(),
                                        *dim.getConstantIndex()};
    std::pair<Value, int64_t> canonical = canonicalExtent(extent);
    if (canonical == extent)
      continue;
    b.setInsertionPoint(dim);
    dim.replaceAllUsesWith(
        tensor::DimOp::create(b, dim.getLoc(), canonical.first,
                              canonical.second)
            .getResult());
  }
  b.setInsertionPointToEnd(entry);

  // The interiors of raised subgraphs (and unused constants) have no users
  // left.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return module;
}

void ONNXImportReport::print(llvm::raw_ostream &os) const {
  auto list = [&](llvm::StringRef title,
                  const std::map<std::string, unsigned> &counts) {
    os << title << ":";
    if (counts.empty())
      os << " none";
    bool first = true;
    for (const auto &[what, n] : counts) {
      os << (first ? " " : ", ") << what << " " << n;
      first = false;
    }
    os << "\n";
  };
  list("raised", raised);
  list("generic", generic);
}

namespace {
OwningOpRef<ModuleOp> importFile(llvm::StringRef path, MLIRContext *context,
                                 std::string &error, ONNXImportReport *report) {
  std::string fileName = llvm::sys::path::filename(path).str();
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = fileName + ": cannot open: " + buffer.getError().message();
    return nullptr;
  }
  onnx::ModelProto model;
  llvm::StringRef bytes = (*buffer)->getBuffer();
  google::protobuf::io::ArrayInputStream stream(bytes.data(), bytes.size());
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT32_MAX);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    error = fileName + ": not an ONNX model (protobuf parse failed: "
                       "truncated or not a ModelProto)";
    return nullptr;
  }
  if (!model.has_graph() || model.ir_version() <= 0) {
    error = fileName + ": not an ONNX model (no graph or IR version)";
    return nullptr;
  }
  context->loadDialect<arith::ArithDialect, func::FuncDialect,
                       linalg::LinalgDialect, math::MathDialect,
                       MnemoDialect, tensor::TensorDialect>();
  GraphImporter importer(context, path);
  OwningOpRef<ModuleOp> module = importer.run(model);
  if (!module) {
    error = importer.error.empty() ? fileName + ": import failed"
                                   : importer.error;
    return nullptr;
  }
  // The onnx checker where it knows the opset, after the import (whose
  // errors name the node and the reason more precisely) succeeded: what
  // the importer let through must still be a valid model.
  if (importer.opset() <= kCheckerMaxOpset) {
    if (std::optional<std::string> invalid = checkModel(model, path.str())) {
      error = fileName + ": invalid model (onnx checker): " + *invalid;
      return nullptr;
    }
  }
  // A handler bug must not reach the pipeline as invalid IR: report the
  // first verifier message, naming the node through its location.
  std::string first;
  {
    ScopedDiagnosticHandler capture(context, [&](Diagnostic &diag) {
      if (first.empty() && diag.getSeverity() == DiagnosticSeverity::Error) {
        std::string where;
        if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
          where = "node '" + name.getName().str() + "': ";
        first = where + diag.str();
      }
      return success();
    });
    if (failed(verify(*module))) {
      error = fileName + ": imported IR is invalid: " + first;
      return nullptr;
    }
  }
  if (report)
    *report = importer.report;
  return module;
}
} // namespace

OwningOpRef<ModuleOp> mlir::mnemo::importONNXFile(llvm::StringRef path,
                                                  MLIRContext *context,
                                                  std::string &error,
                                                  ONNXImportReport *report) {
  OwningOpRef<ModuleOp> module = importFile(path, context, error, report);
  if (!module)
    error = escapeToOneLine(error);
  return module;
}

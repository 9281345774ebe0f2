//===- Checker.cpp - the onnx package's model checker -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// libonnx's checker (onnx 1.12) validates a model against the operator
// schemas it knows: ai.onnx up to opset 17. It reports by throwing, so this
// file alone is compiled with exceptions and turns them into a message.
// Models whose IR version is newer than the library's are not checked.
// Shapes are not taken from onnx's shape inference: the importer derives
// every type itself, for opsets the library does not know as well.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "onnx/checker.h"

#include <exception>

std::optional<std::string>
mlir::mnemo::onnx_import::checkModel(const onnx::ModelProto &model,
                                     const std::string &path) {
  // Models newer than the library's IR version are not its to judge (it
  // would reject them for that alone).
  if (model.ir_version() > onnx::IR_VERSION)
    return std::nullopt;
  try {
    // From the file, so that external data is looked up beside it.
    onnx::checker::check_model(path);
  } catch (const std::exception &e) {
    // One line: the reason, then the checker's context (which names the
    // node: "==> Context: Bad node spec for node. Name: ... OpType: ...").
    std::string line;
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(e.what()).split(parts, '\n', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts) {
      part = part.trim();
      part.consume_front("==> Context: ");
      if (!part.empty())
        line += (line.empty() ? "" : "; ") + part.str();
    }
    return line;
  }
  return std::nullopt;
}

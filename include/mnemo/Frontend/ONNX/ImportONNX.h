//===- ImportONNX.h - ONNX model importer -----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads an ONNX model (with its external data) into a module of upstream
// func/arith/math/tensor/linalg ops on tensors, one public function whose
// arguments and results carry the graph's input and output names as
// `mnemo.name` attributes.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_FRONTEND_ONNX_IMPORTONNX_H
#define MNEMO_FRONTEND_ONNX_IMPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <string>

namespace mlir::mnemo {

/// What an import turned into mnemo ops and what it kept as generic ops.
struct ONNXImportReport {
  /// mnemo op, with the pattern or ONNX op it came from -> times.
  std::map<std::string, unsigned> raised;
  /// ONNX op type -> nodes imported as generic ops (outside every raised
  /// subgraph).
  std::map<std::string, unsigned> generic;
  /// Two lines, `raised: ...` and `generic: ...`.
  void print(llvm::raw_ostream &os) const;
};

/// Imports the ONNX model at `path`; external data files are looked up
/// relative to its directory. On bad or unsupported input returns null and
/// sets `error` to one line naming the file and the node or tensor at fault.
/// `report`, when given, receives what was raised and what stayed generic.
OwningOpRef<ModuleOp> importONNXFile(llvm::StringRef path,
                                     MLIRContext *context,
                                     std::string &error,
                                     ONNXImportReport *report = nullptr);

} // namespace mlir::mnemo

#endif // MNEMO_FRONTEND_ONNX_IMPORTONNX_H

//===- fuzz_onnx.cpp - libFuzzer target for the ONNX importer ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to the ONNX importer as a model file. It must return
// a verified module or a one-line error, never crash.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Frontend/ONNX/DecoderWithPast.h"
#include "mnemo/Frontend/ONNX/ImportONNX.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <cstdlib>

namespace {
/// A private directory for the model file (external data lookups stay in it).
std::string modelPath() {
  static std::string path = [] {
    llvm::SmallString<128> dir;
    if (llvm::sys::fs::createUniqueDirectory("mnemo-fuzz-onnx", dir))
      std::abort();
    llvm::sys::path::append(dir, "model.onnx");
    return std::string(dir);
  }();
  return path;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = modelPath();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      std::abort();
    os.write(reinterpret_cast<const char *>(data), size);
  }
  mlir::MLIRContext context;
  context.disableMultithreading();
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::mnemo::importONNXFile(path, &context, error);
  if (!module && (error.empty() || error.find('\n') != std::string::npos))
    std::abort(); // Errors are exactly one line.
  // A decoder with past key/values: its generation steps too.
  if (module && mlir::mnemo::isDecoderWithPast(*module) &&
      failed(mlir::mnemo::addDecoderWithPastSteps(*module, {}, path, error)) &&
      (error.empty() || error.find('\n') != std::string::npos))
    std::abort();
  return 0;
}

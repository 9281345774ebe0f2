//===- fuzz_onnx.cpp - libFuzzer target for the ONNX importer ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to the ONNX importer as a model file. It must return
// a verified module or a one-line error, never crash. Mutations are
// structure-aware (ONNXMutator.h): they keep most inputs parseable models,
// so that they reach the op handlers, shape folding and raising.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "InputContext.h"
#include "ONNXMutator.h"
#include "StrayDiagnostics.h"

#include "mnemo/Frontend/ONNX/DecoderWithPast.h"
#include "mnemo/Frontend/ONNX/ImportONNX.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <cstdlib>

namespace {
/// A private directory for the model file (external data lookups stay in
/// it), with an external data file that mutated initializers may point at.
std::string modelPath() {
  static std::string path = [] {
    llvm::SmallString<128> dir;
    if (llvm::sys::fs::createUniqueDirectory("mnemo-fuzz-onnx", dir))
      std::abort();
    llvm::SmallString<128> data(dir);
    llvm::sys::path::append(data, mnemo::fuzz::kExternalDataFile);
    std::error_code ec;
    llvm::raw_fd_ostream os(data, ec);
    if (ec)
      std::abort();
    for (size_t i = 0; i < mnemo::fuzz::kExternalDataSize; ++i)
      os << static_cast<char>(i * 37 % 251); // Small, varied values.
    llvm::sys::path::append(dir, "model.onnx");
    return std::string(dir);
  }();
  return path;
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::vector<mnemo::fuzz::Operator> ops;
  mlir::mnemo::onnx_import::HandlerRegistry::get().forEach(
      [&](llvm::StringRef domain, llvm::StringRef opType, int64_t since) {
        ops.push_back({domain.str(), opType.str(), since});
      });
  mnemo::fuzz::setOperatorVocabulary(std::move(ops));
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  return mnemo::fuzz::mutateModel(data, size, maxSize, seed);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t *a, size_t sizeA,
                                            const uint8_t *b, size_t sizeB,
                                            uint8_t *out, size_t maxSize,
                                            unsigned seed) {
  return mnemo::fuzz::crossOverModels(a, sizeA, b, sizeB, out, maxSize, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = modelPath();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      std::abort();
    os.write(reinterpret_cast<const char *>(data), size);
  }
  mlir::MLIRContext &context = mnemo::fuzz::contextForNextInput();
  mnemo::fuzz::StrayDiagnostics stray(&context);
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::mnemo::importONNXFile(path, &context, error);
  stray.check(bool(module), error);
  // A decoder with past key/values: its generation steps too.
  if (module && mlir::mnemo::isDecoderWithPast(*module))
    stray.check(succeeded(mlir::mnemo::addDecoderWithPastSteps(*module, {},
                                                               path, error)),
                error);
  return 0;
}

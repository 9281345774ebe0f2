//===- fuzz_checkpoint.cpp - libFuzzer target for checkpoints ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds a checkpoint directory (config.json and model.safetensors, packed
// into one input: CheckpointMutator.h) to the checkpoint importer. It must
// return a verified module or a one-line error naming the file and key or
// tensor, never crash, and print no diagnostic of its own.
//
//===----------------------------------------------------------------------===//

#include "CheckpointMutator.h"
#include "InputContext.h"
#include "StrayDiagnostics.h"

#include "mnemo/Frontend/Checkpoint/ImportCheckpoint.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <cstdlib>

namespace {
/// A private checkpoint directory, rewritten for each input.
std::string checkpointDir() {
  static std::string dir = [] {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("mnemo-fuzz-checkpoint", path))
      std::abort();
    return std::string(path);
  }();
  return dir;
}

void writeFile(llvm::StringRef dir, llvm::StringRef name,
               llvm::StringRef contents) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    std::abort();
  os << contents;
}
} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  return mnemo::fuzz::mutateCheckpoint(data, size, maxSize, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto [config, weights] = mnemo::fuzz::splitCheckpoint(
      llvm::StringRef(reinterpret_cast<const char *>(data), size));
  std::string dir = checkpointDir();
  writeFile(dir, "config.json", config);
  writeFile(dir, "model.safetensors", weights);
  mlir::MLIRContext &context = mnemo::fuzz::contextForNextInput();
  mnemo::fuzz::StrayDiagnostics stray(&context);
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::mnemo::importCheckpoint(dir, &context, error);
  stray.check(bool(module), error);
  return 0;
}

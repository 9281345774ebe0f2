//===- fuzz_safetensors.cpp - libFuzzer target for safetensors --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to the safetensors reader. It must return a file or
// a one-line error, never crash or read out of bounds; every accepted
// tensor's bytes must lie inside the buffer.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Frontend/Checkpoint/Safetensors.h"

#include "llvm/Support/MemoryBuffer.h"
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz");
  std::string error;
  auto file = mlir::mnemo::SafetensorsFile::fromBuffer(std::move(buffer),
                                                        "fuzz.safetensors",
                                                        error);
  if (!file) {
    if (error.empty() || error.find('\n') != std::string::npos)
      std::abort(); // Errors are exactly one line.
    return 0;
  }
  llvm::StringRef contents = file->getContents();
  for (const auto &t : file->getTensors()) {
    llvm::StringRef bytes = t.bytes;
    if (bytes.data() < contents.data() ||
        bytes.data() + bytes.size() > contents.data() + contents.size())
      std::abort();
  }
  return 0;
}

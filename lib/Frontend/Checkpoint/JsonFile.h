//===- JsonFile.h - reading a JSON file of a checkpoint ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_CHECKPOINT_JSONFILE_H
#define MNEMO_LIB_FRONTEND_CHECKPOINT_JSONFILE_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include <optional>
#include <string>

namespace mlir::mnemo {

/// The JSON document in the file at `path`, or nullopt with `error` set to
/// "<path>: <reason>" (unreadable file or invalid JSON).
inline std::optional<llvm::json::Value> readJsonFile(llvm::StringRef path,
                                                     std::string &error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = (path + ": " + buffer.getError().message()).str();
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error = (path + ": not valid JSON: " + llvm::toString(json.takeError()))
                .str();
    return std::nullopt;
  }
  return std::move(*json);
}

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_JSONFILE_H

//===- Safetensors.h - safetensors checkpoint reader ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads the safetensors format: an 8-byte little-endian header length, a
// JSON header mapping tensor names to {dtype, shape, data_offsets}, then the
// data region. The file is memory-mapped; tensors are views into it. The
// header is validated up front so that no later read can leave the file.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_FRONTEND_CHECKPOINT_SAFETENSORS_H
#define MNEMO_FRONTEND_CHECKPOINT_SAFETENSORS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include <memory>
#include <string>
#include <vector>

namespace mlir::mnemo {

/// The element types of the safetensors format.
enum class SafetensorsDType {
  F64,
  F32,
  F16,
  BF16,
  I64,
  I32,
  I16,
  I8,
  U8,
  Bool,
  F8_E4M3, // OCP FP8 E4M3 (DeepSeek-V3's weights)
};

/// Size in bytes of one element of `dtype`.
unsigned getDTypeSize(SafetensorsDType dtype);

/// One tensor of a safetensors file: a view into the mapped file.
struct SafetensorsTensor {
  std::string name;
  SafetensorsDType dtype;
  std::string dtypeName;
  llvm::SmallVector<int64_t> shape;
  llvm::StringRef bytes;
};

/// The values of a float tensor (F32, F16 or BF16) as f32.
std::vector<float> readFloats(const SafetensorsTensor &tensor);

/// "[2, 3]", for messages.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// A memory-mapped, validated safetensors file.
class SafetensorsFile {
public:
  /// Maps and validates the file at `path`. On malformed input returns null
  /// and sets `error` to one line naming the file and, where there is one,
  /// the tensor at fault.
  static std::unique_ptr<SafetensorsFile> open(llvm::StringRef path,
                                               std::string &error);
  /// Validates `buffer`, named `path` in errors (the fuzz target's entry).
  static std::unique_ptr<SafetensorsFile>
  fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef path,
             std::string &error);

  llvm::StringRef getPath() const { return path; }
  llvm::StringRef getContents() const { return buffer->getBuffer(); }
  const std::vector<SafetensorsTensor> &getTensors() const { return tensors; }
  /// The tensor called `name`, or null.
  const SafetensorsTensor *lookup(llvm::StringRef name) const;

private:
  SafetensorsFile() = default;
  std::string path;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::vector<SafetensorsTensor> tensors;
  llvm::StringMap<size_t> index;
};

/// The weights of a checkpoint directory: `model.safetensors`, or the shards
/// listed in `model.safetensors.index.json`.
class SafetensorsCheckpoint {
public:
  /// Opens the weights in `directory`; null and a one-line `error` naming
  /// the file at fault on failure.
  static std::unique_ptr<SafetensorsCheckpoint> open(llvm::StringRef directory,
                                                     std::string &error);

  /// The tensor called `name` and the file holding it; null if absent.
  const SafetensorsTensor *lookup(llvm::StringRef name,
                                  const SafetensorsFile **file = nullptr) const;
  /// Replaces tensor `name` (which must exist) by f32 `values` of the same
  /// shape: a weight with an adapter merged into it. Later lookups return
  /// the replacement, with the file that held the original.
  void replace(llvm::StringRef name, std::vector<float> values);
  /// The file the weights are read from (the index for a sharded one).
  llvm::StringRef getPath() const { return path; }
  const std::vector<std::unique_ptr<SafetensorsFile>> &getFiles() const {
    return files;
  }

private:
  SafetensorsCheckpoint() = default;
  std::string path;
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  struct Replacement {
    SafetensorsTensor tensor;
    const SafetensorsFile *file;
    std::vector<float> values;
  };
  llvm::StringMap<std::unique_ptr<Replacement>> replaced;
};

} // namespace mlir::mnemo

#endif // MNEMO_FRONTEND_CHECKPOINT_SAFETENSORS_H

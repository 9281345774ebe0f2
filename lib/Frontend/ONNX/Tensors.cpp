//===- Tensors.cpp - ONNX TensorProto to MLIR attributes --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Element types and tensor values: raw_data, the typed repeated fields, and
// external data (a byte range of a file beside the model).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"
#include <cstring>

using namespace mlir;
using namespace mlir::mnemo::onnx_import;

Type mlir::mnemo::onnx_import::convertElementType(MLIRContext *ctx,
                                                  int32_t dataType) {
  Builder b(ctx);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return b.getI8Type();
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return b.getI16Type();
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return b.getI32Type();
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return b.getI64Type();
  default:
    return {};
  }
}

FailureOr<ArrayRef<char>>
TensorLoader::externalBytes(const onnx::TensorProto &tensor,
                            std::string &error) {
  std::string location;
  uint64_t offset = 0, length = 0;
  bool hasLength = false;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    llvm::StringRef value = entry.value();
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      if (value.getAsInteger(10, offset)) {
        error = "bad external data offset '" + entry.value() + "'";
        return failure();
      }
    } else if (entry.key() == "length") {
      if (value.getAsInteger(10, length)) {
        error = "bad external data length '" + entry.value() + "'";
        return failure();
      }
      hasLength = true;
    }
  }
  if (location.empty() || llvm::sys::path::is_absolute(location)) {
    error = "external data needs a relative location";
    return failure();
  }
  auto it = files.find(location);
  if (it == files.end()) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, location);
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      error = "cannot open external data '" + location +
              "': " + buffer.getError().message();
      return failure();
    }
    it = files.try_emplace(location, std::move(*buffer)).first;
  }
  llvm::StringRef bytes = it->second->getBuffer();
  if (!hasLength)
    length = offset <= bytes.size() ? bytes.size() - offset : 0;
  if (offset > bytes.size() || length > bytes.size() - offset) {
    error = "external data range [" + std::to_string(offset) + ", " +
            std::to_string(offset + length) + ") is outside '" + location +
            "' (" + std::to_string(bytes.size()) + " bytes)";
    return failure();
  }
  return ArrayRef<char>(bytes.data() + offset, length);
}

namespace {

/// Appends the low `width` bytes of each value (little-endian host).
template <typename T>
void appendValues(std::vector<char> &out, const T &values, unsigned width) {
  for (auto v : values) {
    char bytes[sizeof(v)];
    std::memcpy(bytes, &v, sizeof(v));
    out.insert(out.end(), bytes, bytes + std::min<size_t>(width, sizeof(v)));
  }
}

} // namespace

std::optional<std::string>
mlir::mnemo::onnx_import::badDimension(ArrayRef<int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return "dimension " + std::to_string(d) + " (negative)";
    if (d > 0 && count > kMaxTensorElements / d)
      return "dimension " + std::to_string(d) +
             " (more than 2^40 elements in all)";
    count *= d;
  }
  return std::nullopt;
}

FailureOr<DenseElementsAttr>
TensorLoader::load(const onnx::TensorProto &tensor, MLIRContext *ctx,
                   std::string &error) {
  Type element = convertElementType(ctx, tensor.data_type());
  if (!element) {
    error = "unsupported data type " + std::to_string(tensor.data_type());
    return failure();
  }
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (std::optional<std::string> bad = badDimension(shape)) {
    error = "bad " + *bad;
    return failure();
  }
  int64_t count = ShapedType::getNumElements(shape);
  auto type = RankedTensorType::get(shape, element);
  unsigned width = element.isInteger(1)
                       ? 1
                       : llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);

  // The bytes, however they are stored.
  std::vector<char> owned;
  ArrayRef<char> bytes;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    FailureOr<ArrayRef<char>> ext = externalBytes(tensor, error);
    if (failed(ext))
      return failure();
    bytes = *ext;
  } else if (tensor.has_raw_data()) {
    bytes = ArrayRef<char>(tensor.raw_data().data(), tensor.raw_data().size());
  } else {
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      appendValues(owned, tensor.float_data(), width);
      break;
    case onnx::TensorProto::DOUBLE:
      appendValues(owned, tensor.double_data(), width);
      break;
    case onnx::TensorProto::INT64:
      appendValues(owned, tensor.int64_data(), width);
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      appendValues(owned, tensor.uint64_data(), width);
      break;
    default:
      appendValues(owned, tensor.int32_data(), width);
      break;
    }
    bytes = owned;
  }
  if (bytes.size() != uint64_t(count) * width) {
    error = "has " + std::to_string(bytes.size()) + " bytes of data, expected " +
            std::to_string(uint64_t(count) * width);
    return failure();
  }
  if (element.isInteger(1)) {
    SmallVector<bool> values;
    for (char c : bytes)
      values.push_back(c != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

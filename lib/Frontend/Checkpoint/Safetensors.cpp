//===- Safetensors.cpp - safetensors checkpoint reader ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Frontend/Checkpoint/Safetensors.h"
#include "mnemo/Frontend/OneLineError.h"

#include "JsonFile.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::mnemo;
using llvm::SmallString;
using llvm::SmallVector;
using llvm::StringRef;

unsigned mnemo::getDTypeSize(SafetensorsDType dtype) {
  switch (dtype) {
  case SafetensorsDType::F64:
  case SafetensorsDType::I64:
    return 8;
  case SafetensorsDType::F32:
  case SafetensorsDType::I32:
    return 4;
  case SafetensorsDType::F16:
  case SafetensorsDType::BF16:
  case SafetensorsDType::I16:
    return 2;
  case SafetensorsDType::I8:
  case SafetensorsDType::U8:
  case SafetensorsDType::Bool:
  case SafetensorsDType::F8_E4M3:
    return 1;
  }
  llvm_unreachable("unknown dtype");
}

static std::optional<SafetensorsDType> parseDType(StringRef name) {
  return llvm::StringSwitch<std::optional<SafetensorsDType>>(name)
      .Case("F64", SafetensorsDType::F64)
      .Case("F32", SafetensorsDType::F32)
      .Case("F16", SafetensorsDType::F16)
      .Case("BF16", SafetensorsDType::BF16)
      .Case("I64", SafetensorsDType::I64)
      .Case("I32", SafetensorsDType::I32)
      .Case("I16", SafetensorsDType::I16)
      .Case("I8", SafetensorsDType::I8)
      .Case("U8", SafetensorsDType::U8)
      .Case("BOOL", SafetensorsDType::Bool)
      .Case("F8_E4M3", SafetensorsDType::F8_E4M3)
      .Default(std::nullopt);
}

/// Reads a non-negative integer that JSON may spell as an integer or an
/// integral double.
static std::optional<uint64_t> getUnsigned(const llvm::json::Value &value) {
  if (std::optional<int64_t> i = value.getAsInteger())
    return *i >= 0 ? std::optional<uint64_t>(*i) : std::nullopt;
  if (std::optional<uint64_t> u = value.getAsUINT64())
    return u;
  return std::nullopt;
}

/// Parses one header entry into `tensor`; returns an error message or "".
static std::string parseEntry(StringRef name, const llvm::json::Value &value,
                              uint64_t dataSize, SafetensorsTensor &tensor,
                              uint64_t &begin, uint64_t &end) {
  const llvm::json::Object *entry = value.getAsObject();
  if (!entry)
    return "is not a JSON object";
  std::optional<StringRef> dtype = entry->getString("dtype");
  if (!dtype)
    return "has no string 'dtype'";
  std::optional<SafetensorsDType> kind = parseDType(*dtype);
  if (!kind)
    return "has unsupported dtype '" + dtype->str() + "'";
  const llvm::json::Array *shape = entry->getArray("shape");
  if (!shape)
    return "has no 'shape' array";
  const llvm::json::Array *offsets = entry->getArray("data_offsets");
  if (!offsets || offsets->size() != 2)
    return "has no 'data_offsets' pair";
  std::optional<uint64_t> b = getUnsigned((*offsets)[0]);
  std::optional<uint64_t> e = getUnsigned((*offsets)[1]);
  if (!b || !e || *b > *e)
    return "has malformed data_offsets";
  if (*e > dataSize)
    return "data_offsets [" + std::to_string(*b) + ", " + std::to_string(*e) +
           ") run past the data region (" + std::to_string(dataSize) +
           " bytes)";
  uint64_t bytes = getDTypeSize(*kind);
  for (const llvm::json::Value &dim : *shape) {
    std::optional<uint64_t> d = getUnsigned(dim);
    if (!d || *d > uint64_t(INT64_MAX))
      return "has a malformed shape";
    bool overflow = false;
    bytes = llvm::SaturatingMultiply(bytes, *d, &overflow);
    if (overflow)
      return "has a shape too large";
    tensor.shape.push_back(int64_t(*d));
  }
  if (bytes != *e - *b)
    return "shape and dtype " + dtype->str() + " give " +
           std::to_string(bytes) + " bytes but data_offsets span " +
           std::to_string(*e - *b);
  tensor.name = name.str();
  tensor.dtype = *kind;
  tensor.dtypeName = dtype->str();
  begin = *b;
  end = *e;
  return "";
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(StringRef path,
                                                       std::string &error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = (path + ": " + buffer.getError().message()).str();
    return nullptr;
  }
  return fromBuffer(std::move(*buffer), path, error);
}

std::unique_ptr<SafetensorsFile>
SafetensorsFile::fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                            StringRef path, std::string &error) {
  auto fail = [&](const llvm::Twine &message) {
    error = escapeToOneLine((path + ": " + message).str());
    return nullptr;
  };
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path = path.str();
  file->buffer = std::move(buffer);
  StringRef contents = file->buffer->getBuffer();
  if (contents.size() < 8)
    return fail("file of " + llvm::Twine(contents.size()) +
                " bytes is too short for the 8-byte header length");
  uint64_t headerSize =
      llvm::support::endian::read64le(contents.data());
  if (headerSize > contents.size() - 8)
    return fail("header length " + llvm::Twine(headerSize) +
                " runs past the end of the file (" +
                llvm::Twine(contents.size()) + " bytes)");
  StringRef header = contents.substr(8, headerSize);
  StringRef data = contents.substr(8 + headerSize);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(header);
  if (!json)
    return fail("header is not valid JSON: " +
                llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return fail("header is not a JSON object");

  // Sorted by name so that diagnostics do not depend on hash order.
  SmallVector<StringRef> names;
  for (const auto &kv : *root)
    if (kv.first != "__metadata__")
      names.push_back(kv.first);
  llvm::sort(names);
  struct Range {
    uint64_t begin, end;
    size_t tensor;
  };
  SmallVector<Range> ranges;
  for (StringRef name : names) {
    SafetensorsTensor tensor;
    uint64_t begin = 0, end = 0;
    std::string message =
        parseEntry(name, *root->get(name), data.size(), tensor, begin, end);
    if (!message.empty())
      return fail("tensor '" + name + "' " + message);
    tensor.bytes = data.substr(begin, end - begin);
    file->index[name] = file->tensors.size();
    if (begin != end)
      ranges.push_back({begin, end, file->tensors.size()});
    file->tensors.push_back(std::move(tensor));
  }
  llvm::sort(ranges, [](const Range &a, const Range &b) {
    return std::tie(a.begin, a.tensor) < std::tie(b.begin, b.tensor);
  });
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].begin < ranges[i - 1].end)
      return fail("tensor '" + file->tensors[ranges[i].tensor].name +
                  "' overlaps tensor '" +
                  file->tensors[ranges[i - 1].tensor].name + "'");
  return file;
}

const SafetensorsTensor *SafetensorsFile::lookup(StringRef name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &tensors[it->second];
}

std::unique_ptr<SafetensorsCheckpoint>
SafetensorsCheckpoint::open(StringRef directory, std::string &error) {
  std::unique_ptr<SafetensorsCheckpoint> checkpoint(new SafetensorsCheckpoint());
  SmallString<256> single(directory), indexPath(directory);
  llvm::sys::path::append(single, "model.safetensors");
  llvm::sys::path::append(indexPath, "model.safetensors.index.json");
  if (llvm::sys::fs::exists(single) || !llvm::sys::fs::exists(indexPath)) {
    checkpoint->path = single.str().str();
    std::unique_ptr<SafetensorsFile> file =
        SafetensorsFile::open(single, error);
    if (!file)
      return nullptr;
    checkpoint->files.push_back(std::move(file));
    return checkpoint;
  }

  checkpoint->path = indexPath.str().str();
  auto fail = [&](const llvm::Twine &message) {
    error = (indexPath + ": " + message).str();
    return nullptr;
  };
  std::optional<llvm::json::Value> json = readJsonFile(indexPath, error);
  if (!json)
    return nullptr;
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Object *map = root ? root->getObject("weight_map") : nullptr;
  if (!map)
    return fail("no 'weight_map' object");
  SmallVector<std::pair<StringRef, StringRef>> entries;
  for (const auto &kv : *map) {
    std::optional<StringRef> shard = kv.second.getAsString();
    if (!shard || shard->empty() ||
        llvm::sys::path::filename(*shard) != *shard)
      return fail("weight_map entry '" + StringRef(kv.first) +
                  "' does not name a file in the directory");
    entries.push_back({kv.first, *shard});
  }
  llvm::sort(entries);
  llvm::StringMap<SafetensorsFile *> shards;
  for (auto [name, shard] : entries) {
    SafetensorsFile *&file = shards[shard];
    if (!file) {
      SmallString<256> shardPath(directory);
      llvm::sys::path::append(shardPath, shard);
      std::unique_ptr<SafetensorsFile> opened =
          SafetensorsFile::open(shardPath, error);
      if (!opened)
        return nullptr;
      file = opened.get();
      checkpoint->files.push_back(std::move(opened));
    }
    if (!file->lookup(name))
      return fail("tensor '" + name + "' is not in " + shard);
  }
  return checkpoint;
}

const SafetensorsTensor *
SafetensorsCheckpoint::lookup(StringRef name,
                              const SafetensorsFile **file) const {
  if (auto it = replaced.find(name); it != replaced.end()) {
    if (file)
      *file = it->second->file;
    return &it->second->tensor;
  }
  for (const std::unique_ptr<SafetensorsFile> &f : files)
    if (const SafetensorsTensor *tensor = f->lookup(name)) {
      if (file)
        *file = f.get();
      return tensor;
    }
  return nullptr;
}

void SafetensorsCheckpoint::replace(StringRef name, std::vector<float> values) {
  const SafetensorsFile *file = nullptr;
  const SafetensorsTensor *original = lookup(name, &file);
  assert(original && "replacing a tensor the checkpoint does not hold");
  auto r = std::make_unique<Replacement>();
  r->tensor = *original;
  r->tensor.dtype = SafetensorsDType::F32;
  r->tensor.dtypeName = "F32";
  r->file = file;
  r->values = std::move(values);
  r->tensor.bytes = StringRef(reinterpret_cast<const char *>(r->values.data()),
                              r->values.size() * sizeof(float));
  replaced[name] = std::move(r);
}

std::string mnemo::formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<float> mnemo::readFloats(const SafetensorsTensor &tensor) {
  size_t size = getDTypeSize(tensor.dtype);
  size_t count = tensor.bytes.size() / size;
  std::vector<float> values(count);
  const char *data = tensor.bytes.data();
  if (tensor.dtype == SafetensorsDType::F32) {
    std::memcpy(values.data(), data, count * sizeof(float));
    return values;
  }
  for (size_t i = 0; i < count; ++i) {
    uint16_t bits = llvm::support::endian::read16le(data + i * size);
    if (tensor.dtype == SafetensorsDType::BF16) {
      uint32_t wide = uint32_t(bits) << 16;
      std::memcpy(&values[i], &wide, sizeof(float));
    } else {
      llvm::APFloat half(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
      values[i] = half.convertToFloat();
    }
  }
  return values;
}

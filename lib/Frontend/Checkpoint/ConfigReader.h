//===- ConfigReader.h - typed access to config.json keys --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_CHECKPOINT_CONFIGREADER_H
#define MNEMO_LIB_FRONTEND_CHECKPOINT_CONFIGREADER_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"
#include <optional>
#include <string>

namespace mlir::mnemo {

/// Typed access to a JSON object; the first problem is kept in `error`.
class ConfigReader {
public:
  ConfigReader(const llvm::json::Object &object, std::string prefix,
               std::string &error)
      : object(object), prefix(std::move(prefix)), error(error) {}

  bool has(llvm::StringRef key) const {
    const llvm::json::Value *v = object.get(key);
    return v && v->kind() != llvm::json::Value::Null;
  }
  bool fail(llvm::StringRef key, const llvm::Twine &message) {
    if (error.empty())
      error = ("key '" + prefix + key + "': " + message).str();
    return false;
  }
  /// Config integers are sizes and counts: above int32's range, products
  /// of two or three of them would overflow the shapes computed from them.
  static constexpr int64_t kMaxInt = (int64_t(1) << 31) - 1;

  int64_t getInt(llvm::StringRef key, std::optional<int64_t> fallback,
                 int64_t min = 1, int64_t max = kMaxInt) {
    if (!has(key)) {
      if (!fallback)
        fail(key, "missing");
      return fallback.value_or(0);
    }
    std::optional<int64_t> v = object.get(key)->getAsInteger();
    if (!v)
      fail(key, "expected an integer");
    else if (*v < min)
      fail(key, "must be at least " + llvm::Twine(min));
    else if (*v > max)
      fail(key, "must be at most " + llvm::Twine(max));
    return v && *v >= min && *v <= max ? *v : fallback.value_or(0);
  }
  double getDouble(llvm::StringRef key, double fallback, bool positive = true) {
    if (!has(key))
      return fallback;
    std::optional<double> v = object.get(key)->getAsNumber();
    if (!v)
      fail(key, "expected a number");
    else if (positive && !(*v > 0))
      fail(key, "must be positive");
    return v.value_or(fallback);
  }
  /// A number in (0, 1]; `fallback` when absent or out of range.
  double getFraction(llvm::StringRef key, double fallback) {
    double v = getDouble(key, fallback);
    if (v > 1) {
      fail(key, "must be at most 1");
      return fallback;
    }
    return v > 0 ? v : fallback;
  }
  bool getBool(llvm::StringRef key, bool fallback) {
    if (!has(key))
      return fallback;
    std::optional<bool> v = object.get(key)->getAsBoolean();
    if (!v)
      fail(key, "expected a boolean");
    return v.value_or(fallback);
  }
  std::string getString(llvm::StringRef key, llvm::StringRef fallback) {
    if (!has(key))
      return fallback.str();
    std::optional<llvm::StringRef> v = object.get(key)->getAsString();
    if (!v)
      fail(key, "expected a string");
    return v.value_or(fallback).str();
  }

  const llvm::json::Object &object;
  std::string prefix;
  std::string &error;
};

/// One string per layer from `key`, each one of `allowed`; empty (and the
/// problem in `top`) otherwise.
inline llvm::SmallVector<llvm::StringRef>
layerStrings(ConfigReader &top, llvm::StringRef key, int64_t numLayers,
             llvm::ArrayRef<llvm::StringRef> allowed) {
  const llvm::json::Array *list = top.object.getArray(key);
  if (!list || int64_t(list->size()) != numLayers) {
    top.fail(key, "expected one string per layer");
    return {};
  }
  llvm::SmallVector<llvm::StringRef> out;
  for (const llvm::json::Value &v : *list) {
    std::optional<llvm::StringRef> name = v.getAsString();
    if (!name || !llvm::is_contained(allowed, *name)) {
      top.fail(key, "unsupported layer type '" + name.value_or("?") +
                        "' (expected " + llvm::join(allowed, " or ") + ")");
      return {};
    }
    out.push_back(*name);
  }
  return out;
}

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_CONFIGREADER_H

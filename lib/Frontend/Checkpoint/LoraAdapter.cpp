//===- LoraAdapter.cpp - PEFT LoRA adapters merged into weights -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LoraAdapter.h"
#include "JsonFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"
#include <cmath>
#include <map>

using namespace mlir;
using llvm::StringRef;
using llvm::Twine;
using llvm::SmallString;
using namespace mlir::mnemo;

namespace {
/// What PEFT's `adapter_config.json` says that the merge needs.
struct LoraConfig {
  int64_t rank = 0;
  double scaling = 0;
};

bool parseConfig(StringRef path, LoraConfig &config, std::string &error) {
  std::optional<llvm::json::Value> json = readJsonFile(path, error);
  if (!json)
    return false;
  auto fail = [&](const Twine &message) {
    error = (path + ": " + message).str();
    return false;
  };
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return fail("not a JSON object");
  if (std::optional<StringRef> type = root->getString("peft_type");
      type && *type != "LORA")
    return fail("peft_type '" + *type + "' is not LORA");
  std::optional<int64_t> r = root->getInteger("r");
  if (!r || *r < 1 || *r > 65536)
    return fail("'r' must be an integer from 1 to 65536");
  std::optional<double> alpha = root->getNumber("lora_alpha");
  if (!alpha || !std::isfinite(*alpha))
    return fail("'lora_alpha' must be a finite number");
  // What a plain merge W + scaling * B A cannot express.
  if (root->getBoolean("use_dora").value_or(false))
    return fail("use_dora: DoRA adapters are not supported");
  if (root->getBoolean("fan_in_fan_out").value_or(false))
    return fail("fan_in_fan_out: adapters of [in, out] (Conv1D) weights are "
                "not supported");
  if (std::optional<StringRef> bias = root->getString("bias");
      bias && *bias != "none")
    return fail("bias '" + *bias + "': adapters that train biases are not "
                "supported");
  for (StringRef key : {"rank_pattern", "alpha_pattern"})
    if (const llvm::json::Object *pattern = root->getObject(key);
        pattern && !pattern->empty())
      return fail("'" + key + "': per-module ranks and alphas are not "
                  "supported");
  if (const llvm::json::Value *saved = root->get("modules_to_save");
      saved && saved->kind() != llvm::json::Value::Null &&
      !(saved->getAsArray() && saved->getAsArray()->empty()))
    return fail("'modules_to_save': adapters that replace whole modules are "
                "not supported");
  config.rank = *r;
  bool rslora = root->getBoolean("use_rslora").value_or(false);
  config.scaling = *alpha / (rslora ? std::sqrt(double(*r)) : double(*r));
  return true;
}

/// "base_model.model.X.lora_A.weight" -> X (and which factor).
std::optional<std::pair<StringRef, char>> adaptedModule(StringRef name) {
  if (!name.consume_front("base_model.model."))
    return std::nullopt;
  for (char factor : {'A', 'B'})
    if (name.consume_back((Twine(".lora_") + Twine(factor) + ".weight").str()))
      return std::make_pair(name, factor);
  return std::nullopt;
}
} // namespace

bool mnemo::readLoraAdapter(const SafetensorsCheckpoint &weights,
                            StringRef directory, llvm::SHA256 &hash,
                            std::map<std::string, LoraFactors> &factors,
                            std::string &error) {
  SmallString<256> configPath(directory), filePath(directory);
  llvm::sys::path::append(configPath, "adapter_config.json");
  llvm::sys::path::append(filePath, "adapter_model.safetensors");
  LoraConfig config;
  if (!parseConfig(configPath, config, error))
    return false;
  std::unique_ptr<SafetensorsFile> file =
      SafetensorsFile::open(filePath, error);
  if (!file)
    return false;
  auto fail = [&](const Twine &message) {
    error = (filePath + ": " + message).str();
    return false;
  };
  // Pairs by module, in name order (the merge is deterministic).
  std::map<std::string, std::pair<const SafetensorsTensor *,
                                  const SafetensorsTensor *>>
      modules;
  for (const SafetensorsTensor &t : file->getTensors()) {
    std::optional<std::pair<StringRef, char>> m = adaptedModule(t.name);
    if (!m)
      return fail("tensor '" + t.name +
                  "' is not a LoRA factor (expected base_model.model."
                  "MODULE.lora_A.weight or .lora_B.weight)");
    using DT = SafetensorsDType;
    if (t.dtype != DT::F32 && t.dtype != DT::F16 && t.dtype != DT::BF16)
      return fail("tensor '" + t.name + "' has dtype " + t.dtypeName +
                  ", expected F32, F16 or BF16");
    auto &pair = modules[m->first.str()];
    (m->second == 'A' ? pair.first : pair.second) = &t;
  }
  if (modules.empty())
    return fail("no LoRA factors");
  for (auto &[module, pair] : modules) {
    auto [a, b] = pair;
    if (!a || !b)
      return fail("module '" + module + "' has lora_" + (a ? "A" : "B") +
                  " but no lora_" + (a ? "B" : "A"));
    std::string target = module + ".weight";
    const SafetensorsTensor *w = weights.lookup(target);
    if (!w)
      return fail("module '" + module + "': the checkpoint has no tensor '" +
                  target + "'");
    if (w->shape.size() != 2 || a->shape.size() != 2 ||
        b->shape.size() != 2)
      return fail("module '" + module + "': expected 2-D weight and factors");
    int64_t out = w->shape[0], in = w->shape[1];
    if (a->shape[0] != config.rank || a->shape[1] != in ||
        b->shape[0] != out || b->shape[1] != config.rank)
      return fail("module '" + module + "': lora_A [" + Twine(a->shape[0]) +
                  ", " + Twine(a->shape[1]) + "] and lora_B [" +
                  Twine(b->shape[0]) + ", " + Twine(b->shape[1]) +
                  "] do not fit r = " + Twine(config.rank) + " and the weight [" +
                  Twine(out) + ", " + Twine(in) + "]");
    using DT = SafetensorsDType;
    if (w->dtype != DT::F32 && w->dtype != DT::F16 && w->dtype != DT::BF16)
      return fail("module '" + module + "': its weight has dtype " +
                  w->dtypeName + ", expected a float type");
    LoraFactors f;
    f.rank = config.rank;
    f.in = in;
    f.out = out;
    f.a = readFloats(*a);
    f.b = readFloats(*b);
    for (float &v : f.b)
      v = float(double(v) * config.scaling);
    factors[module] = std::move(f);
  }
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
          llvm::MemoryBuffer::getFile(configPath))
    hash.update((*buffer)->getBuffer());
  hash.update(file->getContents());
  return true;
}

bool mnemo::mergeLoraAdapter(SafetensorsCheckpoint &weights,
                             StringRef directory, llvm::SHA256 &hash,
                             std::string &error) {
  std::map<std::string, LoraFactors> factors;
  if (!readLoraAdapter(weights, directory, hash, factors, error))
    return false;
  for (auto &[module, f] : factors) {
    std::string target = module + ".weight";
    std::vector<float> merged = readFloats(*weights.lookup(target));
    for (int64_t i = 0; i < f.out; ++i)
      for (int64_t j = 0; j < f.in; ++j) {
        double delta = 0;
        for (int64_t k = 0; k < f.rank; ++k)
          delta += double(f.b[i * f.rank + k]) * double(f.a[k * f.in + j]);
        float &v = merged[i * f.in + j];
        v = float(double(v) + delta);
      }
    weights.replace(target, std::move(merged));
  }
  return true;
}

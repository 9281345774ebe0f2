//===- ImportCheckpoint.cpp - Hugging Face checkpoint importer --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Frontend/Checkpoint/ImportCheckpoint.h"
#include "mnemo/Frontend/OneLineError.h"

#include "DeepSeekV3.h"
#include "DeepSeekV4.h"
#include "LlamaFamily.h"
#include "LoraAdapter.h"
#include "ModelConfig.h"

#include "dialects/Mnemo/IR/MnemoDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

using namespace mlir;
using namespace mlir::mnemo;

bool mnemo::isCheckpointDirectory(llvm::StringRef path) {
  SmallString<256> config(path);
  llvm::sys::path::append(config, "config.json");
  return llvm::sys::fs::is_directory(path) && llvm::sys::fs::exists(config);
}

namespace {
/// Each function's adapter factors (constants marked kAdapterFactorAttr)
/// become trailing arguments that carry their name and value: no pass
/// folds, packs or merges them, and the artifact stores each once as a
/// weight the runtime may replace.
void adapterFactorsToArguments(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    SmallVector<arith::ConstantOp> factors;
    func.walk([&](arith::ConstantOp c) {
      if (c->hasAttr(kAdapterFactorAttr))
        factors.push_back(c);
    });
    for (arith::ConstantOp c : factors) {
      unsigned index = func.getNumArguments();
      MLIRContext *ctx = c.getContext();
      SmallVector<NamedAttribute> attrs = {
          NamedAttribute(StringAttr::get(ctx, kAdapterFactorAttr),
                         cast<NameLoc>(c.getLoc()).getName()),
          NamedAttribute(StringAttr::get(ctx, kAdapterValueAttr),
                         c.getValue())};
      if (failed(func.insertArgument(index, c.getType(),
                                     DictionaryAttr::get(ctx, attrs),
                                     c.getLoc())))
        continue;
      c.getResult().replaceAllUsesWith(func.getArgument(index));
      c.erase();
    }
  }
}

OwningOpRef<ModuleOp> importDirectory(llvm::StringRef directory,
                                      MLIRContext *context, std::string &error,
                                      std::string *sourceHash,
                                      WeightOptions weightOptions,
                                      KVCacheOptions kvCache) {
  SmallString<256> configPath(directory);
  llvm::sys::path::append(configPath, "config.json");
  ModelConfig config;
  if (!parseModelConfig(configPath, config, error))
    return nullptr;
  config.weights = weightOptions;
  config.kvCache = kvCache;
  std::unique_ptr<SafetensorsCheckpoint> weights =
      SafetensorsCheckpoint::open(directory, error);
  if (!weights)
    return nullptr;
  llvm::SHA256 adapterHash;
  std::map<std::string, LoraFactors> attached;
  std::set<std::string> applied;
  if (weightOptions.loraAttach) {
    if (weightOptions.loraAdapters.size() != 1) {
      error = "--lora-attach takes one --lora adapter";
      return nullptr;
    }
    if (!readLoraAdapter(*weights, weightOptions.loraAdapters.front(),
                         adapterHash, attached, error))
      return nullptr;
    config.attachedLora = &attached;
    config.loraApplied = &applied;
  } else {
    for (const std::string &adapter : weightOptions.loraAdapters)
      if (!mergeLoraAdapter(*weights, adapter, adapterHash, error))
        return nullptr;
  }
  OwningOpRef<ModuleOp> module =
      config.deepseekV4 ? buildDeepSeekV4(config, *weights, context, error)
      : config.deepseek ? buildDeepSeekV3(config, *weights, context, error)
                        : buildLlamaFamily(config, *weights, context, error);
  if (!module)
    return nullptr;
  for (const auto &[name, factors] : attached)
    if (!applied.count(name)) {
      error = (weightOptions.loraAdapters.front() + ": module '" + name +
               "' is not a plain linear layer of this model; merge the "
               "adapter instead (--lora without --lora-attach)");
      return nullptr;
    }
  if (!attached.empty())
    adapterFactorsToArguments(*module);
  if (sourceHash) {
    llvm::SHA256 hash;
    if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
            llvm::MemoryBuffer::getFile(configPath))
      hash.update((*buffer)->getBuffer());
    for (const std::unique_ptr<SafetensorsFile> &file : weights->getFiles())
      hash.update(file->getContents());
    if (!weightOptions.loraAdapters.empty())
      hash.update(adapterHash.final());
    *sourceHash = llvm::toHex(hash.final(), /*LowerCase=*/true);
  }
  return module;
}
} // namespace

OwningOpRef<ModuleOp>
mnemo::importCheckpoint(llvm::StringRef directory, MLIRContext *context,
                        std::string &error, std::string *sourceHash,
                        WeightOptions weightOptions, KVCacheOptions kvCache) {
  OwningOpRef<ModuleOp> module = importDirectory(
      directory, context, error, sourceHash, weightOptions, kvCache);
  if (!module)
    error = escapeToOneLine(error);
  return module;
}

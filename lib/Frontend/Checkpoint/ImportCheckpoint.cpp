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
  for (const std::string &adapter : weightOptions.loraAdapters)
    if (!mergeLoraAdapter(*weights, adapter, adapterHash, error))
      return nullptr;
  OwningOpRef<ModuleOp> module =
      config.deepseekV4 ? buildDeepSeekV4(config, *weights, context, error)
      : config.deepseek ? buildDeepSeekV3(config, *weights, context, error)
                        : buildLlamaFamily(config, *weights, context, error);
  if (!module)
    return nullptr;
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

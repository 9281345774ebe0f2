//===- ImportCheckpoint.h - Hugging Face checkpoint importer ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads a Hugging Face checkpoint directory (config.json and
// model.safetensors, or shards listed in model.safetensors.index.json) into
// a module with one public function
//
//   func.func @forward(%input_ids: tensor<?x?xi64> {mnemo.name = "input_ids"})
//       -> (tensor<?x?xVxf32> {mnemo.name = "logits"})
//
// built from mnemo ops, the weights as f32 constants.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_FRONTEND_CHECKPOINT_IMPORTCHECKPOINT_H
#define MNEMO_FRONTEND_CHECKPOINT_IMPORTCHECKPOINT_H

#include "mnemo/Frontend/KVCacheOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include <string>
#include <vector>

namespace mlir::mnemo {

/// Storage type of a compiled checkpoint's weight matrices (linear layers
/// and embedding tables). Activations, norms and accumulation stay f32; a
/// matrix element is widened where it is read.
enum class WeightDType { F32, BF16, F16, Int8, Int4, NF4, FP8 };

/// How weight matrices are stored: a float type, or integer codes with a
/// scale (and, asymmetric, a zero point) per group of `groupSize` input
/// features (`mnemo.dequantize`); FP8 E4M3 values with a scale per block of
/// `groupSize` x `groupSize` (128 unless given).
struct WeightOptions {
  WeightDType dtype = WeightDType::F32;
  int64_t groupSize = 32;
  bool asymmetric = false;
  /// With a quantized dtype: the matrices left out of it, stored in bf16
  /// instead (GPTQ's and AWQ's convention leaves both in 16 bits): the
  /// token embedding, the output head (one matrix when they are tied: kept
  /// when either is).
  bool skipEmbedding = false, skipHead = false;
  /// PEFT LoRA adapter directories merged into the weights, in order.
  std::vector<std::string> loraAdapters;
  /// Keep the (one) adapter's factors apart, as weights the runtime may
  /// replace with another adapter's, instead of merging them.
  bool loraAttach = false;
  WeightOptions() = default;
  WeightOptions(WeightDType dtype) : dtype(dtype) {}
  bool quantized() const {
    return dtype == WeightDType::Int8 || dtype == WeightDType::Int4 ||
           dtype == WeightDType::NF4 || dtype == WeightDType::FP8;
  }
};

/// True if `path` is a directory holding a config.json.
bool isCheckpointDirectory(llvm::StringRef path);

/// Imports the checkpoint in `directory`. On bad or unsupported input
/// returns null and sets `error` to one line naming the file and the key or
/// tensor at fault. If `sourceHash` is given it receives the hex SHA-256 of
/// the files read. Weight matrices are stored as `weightOptions` says.
OwningOpRef<ModuleOp> importCheckpoint(llvm::StringRef directory,
                                       MLIRContext *context, std::string &error,
                                       std::string *sourceHash = nullptr,
                                       WeightOptions weightOptions = {},
                                       KVCacheOptions kvCache = {});

} // namespace mlir::mnemo

#endif // MNEMO_FRONTEND_CHECKPOINT_IMPORTCHECKPOINT_H

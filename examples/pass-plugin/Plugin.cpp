//===- Plugin.cpp - entry point of the example pass plug-in -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

/// Called by `mnemo-opt --load-pass-plugin=...` to register the passes.
extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MnemoExamplePasses", LLVM_VERSION_STRING,
          [] { mnemo_example::registerExamplePasses(); }};
}

//===- InputContext.h - the fuzz targets' MLIR context ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The context an input is imported into. Making a context and loading the
// importers' dialects into it took half of each input's time (linalg's
// dialect alone a quarter; the ONNX target ran 50–65 inputs/s), so one
// context serves a run of inputs and a fresh one replaces it after
// `kInputsPerContext`: what the inputs intern (attributes, types) stays
// bounded. An input's result does not depend on the inputs before it, as a
// context only interns; a finding reproduces with the input alone, on a
// fresh context (docs/Fuzzing.md).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_FUZZ_INPUTCONTEXT_H
#define MNEMO_TOOLS_FUZZ_INPUTCONTEXT_H

#include "mlir/IR/MLIRContext.h"
#include <memory>

namespace mnemo::fuzz {

inline constexpr unsigned kInputsPerContext = 512;

/// The context for the next input, single-threaded. The module imported
/// into it must be destroyed before the next call.
inline mlir::MLIRContext &contextForNextInput() {
  static std::unique_ptr<mlir::MLIRContext> context;
  static unsigned inputs = 0;
  if (!context || inputs++ % kInputsPerContext == 0) {
    context.reset(); // The old one's memory first.
    context = std::make_unique<mlir::MLIRContext>(
        mlir::MLIRContext::Threading::DISABLED);
  }
  return *context;
}

} // namespace mnemo::fuzz

#endif // MNEMO_TOOLS_FUZZ_INPUTCONTEXT_H

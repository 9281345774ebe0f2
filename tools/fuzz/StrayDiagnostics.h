//===- StrayDiagnostics.h - the fuzz targets' one-line check ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An importer gives a module or exactly one line of error. An error
// diagnostic that none of its handlers takes would be printed by a tool as a
// line of its own beside that error: the fuzz targets count it as a finding.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_FUZZ_STRAYDIAGNOSTICS_H
#define MNEMO_TOOLS_FUZZ_STRAYDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include <cstdlib>
#include <string>

namespace mnemo::fuzz {

class StrayDiagnostics {
public:
  explicit StrayDiagnostics(mlir::MLIRContext *context)
      : handler(context, [this](mlir::Diagnostic &diag) {
          stray |= diag.getSeverity() == mlir::DiagnosticSeverity::Error;
          return mlir::success();
        }) {}

  /// Aborts on a stray error line, or when the import failed without
  /// exactly one line of error.
  void check(bool imported, const std::string &error) const {
    if (stray ||
        (!imported && (error.empty() || error.find('\n') != std::string::npos)))
      std::abort();
  }

private:
  bool stray = false;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace mnemo::fuzz

#endif // MNEMO_TOOLS_FUZZ_STRAYDIAGNOSTICS_H

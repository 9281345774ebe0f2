//===- mnemo-opt.cpp - mnemo optimizer driver -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MlirOptMain with the mnemo dialect, its passes and pipelines, and the
// upstream ones registered. Users' passes load with --load-pass-plugin.
//
//===----------------------------------------------------------------------===//

#include "mnemo/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::mnemo::registerAllDialects(registry);
  mlir::mnemo::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mnemo optimizer driver\n", registry));
}

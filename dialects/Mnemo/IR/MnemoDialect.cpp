//===- MnemoDialect.cpp - mnemo dialect -------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoDialect.h"
#include "dialects/Mnemo/IR/MnemoOps.h"

using namespace mlir;
using namespace mlir::mnemo;

#include "dialects/Mnemo/IR/MnemoDialect.cpp.inc"

void MnemoDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Mnemo/IR/MnemoOps.cpp.inc"
      >();
  registerAttributes();
}

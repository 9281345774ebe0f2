//===- MnemoDialect.h - mnemo dialect ---------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_MNEMODIALECT_H
#define MNEMO_DIALECT_MNEMODIALECT_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "dialects/Mnemo/IR/MnemoDialect.h.inc"

#endif // MNEMO_DIALECT_MNEMODIALECT_H

//===- MnemoOps.h - mnemo dialect operations --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_MNEMOOPS_H
#define MNEMO_DIALECT_MNEMOOPS_H

#include "dialects/Mnemo/IR/MnemoAttrs.h"
#include "dialects/Mnemo/IR/MnemoDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Mnemo/IR/MnemoOps.h.inc"

#endif // MNEMO_DIALECT_MNEMOOPS_H

//===- MnemoAttrs.h - mnemo dialect attributes ------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_MNEMOATTRS_H
#define MNEMO_DIALECT_MNEMOATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include <optional>

#include "dialects/Mnemo/IR/MnemoEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Mnemo/IR/MnemoAttrs.h.inc"

#endif // MNEMO_DIALECT_MNEMOATTRS_H

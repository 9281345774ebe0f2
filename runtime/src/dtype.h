//===- dtype.h - element types ----------------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_DTYPE_H
#define MNEMO_RUNTIME_DTYPE_H

#include "mnemo/runtime.h"

namespace mnemo::rt {

/// Whether `value` (a schema DType byte) names a dtype this runtime knows.
bool isValidDType(unsigned value);

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_DTYPE_H

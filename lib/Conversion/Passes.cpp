//===- Passes.cpp - mnemo conversion pass registration ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"

namespace mlir::mnemo {
namespace detail {
#define GEN_PASS_REGISTRATION
#include "mnemo/Conversion/Passes.h.inc"
} // namespace detail

void registerConversionPasses() { detail::registerConversionPasses(); }
} // namespace mlir::mnemo

//===- Passes.cpp - mnemo dialect pass registration -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Transforms/Passes.h"

namespace mlir::mnemo {
namespace detail {
#define GEN_PASS_REGISTRATION
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace detail

void registerMnemoPasses() { detail::registerMnemoPasses(); }
} // namespace mlir::mnemo

//===- Passes.cpp - CPU pass registration -----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/CPU/Passes.h"

namespace mlir::mnemo {
namespace detail {
#define GEN_PASS_REGISTRATION
#include "mnemo/Target/CPU/Passes.h.inc"
} // namespace detail

void registerCPUPasses() { detail::registerCPUPasses(); }
} // namespace mlir::mnemo

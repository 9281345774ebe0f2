//===- Passes.cpp - NVPTX pass registration ---------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

namespace mlir::mnemo {
namespace detail {
#define GEN_PASS_REGISTRATION
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace detail

void registerNVPTXPasses() { detail::registerNVPTXPasses(); }
} // namespace mlir::mnemo

//===- Passes.h - example out-of-tree mnemo passes --------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_EXAMPLE_PASSES_H
#define MNEMO_EXAMPLE_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mnemo_example {

#define GEN_PASS_DECL
#include "ExamplePasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "ExamplePasses.h.inc"

} // namespace mnemo_example

#endif // MNEMO_EXAMPLE_PASSES_H

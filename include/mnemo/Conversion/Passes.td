//===- Passes.td - mnemo conversion passes -----------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_CONVERSION_PASSES
#define MNEMO_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertMnemoToLinalgPass : Pass<"convert-mnemo-to-linalg"> {
  let summary = "Reference decomposition of mnemo ops into linalg/tensor/math";
  let description = [{
    Lowers every `mnemo` op to upstream `linalg.generic`, `tensor`, `arith`
    and `math` ops computing the op's exact math: no tiling, no fusion, the
    attention score matrix fully materialized. This is the executable
    specification (ARCHITECTURE.md's `mnemo-decompose`) that tiled and fused
    kernels are tested against. Every op is converted; an op the pass cannot
    lower is an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // MNEMO_CONVERSION_PASSES

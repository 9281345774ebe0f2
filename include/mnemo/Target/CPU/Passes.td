//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TARGET_CPU_PASSES
#define MNEMO_TARGET_CPU_PASSES

include "mlir/Pass/PassBase.td"

def MarkEntryPointsPass : Pass<"mnemo-cpu-mark-entry-points", "::mlir::ModuleOp"> {
  let summary = "Requests C interfaces for the public functions";
  let description = [{
    Marks every public `func.func` with `llvm.emit_c_interface`, records its
    result count and drops its `mnemo.name` argument/result names, so that after conversion to the LLVM dialect
    `mnemo-cpu-add-entry-points` can wrap `_mlir_ciface_<name>`.
  }];
}

def AddEntryPointsPass : Pass<"mnemo-cpu-add-entry-points", "::mlir::ModuleOp"> {
  let summary = "Adds the artifact's `void mnemo_entry_<name>(void **)` kernels";
  let description = [{
    For every function marked by `mnemo-cpu-mark-entry-points`, adds an
    exported `llvm.func @mnemo_entry_<name>(%args: !llvm.ptr)` that loads the
    result-block pointer from `args[0]` and the descriptor pointer of
    argument i from `args[1 + i]`, and calls `_mlir_ciface_<name>`. This is
    the kernel ABI of runtime/schema/artifact.fbs.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ApproximateMathPass : Pass<"mnemo-cpu-approximate-math"> {
  let summary = "Replaces exp, tanh, erf, log, sin, cos with polynomials";
  let description = [{
    Applies MLIR's polynomial approximations to f32 math ops (scalar and
    vector), so generated code never calls libm per lane. Accuracy is that
    of the upstream approximations (a few ulp).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def ExpandBF16Pass : Pass<"mnemo-cpu-expand-bf16"> {
  let summary = "Computes bf16 arithmetic in f32 and bf16 conversions inline";
  let description = [{
    Rewrites arithmetic on bf16 as f32 arithmetic between conversions
    (upstream's float emulation), then each `arith.extf`/`arith.truncf`
    between bf16 and f32 as integer arithmetic (shift; round to nearest
    even, NaN kept a NaN). LLVM would otherwise promote bf16 operations and
    call compiler-rt's `__truncsfbf2`, which a code object cannot count on
    finding when the runtime loads it. Other ops are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def LowerCopiesPass : Pass<"mnemo-cpu-lower-copies"> {
  let summary = "Rewrites memref.copy as linalg.copy";
  let description = [{
    Bufferization copies with memref.copy, which the LLVM lowering turns into
    calls to MLIR's runtime library for strided buffers. Kernels of an
    artifact must not depend on that library, so copies become linalg.copy
    and then loops like every other linalg op.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // MNEMO_TARGET_CPU_PASSES

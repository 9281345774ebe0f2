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

    With `rope-tables`, a `mnemo.rope` evaluates its angles' cos and sin once
    per position and rotary feature, as tables that CSE shares between the
    ropes of one set of positions (all layers' keys, say), and applies them
    as `mnemo.rope_tables` does, instead of once per element of every head;
    the values are the same. mnemoc uses it for the CPU targets.

    With `top-k-row-scratch`, each row of a `mnemo.top_k` allocates its
    scratch queue (9 bytes per score) in its own iteration of the parallel
    loop over the rows, instead of one queue for all rows: only the rows in
    flight hold one (a thread's), where one queue for a prefill of B
    sequences of S tokens over T keys takes B S T 9 bytes. mnemoc uses it
    for the CPU targets; a GPU thread cannot allocate.

    With `experts-along-outputs`, a `mnemo.experts` whose weights are
    constants has each expert's matrices transposed at compile time and
    its contractions run with the output feature as the innermost loop (a
    row of weights scaled into a row of the result, its steps independent),
    instead of a dot product along the input features whose every step
    waits for the one before; every sum keeps its order, so the values are
    the same. mnemoc
    uses it for the CPU targets.
  }];
  let options = [
    Option<"ropeTables", "rope-tables", "bool", /*default=*/"false",
           "Evaluate mnemo.rope's cos and sin as tables shared by the ropes "
           "of the same positions">,
    Option<"topKRowScratch", "top-k-row-scratch", "bool",
           /*default=*/"false",
           "Allocate mnemo.top_k's scratch queue per row, in the row's "
           "iteration">,
    Option<"expertsAlongOutputs", "experts-along-outputs", "bool",
           /*default=*/"false",
           "Transpose mnemo.experts' constant weights and run its "
           "contractions along the output features">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ApproximateMathPass : Pass<"mnemo-approximate-math"> {
  let summary = "Replaces exp, tanh, erf, log, sin, cos with polynomials";
  let description = [{
    Applies MLIR's polynomial approximations to f32 math ops (scalar and
    vector), so generated code never calls libm per lane (CPU and GPU kernels). Accuracy is that
    of the upstream approximations (a few ulp).

    With `keep-fast-tanh`, a scalar f32 `math.tanh` carrying the `afn`
    fast-math flag is left as it is, for a target that has an approximate
    instruction of its own (NVPTX's `tanh.approx.f32`, through
    `mnemo-gpu-math-to-intrinsics`). The 16-bit attention kernels' softcap
    asks for it: its relative error, 2^-11, is below bf16's and f16's
    rounding.

    With `expand-pow`, `math.powf` is simplified where its exponent is a
    constant MLIR knows (2: x * x, 0.5: sqrt, ...) and otherwise expanded
    into exp and log of |x| with C's powf's signs (a negative base with an
    integral exponent, b = 0, x = 1; not upstream's exp(b * log(x)), NaN for
    every negative base), then approximated, for a target with no library
    to call (NVPTX: libdevice's `__nv_powf` would be an unresolved symbol).
  }];
  let options = [
    Option<"keepFastTanh", "keep-fast-tanh", "bool", /*default=*/"false",
           "Leave scalar f32 math.tanh with the afn flag to the target">,
    Option<"expandPow", "expand-pow", "bool", /*default=*/"false",
           "Rewrite math.powf as products, roots, or exp and log">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def LowerCopiesPass : Pass<"mnemo-lower-copies"> {
  let summary = "Rewrites memref.copy as linalg.copy";
  let description = [{
    Bufferization copies with memref.copy, which the LLVM lowering turns into
    calls to MLIR's runtime library for strided buffers. Kernels of an
    artifact must not depend on that library, so copies become linalg.copy
    and then loops like every other linalg op.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LowerDynamicExpandShapePass : Pass<"mnemo-lower-dynamic-expand-shape"> {
  let summary = "Rewrites a memref.expand_shape with several dynamic sizes in "
                "one group as a reinterpret_cast";
  let description = [{
    Upstream's `expand-strided-metadata` (LLVM 22) crashes on a
    `memref.expand_shape` that splits one dim into several dynamic ones
    (`memref<?x128xf32>` into `memref<?x?x4x32xf32>`: a GEMM's rows
    `B * S` back to `[B, S]`). This pass lowers such an op itself, before
    that pass runs: the source's strided metadata, then a
    `memref.reinterpret_cast` to the output shape, each group's strides the
    source dim's stride times the sizes inside the group. Other expand_shape
    ops are left to the upstream pass.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ReadOnlyArgumentsPass : Pass<"mnemo-read-only-arguments", "::mlir::ModuleOp"> {
  let summary = "Marks every tensor argument of a function read-only";
  let description = [{
    Sets `bufferization.writable = false` on the tensor arguments of every
    function, so that One-Shot Bufferize never updates an input in place: a
    caller's input stays unchanged (it may be read-only memory), and no
    result aliases an input. An op that updates a tensor argument then
    works on a copy.

    The exception is an argument marked `mnemo.in_place` (a generation
    step's KV cache pool): it is writable, so that its update is done in the
    caller's buffer, and `mnemo-drop-in-place-results` then removes the
    result that returned it.
  }];
}

def DropInPlaceResultsPass : Pass<"mnemo-drop-in-place-results",
                                  "::mlir::ModuleOp"> {
  let summary = "Removes the results that return an in-place argument";
  let description = [{
    After bufferization, a result marked `mnemo.in_place_of = i` must
    return argument `i`'s buffer (looking through casts): the function
    updated the caller's buffer in place, and the result is removed from the
    function, which returns the others. A result that returns any other
    buffer (bufferization had to copy the argument) is an error naming it,
    never a silent copy.
  }];
}

def CompactResultsPass : Pass<"mnemo-compact-results"> {
  let summary = "Copies a function's strided results into dense buffers";
  let description = [{
    With identity layouts at function boundaries, bufferization returns a
    view of a larger buffer (a padded tile's result, say) through a
    `memref.cast` to the identity layout. When the view's strides or offset
    are dynamic the cast is accepted, but wrong at run time whenever the
    view is not dense: the caller reads the buffer as if it were. Each such
    returned cast becomes an allocation and a `memref.copy` of the view
    into it (a kernel, after `mnemo-lower-copies`).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttachLoopAnnotationsPass : Pass<"mnemo-attach-loop-annotations"> {
  let summary = "Gives LLVM branches the loop annotations their scf.for "
                "carried";
  let description = [{
    An `scf.for` with an `llvm.loop_annotation` (unroll or vectorize hints)
    keeps it through the lowering as a discardable attribute: the SCF to
    control-flow conversion puts it on the loop's latch branch, and the
    control-flow conversion to LLVM copies it onto the `llvm.br`. The
    translation to LLVM IR reads only the branch's own `loop_annotation`
    (the `!llvm.loop` metadata), so without this pass every hint is lost.
    The pass moves each branch's `llvm.loop_annotation` there.
  }];
}

def SplitIndependentFunctionsPass
    : Pass<"mnemo-split-independent-functions", "::mlir::ModuleOp"> {
  let summary = "Moves each set of functions that refer to one another into "
                "a nested module of its own";
  let description = [{
    Module passes (one-shot bufferization, buffer deallocation and its
    simplification) run on one thread over the whole module. A model's
    entry points (`forward`, `prefill`, `decode`) share nothing: in nested
    modules of their own, a pipeline nested on `builtin.module` runs them
    on the context's threads. The top-level ops are grouped by the symbols
    they use (an entry with the helpers it calls, a global with its users);
    ops without a symbol join the first group. Each nested module gets the
    top module's attributes. `mnemo-merge-nested-modules` undoes the split.
  }];
}

def MergeNestedModulesPass
    : Pass<"mnemo-merge-nested-modules", "::mlir::ModuleOp"> {
  let summary = "Moves the ops of nested modules back into the top module";
  let description = [{
    The inverse of `mnemo-split-independent-functions`, group by group.
    Passes that ran in the nested modules may each have added the same
    helper (a private declaration, a deallocation helper): a symbol already
    defined by an equivalent op is dropped; a different op of the same name
    is renamed, with its uses in its own module, before the move.
  }];
}

#endif // MNEMO_CONVERSION_PASSES

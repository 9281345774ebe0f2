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

def CPULinearKernelPass : Pass<"mnemo-cpu-linear-kernel", "::mlir::func::FuncOp"> {
  let summary = "Register-tiled vector kernels for mnemo.linear";
  let description = [{
    Rewrites each f32 `mnemo.linear` (weights f32, bf16 or f16) into a
    register-tiled GEMM written with the vector dialect: the output is cut
    into `scf.forall` tiles (the runtime's threads take them), each tile
    into micro-tiles of `rows` x `vectors`*`lanes` elements whose
    accumulators stay in registers through a block of K steps, updated by
    one `vector.fma` per accumulator and step from a broadcast input
    element and a vector of weights. Constant weights are packed at compile
    time into panels `[ceil(N / NR), K, NR]` (NR = `vectors` * `lanes`,
    zero-padded), so that each step's weights are one contiguous run; other
    weights are read in place (`[K, N]`, an `out_in` one transposed first).
    A tile's input rows are packed into `[ceil(rows / MR), K, MR]` (rows
    past the end repeat the last one and are not written); K is cut into
    blocks whose weights fit the L1 cache; columns past N are masked. A static row count keeps the
    full micro-tile height when at most 1/16 of the rows computed are
    unused, else picks a height that divides it. Other
    linears (f64) are left to `mnemo-tile-linear`.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"8",
           "f32 lanes of one vector register">,
    Option<"vectors", "vectors", "int64_t", /*default=*/"2",
           "Vector registers per micro-tile row">,
    Option<"rows", "rows", "int64_t", /*default=*/"6",
           "Rows of a micro-tile">,
    Option<"cacheBytes", "cache-bytes", "int64_t", /*default=*/"1048576",
           "Bytes of input rows a tile may keep in the core's cache">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark for each linear left to the generic tiling">,
    Option<"scalable", "scalable", "bool", /*default=*/"false",
           "Vectors of `lanes` x vscale lanes (SVE): the same code at every "
           "vector length, reading weights as [K, N] (the panels' width "
           "would depend on it)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def VectorizeTileOpsPass
    : Pass<"mnemo-cpu-vectorize-tile-ops", "::mlir::func::FuncOp"> {
  let summary = "Row vectors for the static elementwise ops of kernel tiles";
  let description = [{
    On tensors: each static `linalg.generic` or `linalg.fill` inside a loop
    (a kernel tile's softmax: scale and mask, row maximum, exp, rescale, row
    sum) whose innermost loop is every operand's innermost dim, or a
    reduction along it, is cut into one op per row (`scf.for` over the other
    dims) and the row vectorized by MLIR's vectorizer: transfers of whole
    rows, the row reduction a `vector.reduction`. A gather (`tensor.extract`)
    is cut so only when each row reads its elements contiguously or one
    element per row (a K/V tile read from its pages through the block
    table). Outside loops, such a gather of whole rows with static rows and
    any outer dims (a sparse attention's pages in a decode step) becomes an
    `scf.forall` over its rows, each one vector. Other gathers and ops that
    read across rows are left alone.

    With `scalable` (SVE), a kernel tile's op (but a gather) is a choice
    made at run time, `scf.if vscale == 1` around its rows: at 128 bits
    whole-row vectors, longer an `scf.for` over each row's chunks of 4 x
    vscale lanes, each a masked `vector<[4]xf32>` (the last one partial),
    a row reduction carried across the chunks.
  }];
  let options = [
    Option<"scalable", "scalable", "bool", /*default=*/"false",
           "Rows in masked chunks of 4 x vscale lanes (SVE)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def InstrumentProfilePass
    : Pass<"mnemo-cpu-instrument-profile", "::mlir::ModuleOp"> {
  let summary = "Brackets each top-level computation with profile hooks";
  let description = [{
    On buffers: each run of top-level ops of a public function that come
    from one source op (a linalg op, a loop nest, a copy) is bracketed by
    calls of the runtime's profile hook, `profile(point, 0)` and
    `profile(point, 1)`. The module attribute `mnemo.profile_points` lists
    each point's name: the op and its source location (an ONNX node's
    name, a checkpoint layer's). A hook the runtime did not set costs a
    load and a branch.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def OutlineParallelPass
    : Pass<"mnemo-cpu-outline-parallel", "::mlir::ModuleOp"> {
  let summary = "Moves parallel loops into bodies the runtime dispatches";
  let description = [{
    On buffers: the body of each outermost `scf.forall` (without results)
    and `scf.parallel` (without reductions) moves into a private function
    over a range `[begin, end)` of the loop's linearized iterations; the
    loop becomes a call of a dispatch declaration, marked
    `mnemo.parallel_body`, with the captured values, the loop's bounds, the
    total iteration count and an estimate of one iteration's work.
    `mnemo-cpu-add-runtime-hooks` defines the dispatch after the conversion
    to the LLVM dialect.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def MergeKernelsPass
    : Pass<"mnemo-cpu-merge-kernels", "::mlir::ModuleOp"> {
  let summary = "Keeps one copy of identical parallel bodies";
  let description = [{
    After `mnemo-cpu-outline-parallel`: private functions with equivalent
    bodies and attributes (the layers of a model differ only in the
    buffers their kernels are given; `prefill` repeats most of `forward`)
    are kept once, every reference renamed to the first of them in module
    order; then the dispatch declarations that now name the same body are
    merged too. Declarations of other external functions are never merged.
    The rest of the lowering then converts each kernel once.
  }];
}

def AddRuntimeHooksPass
    : Pass<"mnemo-cpu-add-runtime-hooks", "::mlir::ModuleOp"> {
  let summary = "Defines the hook table and the calls through it";
  let description = [{
    After the conversion to the LLVM dialect: adds the exported, zeroed
    `mnemo_hooks` table (runtime/schema/artifact.fbs) and defines each
    declaration marked `mnemo.parallel_body` (pack the arguments on the
    stack, call `parallel_for` with a trampoline that unpacks them and runs
    the body over a range, or run the whole range when the hook is null)
    and each marked `mnemo.hook = slot` (call the slot's function when
    set).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // MNEMO_TARGET_CPU_PASSES

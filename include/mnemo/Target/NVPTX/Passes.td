//===- Passes.td - NVPTX code generation passes ------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TARGET_NVPTX_PASSES
#define MNEMO_TARGET_NVPTX_PASSES

include "mlir/Pass/PassBase.td"

def AttentionKernelPass
    : Pass<"mnemo-gpu-attention-kernel", "::mlir::func::FuncOp"> {
  let summary = "Replaces 16-bit (or, as TF32, f32) mnemo.attention and "
                "mnemo.paged_attention with a tensor-core kernel";
  let description = [{
    Runs before `mnemo-tile-attention`. Each `mnemo.attention` whose Q, K, V
    and result are all bf16 or all f16 (or all f32 with `f32-precision`,
    below), with head dims that are multiples of 16, becomes one
    `gpu.launch` of a FlashAttention-2-style kernel (the rest keeps the
    tiled path):

    - a thread block of 4 warps owns 64 query rows of one (batch, KV head);
      the G query heads of a GQA group are packed into those rows
      (`64 / G` positions per head), so each K/V tile is read once for the
      whole group;
    - Q, K and V tiles are copied to shared memory with `cp.async`
      (`nvgpu.device_async_copy`, rows past the sequence zero-filled) in an
      XOR-swizzled layout, and read as MMA fragments with `ldmatrix`
      (`nvgpu.ldmatrix`, transposed for V);
    - S = QK^T and O += PV are `mma.sync.m16n8k16` with f32 accumulators
      (`nvvm.mma.sync`); the online softmax runs on the accumulators in
      registers (row maxima and sums across the lane quad with
      `gpu.shuffle xor`, `ex2.approx`), and P is repacked to 16-bit A
      fragments in registers;
    - KV tiles hidden by causal or window limits are not visited; only
      tiles that cross a limit or the end of the keys are masked;
    - an additive mask (any float type up to f32, broadcastable to
      `[B, Hq, Sq, Skv]`: an extent of 1 is broadcast) is read an element
      at a time where each score is, and added after the scale and the
      softcap.

    Tensors enter through `bufferization.to_buffer` and the result leaves
    through `bufferization.to_tensor` of a new buffer, so bufferization
    sees no tensor op of its own.

    With `round-f32` (the default), an f32 attention in a function whose
    linear layers all have weights of one 16-bit type (a bf16 or f16
    artifact: its activations are f32, its GEMMs round their f32 inputs to
    the weights' type) computes the same way: Q, K and V are rounded to
    that type, the kernel runs, and its result is widened back to f32.

    With `f32-precision=3xtf32` or `tf32`, an f32 attention that is not
    rounded takes the kernel with mma.sync's TF32 (m16n8k8) instead: the
    tiles hold the f32 values (16-bit units counted twice), Q and K
    fragments come from `ldmatrix` as for 16-bit tiles, P stays in
    registers (each lane's keys 2t, 2t + 1 of an n8 block in the k8 step's
    slots t and t + 4, so that V's fragment is two rows of the lane's
    column, loaded from shared memory), and with 3xtf32 every product is
    hi hi + hi lo + lo hi of the operands split into two TF32 values.

    A `mnemo.paged_attention` over bf16 or f16 pools (run before
    `mnemo-decompose-paged-cache`) takes the same kernel with 64-row
    blocks: a block's K and V rows are copied by `cp.async` straight from
    their pages (key t of sequence b is row t % P of page
    `block_table[b, t / P]`), each block reads its sequence's context
    length and its rows' query positions, visits only the KV tiles they
    can see (the length, causality and window), masks the rest, and gives
    a padding query (position -1) zeros. Batch and lengths are known at
    run time only, so split-KV (flash-decoding) is chosen at run time from
    the table's capacity and each split covers its share of the sequence's
    own tiles. With `round-f32`, an f32 query is rounded to the pools' type
    and the result widened back.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_80\"",
           "The GPU: sm_90a uses warpgroup MMA (wgmma) where shapes allow">,
    Option<"roundF32", "round-f32", "bool", "true",
           "Round an f32 attention to the 16-bit type of the function's "
           "linear weights, when they have one, and run the kernel">,
    Option<"f32Precision", "f32-precision", "std::string", "\"f32\"",
           "An f32 attention (not rounded by round-f32): f32 keeps the "
           "tiled path on the CUDA cores; 3xtf32 or tf32 take the kernel "
           "on mma.sync's TF32, three products a term or one">,
    Option<"useTma", "tma", "bool", "true",
           "On sm_90a, load tiles with TMA and mbarriers (else cp.async)">,
    Option<"blockQ", "block-q", "int64_t", "64",
           "Query rows per thread block, 16 per warp: 64 or 128">,
    Option<"splitKV", "split-kv", "int64_t", "0",
           "KV ranges per query tile (0: automatic, from sm-count)">,
    Option<"smCount", "sm-count", "int64_t", "132",
           "Multiprocessors of the GPU, for the split-KV choice">,
    Option<"blockKV", "block-kv", "int64_t", "0",
           "Keys per KV tile: 64, or 128 with wgmma (0: 64)">,
    Option<"sharedBytesLimit", "shared-bytes-limit", "int64_t", "101376",
           "Largest dynamic shared memory a block may use (two blocks fit "
           "an sm_80 SM)">,
    Option<"decodeKernel", "decode-kernel", "bool", "true",
           "On sm_90a, run a paged attention over FP8 pools whose query "
           "rows fit one 16-row tile (decode) with the decode kernel">,
    Option<"decodeTma", "decode-tma", "bool", "false",
           "With decode-kernel and tma, copy the FP8 pages by TMA boxes "
           "(pages of 8 or a multiple of 16 keys) instead of cp.async "
           "pieces; not yet validated on a GPU, off">,
    Option<"decodeKernel16", "decode-kernel-16bit", "bool", "false",
           "With decode-kernel, take bf16 and f16 pools too">,
    Option<"report", "report", "bool", "false",
           "Emit a remark naming why an attention keeps the tiled path">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LinearKernelPass
    : Pass<"mnemo-gpu-linear-kernel", "::mlir::func::FuncOp"> {
  let summary = "Replaces mnemo.linear with 16-bit or f32 weights by a "
                "tensor-core GEMM kernel";
  let description = [{
    Runs before linear layers are lowered to linalg. Each `mnemo.linear`
    of static shape (operands and result) whose weight is bf16 or f16,
    whose input has rank 2 or more and is f32 or the weight's type, and
    whose K and N are multiples of 8 becomes one `gpu.launch` of a tiled
    GEMM (the rest keeps the generic path). So does one whose weight
    `[N, K]` and input are f32 with `f32-precision=3xtf32` or `tf32`
    (the default, `f32`, leaves it on the CUDA cores): its tiles hold
    the f32 values as stored (as pairs of 16-bit units, the 16-bit layout)
    and it multiplies TF32 values with `mma.sync.m16n8k8`, each operand
    rounded to TF32 (`cvt.rna`) and, with `3xtf32`, its rest too, three
    products a term (hi lo + lo hi + hi hi), each K step's sums added to
    the running ones with f32 adds: about f32's accuracy at a third of
    TF32's rate; with `tf32`, one product (on sm_90a, wgmma from shared
    memory and TMA where the tiling allows).
    No producer is fused into an f32 layer.

    - a block computes a tile of the [M, N] output (M: the input's leading
      dimensions) over 64-wide steps of K: 128 x 128 with 8 warps, smaller
      tiles when that would leave multiprocessors idle, and one 16-row
      block per warp row for 48 rows or fewer (decode); when there are
      fewer than two output tiles per multiprocessor and the weight
      dominates the traffic, K is split over blocks (about four per
      multiprocessor, at least 4 steps of K each, the partials' traffic at
      most a quarter of the weight's) and a second kernel sums their f32
      partials;
    - A and W tiles rotate through 2 (mma.sync) to 4 (wgmma) stages of
      XOR-swizzled shared memory (up to 6 for a decode tile):
      16-bit tiles copied with `cp.async` (rows and columns past the
      matrix zero-filled), an f32 input loaded to registers during the
      previous step's multiply and rounded to the weight's type as it is
      stored; both layouts of W are read with `ldmatrix` (`.trans` for
      `[K, N]`);
    - a `mnemo.swiglu` whose only user is the layer (the down projection
      of an MLP) is computed as its input is staged, silu(gate) * up from
      the two tensors, instead of being written and read back;
    - a `mnemo.rms_norm` feeding the layer is folded in: the kernel stages
      x * weight and scales each output row by rsqrt(mean(x^2) + eps), the
      sums of squares gathered as x passes through (with split-K, each
      split's sums go to the reduction, which scales the rows); the norm
      stays for its other users;
    - in a decode tile (at most 48 rows, mma.sync), a `linalg.add` that
      is the layer's only user and adds a tensor of the result's type (a
      residual connection) is done on the way out: the kernel, or with
      split-K the reduction, adds the residual after the bias, and the
      add's result is the layer's;
    - on sm_90a, an f32 input of many rows (a prefill's rows, known at run
      time only, or 1024 or more) is instead rounded to the weight's type
      by a conversion of its own, shared by every layer reading it, when
      the layer then takes TMA (`narrow-inputs`): no SwiGLU or rms_norm
      folded in, the producer and the conversion kernels of their own;
    - a decode tile (at most 48 rows, a decode step's batch) keeps its
      fusions but not the register path: its input arrives by `cp.async`
      as stored (f32, SwiGLU's gate and up, the rms_norm weight) into a
      raw area of its stage, up to 6 stages deep like the weight, and is
      computed and rounded into the A tile when its step comes (through
      registers each K step waited for its input's load, one step
      ahead);
    - `mma.sync.m16n8k16` accumulates in f32 (on sm_90a, when there are
      enough 128 x 256 (not with SwiGLU or rms_norm), 128 x 128 or 64 x 128
      output tiles for every multiprocessor, each warpgroup multiplies
      its 64 rows with `wgmma` reading both tiles from shared memory, up to
      4 stages deep, one step's multiply in flight while the next is
      issued; a 16-bit input's tiles then arrive by TMA on one mbarrier per
      stage); the bias is added and the result converted on the way out.

    Tensors enter through `bufferization.to_buffer` and the result leaves
    through `bufferization.to_tensor` of a new buffer.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_80\"",
           "The GPU: sm_90a uses warpgroup MMA (wgmma) for large outputs">,
    Option<"useWgmma", "wgmma", "bool", "true",
           "On sm_90a, multiply with wgmma where the tiling allows">,
    Option<"useTma", "tma", "bool", "true",
           "With wgmma, load the tiles with TMA (not for an input staged "
           "through registers: f32, SwiGLU, rms_norm)">,
    Option<"fuseSwiglu", "fuse-swiglu", "bool", "true",
           "Compute a mnemo.swiglu only the layer reads on its input loads">,
    Option<"fuseRmsNorm", "fuse-rms-norm", "bool", "true",
           "Fold a mnemo.rms_norm feeding the layer into its input loads "
           "and row scales">,
    Option<"fuseResidual", "fuse-residual", "bool", "true",
           "Add a residual that a linalg.add adds to the layer's result on "
           "the way out">,
    Option<"narrowInputs", "narrow-inputs", "bool", "true",
           "On sm_90a, round the f32 input of a GEMM of many rows (a "
           "prefill's) to the weight's type in a kernel of its own, so "
           "that its tiles arrive by TMA">,
    Option<"f32Precision", "f32-precision", "std::string", "\"f32\"",
           "f32 weights: f32 (the generic path on the CUDA cores), 3xtf32 "
           "(three TF32 products a term, about f32's accuracy) or tf32 "
           "(one, 10-bit mantissas)">,
    Option<"smCount", "sm-count", "int64_t", "132",
           "Multiprocessors of the GPU, for the tile size and split-K">,
    Option<"splitK", "split-k", "int64_t", "0",
           "K ranges per output tile (0: automatic, from sm-count; at most "
           "64 and the number of K steps)">,
    Option<"maxBatch", "max-batch", "int64_t", "0",
           "Largest batch at run time (0: unknown): a GEMM whose only "
           "dynamic dim is its input's first (a decode step's [B, 1, K]) is "
           "tiled and split for that many rows">,
    Option<"sharedBytesLimit", "shared-bytes-limit", "int64_t", "101376",
           "Largest dynamic shared memory a block may use">,
    Option<"report", "report", "bool", "false",
           "Emit a remark naming why a linear layer keeps the generic path">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect"];
}

def TopKKernelPass : Pass<"mnemo-gpu-top-k-kernel", "::mlir::func::FuncOp"> {
  let summary = "Replaces mnemo.top_k with a radix-select kernel, a block a "
                "row or a chunk of a long row (then a merge)";
  let description = [{
    Each `mnemo.top_k` of f32, bf16 or f16 scores becomes one `gpu.launch`
    of 512 threads a row (the rest keep the selection loops of
    `mnemo-convert-to-linalg`, one thread a row). The row's k-th largest
    score is found by four passes over the row, a byte each from the top,
    that count the scores' order-preserving keys sharing the bytes found
    so far in a 256-bin shared-memory histogram; a last pass writes the
    indices of the scores above it and the first of those equal to it in
    ascending order (warp ballots and a scan of their counts), then -1 up
    to k. That is exactly `lowest_index`. With `introselect` ties, a row
    whose k-th score ties across the cut runs the reference selection
    (libstdc++'s introselect) in its first thread over a copy of the row,
    and the last pass writes its choice: the other rows need no order
    beyond the values.

    Few long rows are split: each row's entries into chunks of whole
    4096-entry steps (about sqrt(n / k) of them, a power of two up to 64,
    no more than two blocks a multiprocessor fill), a block a chunk
    selecting the chunk's top k under the same order, then a merge kernel
    selecting the row's top k of the chunks' candidates. With
    `introselect` ties, a chunk that leaves out keys equal to its k-th
    tells the merge, which runs the reference selection when that key is
    the row's k-th.
  }];
  let options = [
    Option<"report", "report", "bool", "false",
           "Emit a remark naming the kernel or why a top-k keeps the loops">,
    Option<"smCount", "sm-count", "int64_t", "132",
           "Multiprocessors of the target (how far long rows are split)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def IndexerKernelPass
    : Pass<"mnemo-gpu-indexer-kernel", "::mlir::func::FuncOp"> {
  let summary = "Replaces mnemo.lightning_indexer with a tensor-core kernel "
                "that fuses the ReLU-weighted head sum";
  let description = [{
    Each `mnemo.lightning_indexer` whose queries or keys are bf16 or f16
    (the other f32: rounded to that type, as the paged attention rounds an
    f32 query over 16-bit pages), or both f32 in a function whose linear
    layers all have weights of one 16-bit type (`round-f32`, as the
    attention kernel rounds), with 16 to
    128 indexer heads and a head dim up to 256 (multiples of 16), becomes
    one `gpu.launch`: a block of 4 warps scores 128 keys for one query
    position. The position's queries and the keys are converted to the
    16-bit type as they are stored in shared memory; each warp multiplies
    every head by its 32 keys with `mma.sync.m16n8k16` (f32 accumulators),
    and applies the scale, the ReLU and each head's weight to its
    accumulators, summing the heads in registers and across lanes
    (`gpu.shuffle xor`): the [heads x keys] products never reach memory.
    Paged keys (`table`) are read where they lie, each key row through its
    sequence's block-table entry. Keys past the length, after the position
    when causal, or of a padding query are -inf; a tile with no visible key
    is written without being computed. The rest keep the decomposition.

    A block scores a run of key tiles (up to 16, as many as fill about two
    blocks a multiprocessor), staging the queries once; keys of the tiles'
    own type arrive by cp.async, up to three tiles in flight (as many as
    fit `shared-bytes-limit`).
  }];
  let options = [
    Option<"roundF32", "round-f32", "bool", "true",
           "Round an f32 indexer of a 16-bit artifact to the weights' type">,
    Option<"smCount", "sm-count", "int64_t", "132",
           "Multiprocessors of the target (how many key tiles a block "
           "scores)">,
    Option<"sharedBytesLimit", "shared-bytes-limit", "int64_t", "101376",
           "Shared memory a block may take (fewer key stages in flight "
           "where three do not fit)">,
    Option<"report", "report", "bool", "false",
           "Emit a remark naming the kernel or why an indexer keeps the "
           "decomposition">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def ExternDynamicSharedPass
    : Pass<"mnemo-gpu-extern-dynamic-shared", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declares dynamic shared memory as PTX extern, aligned";
  let description = [{
    `convert-gpu-to-nvvm` lowers `gpu.dynamic_shared_memory` to an internal
    zero-sized `addr_space = 3` global, which the NVPTX back-end prints as a
    1-byte static `.shared` variable, aligned to 16. Each such global becomes
    external, so the PTX is `.extern .shared .align A .b8 name[];`, the
    block's dynamic shared memory, aligned to `alignment` (the 1024 bytes of
    a 128B-swizzle pattern, which wgmma descriptors and TMA boxes assume).
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "1024",
           "Alignment in bytes (at least; larger ones are kept)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ProgrammaticLaunchPass
    : Pass<"mnemo-gpu-programmatic-launch", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lets each kernel start while the one before it finishes "
                "(Hopper's programmatic dependent launch)";
  let description = [{
    A model's step is hundreds of kernels in one stream, most of them short
    at decode batch sizes, and between two of them the device idles: the
    next grid is launched only once the last block of the one before has
    exited and its memory is flushed. On sm_90 a launch with programmatic
    stream serialization lets the next grid's blocks be scheduled as soon
    as every block of the running grid has executed
    `griddepcontrol.launch_dependents`; they then wait in
    `griddepcontrol.wait` until that grid has completed and its writes are
    visible, so the launch and block scheduling overlap the previous
    kernel's tail without any change in what a kernel reads.

    Each kernel (`gpu.func` with the `kernel` attribute) gets, first in its
    entry block, `nvvm.griddepcontrol wait` and then
    `nvvm.griddepcontrol launch_dependents`. Waiting before anything else
    keeps every kernel correct whatever the one before it wrote; the
    launch plan marks a kernel that begins with the wait as one the
    runtime may launch programmatically (`Launch.programmatic` in the
    artifact). Launched without the attribute, the wait returns at once.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def HoistTileBuffersPass
    : Pass<"mnemo-gpu-hoist-tile-buffers", "::mlir::func::FuncOp"> {
  let summary = "Moves the buffers of a tile out of its scf.forall";
  let description = [{
    A buffer allocated inside an `scf.forall` (the temporaries of one
    FlashAttention tile) would be a device-side malloc per thread once the
    loop is a kernel. Each such `memref.alloc` of static shape becomes one
    byte buffer in front of the loop, with one slot per iteration, and
    inside the loop a `memref.view` of the iteration's slot (same type, so
    no use changes). The slot of a tile is its linearized iteration index.
    Buffers allocated inside a sequential loop of the tile are reused by
    every iteration, which is what bufferization produces: such buffers
    never live across iterations.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LaunchLoopsPass : Pass<"mnemo-gpu-launch-loops", "::mlir::func::FuncOp"> {
  let summary = "Turns outermost parallel loops into gpu.launch";
  let description = [{
    Each outermost loop of a function becomes one `gpu.launch`:
    - an `scf.forall` (a tile loop) runs one thread block per iteration;
      inside it, every `scf.parallel` at block level is spread over the
      block's threads (a block-stride loop over its linearized iteration
      space) between two `gpu.barrier`s, writes at block level that are
      not loops are done by thread 0, and ops without effects are computed
      by every thread;
    - an `scf.parallel` (an elementwise or row-wise loop nest) runs one
      thread per iteration of its linearized space, guarded by its size.
    Parallel loops nested in the work of one thread run sequentially.
  }];
  let options = [
    Option<"blockThreads", "block-threads", "int64_t", "128",
           "Threads per block of a tile loop">,
    Option<"elementThreads", "element-threads", "int64_t", "256",
           "Threads per block of an elementwise loop">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def VectorizeElementsPass
    : Pass<"mnemo-gpu-vectorize-elements", "::mlir::func::FuncOp"> {
  let summary = "Gives each thread of an elementwise loop nest a vector of elements";
  let description = [{
    An `scf.parallel` that `mnemo-gpu-launch-loops` gives one thread an
    iteration of (an outermost one, or one a tile loop spreads over its
    block) whose
    innermost loop runs from 0 to a constant count in unit steps is
    stepped by V instead when its iteration variable is used only as the
    last index of `memref.load`s and `memref.store`s of global memory
    (the other indices the same for all its values; elements of 1, 2, 4
    or 8 bytes), whose other ops with regions are uniform and free of
    effects, and every value computed from those
    loads is an elementwise op on scalars: the loads and stores become
    `vector.load` / `vector.store` of V elements with an alignment of V
    elements, `arith` ops act on vectors of V lanes (uniform operands
    broadcast), other ops (math functions) are applied lane by lane. V
    is 16 bytes of the widest element accessed, halved until it divides
    the innermost count and every accessed buffer's static strides and
    offset (innermost stride 1), so each vector access is aligned when the
    buffers are 16-byte aligned, as the runtime allocates them (TMA's
    tensor maps need that alignment too). Loop nests that do anything
    else with the iteration variable (index arithmetic such as a rotary
    embedding's pairs, nested loops over it) keep one element a thread.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def FuseIndexProducersPass
    : Pass<"mnemo-gpu-fuse-index-producers", "::mlir::func::FuncOp"> {
  let summary = "Computes values made from indices alone where they are read";
  let description = [{
    A `linalg.generic` on tensors with no inputs, all of whose loops are
    parallel and whose body is a few ops on its indices (a forward's
    positions, `arange` over the sequence) is fused into each
    elementwise `linalg.generic` that reads it (upstream
    `linalg::fuseElementwiseOps`): the reader computes the value from its
    own indices instead of loading it, and the producer, once unread, is
    no kernel of its own (one thread an element, storing what the readers
    load). Producers of more than a few ops, and readers that are not
    elementwise generics, are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def BufferReadsAtLaunchPass
    : Pass<"mnemo-gpu-buffer-reads-at-launch", "::mlir::func::FuncOp"> {
  let summary = "Gives each kernel launch its own to_buffer of the tensors it reads";
  let description = [{
    The kernel passes read tensors in a `gpu.launch` through
    `bufferization.to_buffer` ops placed just before it, which One-Shot
    Bufferize takes as the point of the read. The op is Pure, so CSE
    merges two launches' reads of one tensor into the first, and
    bufferization may then reuse the tensor's buffer in place before the
    second launch runs. Every memref a launch uses from above that is a
    read-only to_buffer, or a view of one (subview, reshape, cast), is
    recreated
    right before the launch (the to_buffer and the views cloned), and the
    originals nothing uses any more are erased.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def SplitKernelMemRefsPass
    : Pass<"mnemo-gpu-split-kernel-memrefs", "::mlir::func::FuncOp"> {
  let summary = "Passes dynamic memrefs into kernels as base + metadata";
  let description = [{
    Kernels take bare pointers, which needs buffers of static shape and
    layout. A memref with a dynamic size, stride or offset that a
    `gpu.launch` uses from outside is split on the host with
    `memref.extract_strided_metadata` and rebuilt at the top of the launch
    with `memref.reinterpret_cast`: the kernel receives the base pointer and
    the dynamic sizes, strides and offset as index operands.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ReductionsInnermostPass
    : Pass<"mnemo-gpu-reductions-innermost", "::mlir::func::FuncOp"> {
  let summary = "Interchanges linalg.generic loops so that reductions are innermost";
  let description = [{
    `convert-linalg-to-parallel-loops` makes one `scf.parallel` of the
    loops before a generic's first reduction and sequential loops of the
    rest, and `mnemo-gpu-launch-loops` gives threads the parallel ones
    only. A generic whose reduction comes before a parallel loop, as a
    linear layer over a `[K, N]` weight does (`(m, k, n)`), would leave
    its later parallel loops to each thread: 80 threads for a 2 x 40 x 344
    projection. This pass moves every parallel loop before the reductions
    (keeping their relative order), so each thread computes one output
    element over the reduction; for the `[K, N]` weight, adjacent threads
    read adjacent weights.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def WarpReductionsPass
    : Pass<"mnemo-gpu-warp-reductions", "::mlir::func::FuncOp"> {
  let summary = "Spreads each output's reduction over the lanes of a warp";
  let description = [{
    A linalg op on buffers (a generic, or a named one such as
    `linalg.reduce`) that folds its one output with a
    commutative arith combiner (a norm's sum of squares, a softmax's max
    and sum, a per-head product or an f32 linear layer on the CUDA cores)
    becomes a `gpu.launch` of 8-warp blocks in which a warp holds
    G = 32 / S outputs and splits each one's reduction into S slices.
    Each lane accumulates its slice in a register from the combiner's
    neutral element; the slices meet through xor shuffles and one lane
    folds the total into the output's initial value. S is 32 when the
    operand read most (of most static elements, then indexed by most
    loops) has the innermost reduction loop as its last
    dimension (lanes read consecutive elements of one row) and 32 / G
    when it has the innermost parallel loop there, G outputs filling one
    32-byte sector. Reductions shorter than 32 iterations, generics inside
    tile loops and other bodies are left to `mnemo-gpu-launch-loops`
    (one thread an output), as are ops whose output map does not name
    every parallel loop, whose body writes or reads the output's buffer,
    or that take that buffer as an input. Results are reassociated: the
    combiner's clones drop `nsw`, `nuw` and `ninf`. An output that holds
    one constant when the reduction starts (the last op of the block to
    touch its allocation before it is a `linalg.fill` of the constant into
    it, or a `linalg.copy` into it of a buffer so filled) is folded with
    the constant instead of a load, and that fill or copy is erased.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def SinkConstantGlobalsPass
    : Pass<"mnemo-gpu-sink-constant-globals", "::mlir::func::FuncOp"> {
  let summary = "Moves constant globals that kernels read into the kernels";
  let description = [{
    A `memref.get_global` of a constant global that a `gpu.launch` uses from
    outside is cloned into the launch, so the constant becomes device data
    of the kernel module (`mnemo-gpu-merge-kernel-modules` copies the
    global) instead of a buffer the host must provide. Weights that the
    artifact stores are function arguments by then and are not affected.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MathToIntrinsicsPass : Pass<"mnemo-gpu-math-to-intrinsics"> {
  let summary = "Rewrites f32 math ops as LLVM intrinsics the NVPTX back-end has";
  let description = [{
    `convert-gpu-to-nvvm` lowers math ops to libdevice calls, which makes
    the PTX depend on a CUDA toolkit found at compile time. After
    `mnemo-approximate-math` has replaced the transcendental functions
    with polynomials, what remains (sqrt, rsqrt, floor, ceil, trunc,
    roundeven, absf, copysign, fma on f32) becomes `llvm.call_intrinsic` of
    the LLVM intrinsic, which the NVPTX back-end implements with one PTX
    instruction (sqrt.rn, cvt.rmi, abs, fma.rn, ...).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def OutlineKernelsPass
    : Pass<"mnemo-gpu-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "gpu-kernel-outlining, keeping the launches' nvvm attributes";
  let description = [{
    Runs upstream's `gpu-kernel-outlining` and moves the `nvvm.*`
    attributes a kernel emitter put on its `gpu.launch` (`nvvm.minctasm`:
    the blocks a multiprocessor must hold at once, which bounds the
    registers ptxas may give a thread) onto the outlined `gpu.func`, where
    the NVVM lowering reads them. Outlining alone drops them. A launch
    whose grid or block has a constant size of 0 runs nothing and is
    erased first (a launch plan refuses such a grid).
  }];
  // Those of gpu-kernel-outlining, which runs inside it.
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::DLTIDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def MergeKernelModulesPass
    : Pass<"mnemo-gpu-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Moves every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per launch. The artifact
    stores one PTX module per model, so all kernels move into
    `gpu.module @mnemo_kernels` (renamed where names clash) and every
    `gpu.launch_func` is updated. The `memref.global`s the kernels read are
    copied into that module.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // MNEMO_TARGET_NVPTX_PASSES

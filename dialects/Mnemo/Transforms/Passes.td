//===- Passes.td - mnemo dialect passes --------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_TRANSFORMS_PASSES
#define MNEMO_DIALECT_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def SelectMLAFormPass : Pass<"mnemo-select-mla-form"> {
  let summary = "Chooses the form of each mnemo.mla_attention without one";
  let description = [{
    Sets `form(absorbed)` on a `mnemo.mla_attention` whose query length is
    statically 1 (a decode step: the absorbed form reads each latent row once
    for all heads) and `form(expanded)` on every other one (prefill, and
    lengths not known at compile time). Ops that already have a form keep it.
  }];
}

def DecomposeCompressedAttentionPass
    : Pass<"mnemo-decompose-compressed-attention"> {
  let summary = "Rewrites mnemo.compressed_attention as a masked "
                "mnemo.attention";
  let description = [{
    Replaces each `mnemo.compressed_attention` (DeepSeek-V4) by its
    reference form: the raw keys and the entries concatenated on the key
    axis, an additive mask `[B, 1, S, R + T]` (raw key j seen when
    `j <= t` and `t - j < window`; entry w when `w < (t + 1) / rate` and,
    with indices, listed), and one `mnemo.attention` with the sink and the
    keys as values, which the attention passes tile or give a kernel.

    With `query-chunk` N > 0, an op with more than one query row per
    sequence (a prefill, an appended chunk) is computed N queries at a time
    in a loop: each chunk attends to the raw keys its positions' windows
    reach and, with indices, each query to its own window and its listed
    entries gathered, so the work grows with S (W + K) rather than
    S (S + T).

    With `selected-group` N > 0, an op with at least N query heads a key
    head becomes one `mnemo.sparse_attention` with the sink instead: each
    query lists the `window` raw keys that end at its position and its
    entries (the K it lists, or every entry without indices), -1 for those
    it does not see, over the keys `[raw, entries]` (a decode step's listed
    entries gathered first). The GPU's kernel of selected keys computes it
    with one online softmax over the list. Listings of a prompt that may
    repeat (not a `mnemo.top_k`'s) keep the masked form.

    With paged entries (`entry_table`), a decode step with indices reads
    its K listed entries through the table; any other op gathers the pages
    first.
  }];
  let options = [
    Option<"queryChunk", "query-chunk", "int64_t", /*default=*/"0",
           "Queries per chunk of a prefill's attention (0: one attention "
           "over every key)">,
    Option<"selectedGroup", "selected-group", "int64_t", /*default=*/"0",
           "Query heads a key head from which the op becomes a "
           "mnemo.sparse_attention over each query's listed keys (0: "
           "never)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def DecomposeMLAPass : Pass<"mnemo-decompose-mla"> {
  let summary = "Rewrites mnemo.mla_attention as mnemo.attention + projections";
  let description = [{
    Replaces each `mnemo.mla_attention` by per-head linalg contractions and
    one `mnemo.attention`, in the op's `form` (expanded without one) or in
    the form the `form` option forces:

    * expanded: `k_nope = c_kv W_UK[h]^T`, `v = c_kv W_UV[h]^T` for every
      head, then attention over `q = [q_nope, q_pe]` and
      `k = [k_nope, k_pe]` (`k_pe` broadcast to the heads);
    * absorbed: `q_lat = q_nope W_UK[h]`, then one multi-query attention
      (a single key/value head) over `k = [c_kv, k_pe]`, `v = c_kv`, then
      `out = o_lat W_UV[h]^T`.

    The attention is tiled afterwards like any other (mnemo-tile-attention).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"form", "form", "::mlir::mnemo::MLAFormChoice",
           /*default=*/"::mlir::mnemo::MLAFormChoice::Auto",
           "Decomposition to use for every op (auto: each op's own form)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::mnemo::MLAFormChoice::Auto, "auto",
                        "the op's form attribute (expanded without one)"),
             clEnumValN(::mlir::mnemo::MLAFormChoice::Expanded, "expanded",
                        "up-project keys and values per head"),
             clEnumValN(::mlir::mnemo::MLAFormChoice::Absorbed, "absorbed",
                        "fold W_UK into the queries, W_UV into the output"))}]>,
  ];
}

def DecomposePagedCachePass : Pass<"mnemo-decompose-paged-cache"> {
  let summary = "Rewrites paged attention as a gather, a mask and attention";
  let description = [{
    The reference decomposition of `mnemo.paged_attention` (every target):
    each sequence's pages gathered into contiguous K and V
    (`[B, Hkv, MaxPages * P, d]`, the query's element type), an additive
    mask from the context lengths, query positions, causality and window,
    and one `mnemo.attention` over them (tiled afterwards like any other;
    the tiling computes gathered tiles where it loads them).

    `mnemo.kv_cache_write` is left as it is: it bufferizes in place into
    its pools as a parallel loop over the new tokens (padding tokens,
    position -1, skipped), each token's heads rounded to the pool's type
    (FP8: quantized with their scale) at row `p % P` of page
    `block_table[b, p / P]`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def TileAttentionPass
    : InterfacePass<"mnemo-tile-attention", "::mlir::FunctionOpInterface"> {
  let summary = "FlashAttention tiling of mnemo.attention";
  let description = [{
    Rewrites each `mnemo.attention` into the online-softmax form:
    `scf.forall` over (batch, key/value head, query tile) and, inside, a
    sequential `scf.for` over key/value tiles that carries the running row
    max, row sum and accumulator. The `Sq x Skv` score matrix is never
    materialized; each step works on static `[G, block-q, block-kv]` tiles,
    where the `G` query heads of a GQA group share every K/V tile. A static
    query length below `block-q` (decode) is the tile's height.

    Key/value tiles that the causal or sliding-window mask hides from every
    row of a query tile are not visited: the loop bounds are computed from
    the query tile's position. Sequences are padded to tile multiples once;
    padded keys are masked, padded query rows dropped.

    With `fuse-rope`, a `mnemo.rope` whose only user is the query operand is
    applied to each Q tile as it is loaded instead of to the whole tensor
    (except dynamic-NTK ropes, whose base depends on the largest position of
    the whole tensor). The key's rope stays whole: a key tile is loaded once
    per query tile, and its sines and cosines would be recomputed each time.

    With `transpose-keys`, the keys (unless computed tile by tile from their
    indices, as a paged cache's are) are transposed once into blocks of
    `[D, block-kv]`, one per key tile, which every query tile slices, when
    several query tiles read each key tile (not for one query tile, nor for
    a window with a query offset); otherwise each step transposes its key
    tile. With `fold-transposes`, a result
    whose only user is a `linalg.transpose` to `[B, S, H, D]` is written in
    that layout tile by tile, and the transpose goes. With
    `mask-edges-only`, each step applies the positions' masks (causal,
    window, padded keys) only when its key tile has a key hidden from some
    row. Causal query tiles are visited last to first (the longest first).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"32",
           "Query rows per tile (per query head)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"64",
           "Key/value rows per tile">,
    Option<"groupInBlock", "group-in-block", "bool", /*default=*/"false",
           "Keep a GQA group's packed query tile at block-q rows (block-q / "
           "group positions per tile) rather than block-q positions of "
           "every head">,
    Option<"fuseRope", "fuse-rope", "bool", /*default=*/"true",
           "Apply a feeding mnemo.rope on the Q tile loads">,
    Option<"transposeKeys", "transpose-keys", "bool", /*default=*/"false",
           "Transpose the keys once, before the query tiles, into "
           "[B, Hkv, tiles, D, block-kv] blocks, rather than each key tile "
           "for every query tile that reads it (the CPU's QK^T reads key "
           "tiles as [D, block-kv]); not for one query tile, nor for a "
           "window over a past, where the blocks would not pay">,
    Option<"maskEdgesOnly", "mask-edges-only", "bool", /*default=*/"false",
           "Apply the causal, window and padded-key masks only to key tiles "
           "where some key is hidden from some row of the query tile (an "
           "scf.if per step)">,
    Option<"foldTransposes", "fold-transposes", "bool", /*default=*/"false",
           "Write the output tiles in [B, S, H, D] when the result's only "
           "user transposes it there (an ONNX Transpose before the output "
           "projection), rather than transposing the whole result">,
  ];
}

def TileLinearPass
    : InterfacePass<"mnemo-tile-linear", "::mlir::FunctionOpInterface"> {
  let summary = "Cache tiling of mnemo.linear";
  let description = [{
    Rewrites each `mnemo.linear` into an `scf.forall` over its batch dims
    and `[block-rows, block-cols]` output tiles (rows: the input's
    second-to-last dim). Each tile accumulates over loops `(k, row, col)`: one weight row
    segment is loaded once and used for every row of the tile while the
    accumulator tile stays in cache, and the innermost loop runs along
    contiguous output features. Bias and the cast to the result type follow
    per tile.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"blockRows", "block-rows", "int64_t", /*default=*/"8",
           "Output rows per tile">,
    Option<"blockCols", "block-cols", "int64_t", /*default=*/"256",
           "Output features per tile">,
  ];
}

def ChunkIndexerTopKPass : Pass<"mnemo-chunk-indexer-top-k"> {
  let summary = "Computes a lightning indexer and its top-k a chunk of "
                "queries at a time";
  let description = [{
    A `mnemo.top_k` of a `mnemo.lightning_indexer`'s scores (their only
    use) over more than one query row per sequence (a prefill) holds the
    scores of every query for every key, S x T floats, and the indexer's
    reference form its heads' products, S x heads x T: a prompt of 16,384
    tokens with V3.2's 64 indexer heads would take 64 GiB. This pass
    computes both in an `scf.forall` over the sequences and chunks of
    queries (the threads share them), each chunk the same two ops on its
    rows, whose listings are inserted into the result: in flight, a chunk's
    scores and products only. A chunk has `head-rows / heads` queries (at
    least one); `head-rows` 0 leaves the ops whole. The indexer's keys and
    lengths, the top-k's order and ties are those of the whole rows, so the
    listings are the same.
  }];
  let options = [
    Option<"headRows", "head-rows", "int64_t", /*default=*/"0",
           "Query rows times indexer heads per chunk (0: no chunks)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def GroupExpertsPass : Pass<"mnemo-group-experts"> {
  let summary = "Computes a prefill's mnemo.experts expert by expert";
  let description = [{
    Rewrites each `mnemo.experts` with constant weights and more than one
    token per sequence (a prefill) so that every expert's weights are read
    once for all the tokens routed to it: a counting sort of the (token,
    slot) pairs by expert, an `scf.forall` over the experts in which each
    gathers its rows and runs `mnemo.linear` against its gate and up
    (transposed per expert at compile time and read as in_out slices),
    `mnemo.swiglu` and `mnemo.linear` against its down, each row times its
    routing weight, written at its offset in the sorted order; then each
    token sums its slots from there. The linears are the target's GEMMs.
    Decode steps (one token per sequence) and weights computed at run time
    keep the op.

    With `group-rows=A` (the GPU targets) the experts are one GEMM each of
    their products instead of a loop: the pairs' places in the sorted order
    are computed by parallel counts (per chunk of 256 pairs and expert, then
    prefix sums over chunks and experts), each expert's rows padded to whole
    blocks of A rows (pairs naming no expert in blocks of their own); each
    pair's row of x is written at its place (an `scf.forall` over the
    pairs; with `round-rows`, an f32 row rounded to the weights' 16-bit
    type, the precision the GPU's GEMMs read it in); gate, up and
    down are `mnemo.grouped_linear` ops over all the blocks, each block
    naming its expert (-1: none); then each token sums its slots times
    their routing weights. Decode steps and weights computed at run time
    are grouped too.
  }];
  let options = [
    Option<"groupRows", "group-rows", "int64_t", "0",
           "Rows of a block of one expert in the GEMM form (0: the loop "
           "over experts)">,
    Option<"roundRows", "round-rows", "bool", "false",
           "GEMM form: f32 rows of x written in the weights' 16-bit type">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def AttendOverPagesPass : Pass<"mnemo-attend-over-pages"> {
  let summary = "Attends over a decoder's past in its pages";
  let description = [{
    With `paged-attention`, a `mnemo.attention` (no causal, window or
    q_offset of its own) whose keys and values are each
    `concat(mnemo.kv_cache_gather, new)` along the tokens, the new part
    stored into the gathered pool by a `mnemo.kv_cache_write`, becomes a
    `mnemo.paged_attention` over the pools those writes return (moved
    before it): the past's right alignment puts key j at cached token
    j - (T - cached[b]), so the attention's mask becomes the paged one
    read at column t + T - cached[b]. The lengths are each sequence's
    cached tokens plus its new ones. Then every `mnemo.kv_cache_gather`
    left becomes the generic computing each element from its indices.
  }];
  let options = [
    Option<"pagedAttention", "paged-attention", "bool", "false",
           "Rewrite attention over a gathered past into paged attention (a "
           "target with a paged attention kernel)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def GenerateConcatsPass : Pass<"mnemo-generate-concats"> {
  let summary = "Computes a concat of a generated tensor element by element";
  let description = [{
    A concatenation along one dim, written as `tensor.insert_slice`s into a
    `tensor.empty`, whose first part is generated from its indices alone (a
    `linalg.generic` without inputs, such as the gather of a paged KV cache
    into a contiguous past) and whose second part has a static, non-zero
    extent along that dim becomes one such generic itself: element `t`
    along the dim is the generator's element `t` below the second part's
    offset `o` and the second part's element `t - o` from there (both read
    at clamped indices, one selected). A contiguous cache's
    `concat(past, new)`, which an ONNX decoder with past key/values builds
    for its attention, is then computed tile by tile where the attention
    loads it (`mnemo-tile-attention`) instead of being copied whole.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RefineShapesPass : Pass<"mnemo-refine-shapes"> {
  let summary = "Gives mnemo ops the static result types their operands imply";
  let description = [{
    Once a model is compiled for one input shape (`mnemoc --input-shape`),
    the generic ops around the mnemo ops become static by canonicalization,
    but a mnemo op keeps the dynamic types it was built with, its operands
    reaching it through `tensor.cast`s that drop the sizes. This pass looks
    through such casts and sets the result type the operands imply
    (`rms_norm`, `rope`, `swiglu`, `linear`, `embedding`, `attention`), its
    users keeping the old type through a `tensor.cast` that canonicalization
    folds. Kernels that need static shapes (the GPU's tensor-core kernels)
    then see them.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def RaiseContractionsPass : Pass<"mnemo-raise-contractions"> {
  let summary = "Raises matrix-product contractions to mnemo.linear";
  let description = [{
    A `linalg.generic` computing `C[b..., m, n] = sum_k A[b..., m, k] *
    B(k, n)` into a zero-filled `C`, where `B` is one matrix of static
    shape for every batch (read as `[k, n]` or `[n, k]`; leading unit dims
    are collapsed), becomes `mnemo.linear %A, %B` with `layout(in_out)` or
    `layout(out_in)`. That is how ONNX MatMul and Gemm import, and as a
    `mnemo.linear` they take the targets' GEMM kernels. A `C` that is not
    zero (an attention tile's accumulator) is added to the product in
    place. Weights per head that every row shares, `C[..] = sum_k A[rows...,
    k] * B[h..., n, k]` with `B` static and the `h` dims absent from `A`
    (the expanded MLA's keys and values up-projected from the latent), are
    one `layout(out_in)` linear over `B` as `[h... * n, k]`, whose result
    is expanded and transposed into `C`'s order. Products whose both
    operands are batched (attention scores of an unraised graph) are left
    alone.

    ```mlir
    // before: linalg.generic {indexing_maps = [(b, m, n, k) -> (b, m, k),
    //   (b, m, n, k) -> (k, n), (b, m, n, k) -> (b, m, n)], ...}
    %y = mnemo.linear %x, %w layout(in_out)
        : tensor<2x40x64xf32>, tensor<64x128xf32> -> tensor<2x40x128xf32>
    ```
  }];
  let dependentDialects = ["::mlir::mnemo::MnemoDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TransposeConstantWeightsPass
    : Pass<"mnemo-transpose-constant-weights"> {
  let summary = "Lays constant linear weights out for the target's kernels";
  let description = [{
    A `mnemo.linear` with `layout(out_in)` reads its weight `[N, K]` across
    rows when it walks the output features. When the weight is a constant,
    this pass transposes it at compile time and switches the op to
    `layout(in_out)`, so generated code streams it contiguously
    (`to-in-out`). With `f32-out-in`, f32 weights go the other way: a
    constant `[K, N]` one is transposed to `[N, K]` (`layout(out_in)`), the
    form a GPU target's TF32 GEMM reads, and an `out_in` one stays. The
    math is unchanged; weights used elsewhere are left alone.
  }];
  let options = [
    Option<"toInOut", "to-in-out", "bool", "true",
           "Constant out_in weights become in_out (f32 ones too unless "
           "f32-out-in)">,
    Option<"f32OutIn", "f32-out-in", "bool", "false",
           "Constant f32 weights become out_in">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def FoldUnitTransposesPass : Pass<"mnemo-fold-unit-transposes"> {
  let summary = "Transposes that move only unit dims as reshapes";
  let description = [{
    Rewrites a `linalg.transpose` on tensors whose dims that are not
    statically 1 keep their order (a decode step's `[B, 1, H, D]` heads
    swapped to `[B, H, 1, D]`) as `tensor.collapse_shape` onto those dims
    and `tensor.expand_shape` to the result's shape: the same elements in
    the same places, a view instead of a copy. A dynamic dim counts as one
    that is not 1.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def FoldShapeReshapesPass : Pass<"mnemo-fold-shape-reshapes"> {
  let summary = "Reshapes to a listed shape as expand_shape / collapse_shape";
  let description = [{
    Rewrites `tensor.reshape %x(tensor.from_elements ...)` (how ONNX exports
    with dynamic dims reshape) as `tensor.expand_shape` or
    `tensor.collapse_shape` where the listed sizes split or merge `%x`'s dims
    in order: a size equal to a source dim (proven by value bounds: the same
    `tensor.dim`, or a value the graph derived from it) pairs with it, static
    runs multiply out, and the last group takes what remains. Other reshapes
    are left alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // MNEMO_DIALECT_TRANSFORMS_PASSES

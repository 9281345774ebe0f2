//===- SparseAttentionOps.td - mnemo sparse attention ops ---*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// DeepSeek Sparse Attention (DeepSeek-V3.2): a lightning indexer scores every
// key for every query, a top-k picks the keys each query attends to, and the
// attention reads only those.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_SPARSEATTENTIONOPS
#define MNEMO_DIALECT_SPARSEATTENTIONOPS

include "dialects/Mnemo/IR/MnemoBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MNEMO_LightningIndexerOp : MNEMO_Op<"lightning_indexer",
                                        [Pure, AttrSizedOperandSegments]> {
  let summary = "DeepSeek-V3.2's lightning indexer: ReLU-weighted key scores";
  let description = [{
    Scores every key `t` for every query `s` with the indexer's own heads
    and its single key per token:

    ```
    score[b, s, t] = sum_h weights[b, s, h]
                           * max(0, scale * dot(q[b, s, h, :], k[b, t, :]))
    score[b, s, t] = -inf  if causal and t > pos(b, s)
                           or lengths is given and t >= lengths[b]
    ```

    `pos(b, s)` is `positions[b, s]` when the operand is given (a padding
    query at position -1 sees no key) and `s` otherwise. Shapes: `q`
    `[B, S, Hi, Di]` (already rotated), `k` `[B, T, Di]`, `weights`
    `[B, S, Hi]`, `positions` `[B, S]` i64, `lengths` `[B]` i64, result
    `[B, S, T]` f32. `scale` defaults to `1/sqrt(Di)`. Heads and head dim
    are static; batch and lengths may be dynamic. Computation is in f32.

    With `table(%bt)` (a block table `[B, W]`, i32 or i64) the keys are a
    paged cache's: `k` is its pool `[Pages, 1, P, Di]` and key `t` of
    sequence `b` is `k[bt[b, t / P], 0, t % P, :]`, `T = W * P` (a decode
    step scores its sequences' cached keys where they lie; entries of the
    table past a sequence's pages must still name a page of the pool,
    their keys masked by `lengths`).

    ```mlir
    %s = mnemo.lightning_indexer %q, %k, %w causal
        : tensor<1x?x4x32xf32>, tensor<1x?x32xf32>, tensor<1x?x4xf32>
        -> tensor<1x?x?xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$q,
    RankedTensorOf<[AnyFloat]>:$k,
    RankedTensorOf<[AnyFloat]>:$weights,
    Optional<RankedTensorOf<[I64]>>:$positions,
    Optional<RankedTensorOf<[I64]>>:$lengths,
    Optional<RankedTensorOf<[I32, I64]>>:$table,
    UnitAttr:$causal,
    OptionalAttr<F64Attr>:$scale
  );
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $weights
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`lengths` `(` $lengths^ `:` type($lengths) `)`)?
    (`table` `(` $table^ `:` type($table) `)`)?
    (`causal` $causal^)?
    (`scale` `(` $scale^ `)`)?
    attr-dict `:` type($q) `,` type($k) `,` type($weights) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The `scale` attribute, or 1/sqrt(Di).
    double getEffectiveScale();
  }];
}

def MNEMO_TopKTies : I32EnumAttr<"TopKTies",
    "which of several equal scores mnemo.top_k selects", [
      // The lower index first: the top k under (score, -index).
      I32EnumAttrCase<"LowestIndex", 0, "lowest_index">,
      // The entries libstdc++'s introselect leaves first, as PyTorch's CPU
      // torch.topk returns them.
      I32EnumAttrCase<"Introselect", 1, "introselect">]> {
  let cppNamespace = "::mlir::mnemo";
  let genSpecializedAttr = 0;
}

def MNEMO_TopKTiesAttr : EnumAttr<Mnemo_Dialect, MNEMO_TopKTies, "top_k_ties"> {
  let assemblyFormat = "$value";
}

def MNEMO_TopKOp : MNEMO_Op<"top_k", [Pure]> {
  let summary = "The indices of the k largest scores of each row";
  let description = [{
    For every row `scores[b, s, :]` (its first `lengths[b]` entries when
    `lengths` is given, else all `T`), the indices of its `k` largest
    scores, in ascending index order. Entries equal to -inf are never
    selected; a row with fewer than `k` other entries is filled with -1.
    NaN ranks above every number.

    Equal scores are a choice `ties` makes deterministic:

    * `lowest_index` (the default): the lower index wins, so the result is
      the top `k` under the order (score, -index) — what a radix select that
      gathers in index order returns (PyTorch's CUDA `torch.topk`).
    * `introselect`: the `k` entries libstdc++'s `std::nth_element`
      (introselect: median-of-three quickselect, heap select past
      2·log2(n) rounds) leaves first, or its heap select when `64·k <= n`,
      run over the row's `n` entries with the -inf ones in place: the set
      PyTorch's CPU `torch.topk` returns, so a model whose scores tie (ReLU
      zeros) reproduces a transformers reference exactly. The choice
      depends on the row's length, not only on its values.

    Both select the same set when the `k`-th largest score is unique.
    Shapes: `scores` `[B, S, T]` (any float type), `lengths` `[B]` i64,
    result `[B, S, k]` i64.

    ```mlir
    %i = mnemo.top_k %s k(2048) ties(introselect)
        : tensor<1x?x?xf32> -> tensor<1x?x2048xi64>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$scores,
    Optional<RankedTensorOf<[I64]>>:$lengths,
    I64Attr:$k,
    OptionalAttr<MNEMO_TopKTiesAttr>:$ties
  );
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $scores
    (`lengths` `(` $lengths^ `:` type($lengths) `)`)?
    `k` `(` $k `)`
    (`ties` `(` custom<TopKTies>($ties)^ `)`)?
    attr-dict `:` type($scores) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The `ties` attribute, or `lowest_index` without one.
    TopKTies getTiesOrDefault() {
      return getTies().value_or(TopKTies::LowestIndex);
    }
  }];
}

def MNEMO_SparseAttentionOp : MNEMO_Op<"sparse_attention", [Pure]> {
  let summary = "Attention of each query over the keys its indices list";
  let description = [{
    `mnemo.attention` restricted to the keys each query row selects:

    ```
    J(b, i) = { indices[b, i, j] : 0 <= indices[b, i, j] < Skv }
    s[t] = scale * dot(Q[b, hq, i, :], K[b, hq / G, t, :])   t in J(b, i)
    O[b, hq, i, :] = sum_t softmax(s)[t] V[b, hq / G, t, :]
    ```

    Shapes: query `[B, Hq, Sq, D]`, key `[B, Hkv, Skv, D]`, value
    `[B, Hkv, Skv, Dv]`, indices `[B, Sq, K]` (i32 or i64; the same for
    every head), result `[B, Hq, Sq, Dv]`, with `Hq` a multiple of `Hkv`
    (GQA/MQA: one shared latent head for absorbed MLA). Entries outside
    `[0, Skv)` (such as `mnemo.top_k`'s -1) are skipped; a row that lists
    no key yields zeros; a key listed twice counts twice. The selection is
    the only mask: causality belongs to whatever chose the indices.
    `scale` defaults to `1/sqrt(D)`. Computation is in f32.

    With `sink(%s)` (`[Hq]`, a learned logit per head, as gpt-oss and
    DeepSeek-V4 use) `exp(sink[hq])` joins each row's softmax denominator
    and nothing else; a row that lists no key still yields zeros.

    ```mlir
    %o = mnemo.sparse_attention %q, %k, %v, %idx scale(0.0722)
        : tensor<1x16x?x576xf32>, tensor<1x1x?x576xf32>,
          tensor<1x1x?x512xf32>, tensor<1x?x2048xi64>
        -> tensor<1x16x?x512xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$query,
    RankedTensorOf<[AnyFloat]>:$key,
    RankedTensorOf<[AnyFloat]>:$value,
    RankedTensorOf<[I32, I64]>:$indices,
    Optional<RankedTensorOf<[AnyFloat]>>:$sink,
    OptionalAttr<F64Attr>:$scale
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $indices
    (`sink` `(` $sink^ `:` type($sink) `)`)?
    (`scale` `(` $scale^ `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,`
    type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The `scale` attribute, or 1/sqrt(D).
    double getEffectiveScale();
    /// Query heads per key/value head (Hq / Hkv).
    int64_t getGroupSize() {
      return getQuery().getType().getDimSize(1) /
             getKey().getType().getDimSize(1);
    }
  }];
}

#endif // MNEMO_DIALECT_SPARSEATTENTIONOPS

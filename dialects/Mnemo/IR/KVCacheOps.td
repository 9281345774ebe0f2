//===- KVCacheOps.td - mnemo paged KV cache ops ------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A paged KV cache, as PagedAttention keeps it: a pool of pages of P tokens
// per layer (keys and values apart), a block table mapping each sequence's
// logical pages to pool pages, and per-sequence lengths. Pools are tensors:
// a write returns the updated pool (bufferized in place).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_KVCACHEOPS
#define MNEMO_DIALECT_KVCACHEOPS

include "dialects/Mnemo/IR/MnemoBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MNEMO_KVCacheWriteOp : MNEMO_Op<"kv_cache_write", [Pure]> {
  let summary = "Writes new tokens' keys or values into a paged cache";
  let description = [{
    Stores every new token's key (or value) in its page:

    ```
    for b, s with p = positions[b, s] >= 0:
      pool[block_table[b, p / P], h, p % P, :] = new[b, h, s, :]   (every h)
    ```

    Shapes: pool `[Pages, Hkv, P, D]`, new `[B, Hkv, S, D]`, block table
    `[B, MaxPages]` (i32 or i64), positions `[B, S]` (i64). The result is the
    updated pool. A position of -1 marks a padding token of a ragged batch:
    it is not written. Positions must stay below `MaxPages * P` and the
    block table must name pages of the pool (the runtime that fills them
    checks both; an out-of-range entry is undefined behaviour here).

    Storage: the pool's element type is f32, bf16 or f16; new values are
    rounded to it (nearest even). A pool of `f8E4M3FN` stores FP8 E4M3 with
    a scale per token and head, in the `scales` pool `[Pages, Hkv, P]`
    (f32) that then comes with it and is returned updated as the second
    result: `scale = max(amax / 448, 2^-126)` over the row's D values
    (amax their largest magnitude), each value stored as the E4M3 nearest
    to `value / scale` (nearest even; subnormals kept), read back as
    `e4m3 * scale`.

    ```mlir
    %kp, %ks = mnemo.kv_cache_write %k into %pool scales %s at %pos table %table
        : tensor<2x2x?x32xf32>, tensor<64x2x16x32xf8E4M3FN>, tensor<2x?xi64>,
          tensor<2x8xi32>, tensor<64x2x16xf32>
        -> tensor<64x2x16x32xf8E4M3FN>, tensor<64x2x16xf32>
    ```

    ```mlir
    %kp = mnemo.kv_cache_write %k into %pool at %pos table %table
        : tensor<2x2x?x32xf32>, tensor<64x2x16x32xbf16>, tensor<2x?xi64>,
          tensor<2x8xi32> -> tensor<64x2x16x32xbf16>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$new_values,
    RankedTensorOf<[AnyFloat]>:$pool,
    RankedTensorOf<[I64]>:$positions,
    RankedTensorOf<[I32, I64]>:$block_table,
    Optional<RankedTensorOf<[F32]>>:$scales
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result,
                      Optional<RankedTensorOf<[F32]>>:$result_scales);
  let assemblyFormat = [{
    $new_values `into` $pool (`scales` $scales^)? `at` $positions `table`
    $block_table attr-dict
    `:` type($new_values) `,` type($pool) `,` type($positions) `,`
    type($block_table) (`,` type($scales)^)? `->` type($result)
    (`,` type($result_scales)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Tokens per page (P).
    int64_t getPageSize() { return getPool().getType().getDimSize(2); }
  }];
}

def MNEMO_KVCacheGatherOp : MNEMO_Op<"kv_cache_gather", [Pure]> {
  let summary = "A paged cache's sequences as a contiguous past tensor";
  let description = [{
    What a runtime with contiguous caches passes a decoder as its past key
    (or value) tensor for a left-padded batch: sequence `b`'s
    `lengths[b]` cached tokens end at the result's last token, zeros before.

    ```
    t = j - (T - lengths[b])          T: the result's token extent
    result[b, h, j, :] = t >= 0 ? pool[block_table[b, t / P], h, t % P, :]
                                : 0
    ```

    Shapes: pool `[Pages, Hkv, P, D]` (f32, bf16, f16, or `f8E4M3FN` with
    its `scales` `[Pages, Hkv, P]`, dequantized: the E4M3 value times its
    token's scale), block table `[B, MaxPages]` (i32 or i64), lengths `[B]`
    (i64, each at most T and `MaxPages * P`), `tokens` (index): T; result
    `[B, Hkv, T, D]` of a float type (values rounded to it).

    An ONNX decoder exported with past key/values reads its past through
    it (lib/Frontend/ONNX/DecoderWithPast.cpp). Where the attention over
    it is the past concatenated with the new tokens a `mnemo.kv_cache_write`
    stores, `mnemo-attend-over-pages` turns the attention into a
    `mnemo.paged_attention`; otherwise the gather becomes a generic
    computed where its readers load it.

    ```mlir
    %past = mnemo.kv_cache_gather %pool table %table lengths %lens
        tokens %t : tensor<64x2x16x32xf32>, tensor<?x8xi32>, tensor<?xi64>
        -> tensor<?x2x?x32xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$pool,
    Optional<RankedTensorOf<[F32]>>:$scales,
    RankedTensorOf<[I32, I64]>:$block_table,
    RankedTensorOf<[I64]>:$lengths,
    Index:$tokens
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $pool (`scales` `(` $scales^ `:` type($scales) `)`)? `table` $block_table
    `lengths` $lengths `tokens` $tokens attr-dict
    `:` type($pool) `,` type($block_table) `,` type($lengths)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def MNEMO_PagedAttentionOp : MNEMO_Op<"paged_attention",
                                     [Pure, AttrSizedOperandSegments]> {
  let summary = "Attention of queries over their sequences' cache pages";
  let description = [{
    `mnemo.attention` over a paged cache: sequence `b`'s keys and values
    are its first `context_lens[b]` tokens, token `t` in page
    `block_table[b, t / P]` at row `t % P`:

    ```
    K_b[h, t, :] = key_pool[block_table[b, t / P], h, t % P, :]
    s[t]  = scale * dot(Q[b, hq, i, :], K_b[hq / G, t, :])   t < context_lens[b]
    s[t]  = softcap * tanh(s[t] / softcap)                   if softcap is set
    s[t]  = -inf  if causal and t > q_positions[b, i]
                  or window is set and q_positions[b, i] - t >= window
    O[b, hq, i, :] = softmax_t(s) V_b[hq / G, t, :]   (sink in the denominator)
    ```

    Shapes: query `[B, Hq, Sq, D]`, key pool `[Pages, Hkv, P, D]`, value
    pool `[Pages, Hkv, P, Dv]`, block table `[B, MaxPages]` (i32 or i64),
    context lengths `[B]` (i64), query positions `[B, Sq]` (i64), result
    `[B, Hq, Sq, Dv]`. Each sequence has its own length and positions
    (ragged batches); a query row at position -1 (padding) and a row that
    sees no key yield zeros. The pools hold f32, bf16 or f16 (the result
    has the query's element type); computation is in f32 whatever the
    storage type. FP8 pools (`f8E4M3FN`) come with their scale pools
    (`key_scales`, `value_scales`, `[Pages, Hkv, P]` f32, as
    `mnemo.kv_cache_write` fills them) and are dequantized on load.

    With `indices` (`[B, Sq, K]`, i32 or i64; DeepSeek-V3.2's top-k
    selection), query `i` of sequence `b` attends to the cached tokens
    `indices[b, i, :]` lists alone, as `mnemo.sparse_attention` does over
    a contiguous K: entries outside `[0, context_lens[b])` (`mnemo.top_k`'s
    -1) are skipped, a token listed twice counts twice, and the selection
    is the only mask (no `causal`, `window`, `softcap` or `sink` with it).

    With `mask` (an additive mask broadcastable, NumPy-style, to
    `[B, Hq, Sq, MaxPages * P]`: its last dim indexes the sequence's cached
    tokens), `s[t] += mask[b, hq, i, t]` after the scale and softcap, as
    `mnemo.attention`'s mask; tokens past `context_lens[b]` stay unseen
    whatever it holds. An ONNX decoder's own mask reaches the pages this
    way (`mnemo-attend-over-pages`). Not with `indices`.

    ```mlir
    %o = mnemo.paged_attention %q, %kpool, %vpool table %table
        lengths %lens positions %qpos causal window(16)
        : tensor<2x4x1x32xf32>, tensor<64x2x16x32xbf16>,
          tensor<64x2x16x32xbf16>, tensor<2x8xi32>, tensor<2xi64>,
          tensor<2x1xi64> -> tensor<2x4x1x32xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$query,
    RankedTensorOf<[AnyFloat]>:$key_pool,
    RankedTensorOf<[AnyFloat]>:$value_pool,
    RankedTensorOf<[I32, I64]>:$block_table,
    RankedTensorOf<[I64]>:$context_lens,
    RankedTensorOf<[I64]>:$q_positions,
    Optional<RankedTensorOf<[AnyFloat]>>:$sink,
    Optional<RankedTensorOf<[F32]>>:$key_scales,
    Optional<RankedTensorOf<[F32]>>:$value_scales,
    Optional<RankedTensorOf<[I32, I64]>>:$indices,
    Optional<RankedTensorOf<[AnyFloat]>>:$mask,
    UnitAttr:$causal,
    OptionalAttr<I64Attr>:$window,
    OptionalAttr<F64Attr>:$scale,
    OptionalAttr<F64Attr>:$softcap
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $query `,` $key_pool `,` $value_pool
    (`scales` `(` $key_scales^ `,` $value_scales `:` type($key_scales) `,`
     type($value_scales) `)`)?
    `table` $block_table
    `lengths` $context_lens `positions` $q_positions
    (`causal` $causal^)?
    (`window` `(` $window^ `)`)?
    (`scale` `(` $scale^ `)`)?
    (`softcap` `(` $softcap^ `)`)?
    (`sink` `(` $sink^ `:` type($sink) `)`)?
    (`indices` `(` $indices^ `:` type($indices) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($query) `,` type($key_pool) `,` type($value_pool) `,`
    type($block_table) `,` type($context_lens) `,` type($q_positions)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Tokens per page (P).
    int64_t getPageSize() { return getKeyPool().getType().getDimSize(2); }
    /// Query heads per key/value head (Hq / Hkv).
    int64_t getGroupSize();
  }];
}

#endif // MNEMO_DIALECT_KVCACHEOPS

//===- CompressedMemoryOps.td - DeepSeek-V4 memory ops -----*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_COMPRESSEDMEMORYOPS
#define MNEMO_DIALECT_COMPRESSEDMEMORYOPS

include "dialects/Mnemo/IR/MnemoBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MNEMO_CompressedAttentionOp : MNEMO_Op<"compressed_attention",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "Attention over a window of raw keys and compressed entries";
  let description = [{
    DeepSeek-V4's attention over its three-level memory: the raw keys of a
    sliding window and the entries of closed compression windows, under one
    softmax with a per-head sink. The keys are also the values (V4's single
    K = V head). For batch `b`, query head `h` and row `i` at position
    `t = positions[b, i]`:

    ```
    raw key j (0 <= j < R, at position     visible iff p <= t and t - p < window
      p = j, or raw_start[b] + j)
    entry w   (0 <= w < T)                 visible iff w < (t + 1) / rate
                                           and, with indices, w is listed in
                                           indices[b, i, :] (a set: -1 and
                                           out-of-range entries list nothing)
    s      = scale * dot(Q[b, h, i, :], key) over the visible keys of
             [raw[b, h / G], entries[b, h / G]]
    p      = softmax(s), with exp(sink[h]) added to the denominator
    O[b, h, i, :] = sum p * key
    ```

    `raw_start` ([B] i64) says where each sequence's raw keys start: a
    generation step passes the keys of its window only, not those of the
    whole context.

    With `entry_table(%t)` (a block table `[B, W]`, i32 or i64) the entries
    are a paged cache's: `entries` is its pool `[Pages, Hkv, P, D]` (P
    static, any float type) and entry `w` of sequence `b` is
    `entries[t[b, w / P], :, w % P, :]`, `T = W * P`. A generation step then
    reads the entries it attends where they lie: with one query row per
    sequence and indices, only the K listed ones. Columns of the table past
    a sequence's pages must still name a page of the pool (their entries
    are not closed yet, so no query sees them).

    Entry `w` pools the tokens of compression window `w`, so it closes once
    the token at `(w + 1) * rate - 1` is in: HCA attends to every closed
    entry, CSA to those its lightning indexer lists. A query at position -1
    (the padding of a ragged batch), or one that sees nothing, yields zeros.

    Shapes: query `[B, Hq, S, D]`, raw `[B, Hkv, R, D]`, entries
    `[B, Hkv, T, D]`, positions `[B, S]` i64, indices `[B, S, K]` (i32 or
    i64), sink `[Hq]`, result `[B, Hq, S, D]`; `Hq` a multiple of `Hkv`.
    `scale` defaults to `1/sqrt(D)`. Computation is in f32.

    ```mlir
    %o = mnemo.compressed_attention %q, %raw, %entries positions(%pos)
        indices(%idx : tensor<1x?x512xi64>) sink(%s : tensor<64xf32>)
        window(128) rate(4)
        : tensor<1x64x?x512xf32>, tensor<1x1x?x512xf32>,
          tensor<1x1x?x512xf32>, tensor<1x?xi64> -> tensor<1x64x?x512xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$query,
    RankedTensorOf<[AnyFloat]>:$raw,
    RankedTensorOf<[AnyFloat]>:$entries,
    RankedTensorOf<[I64]>:$positions,
    Optional<RankedTensorOf<[I64]>>:$raw_start,
    Optional<RankedTensorOf<[I32, I64]>>:$indices,
    Optional<RankedTensorOf<[I32, I64]>>:$entry_table,
    Optional<RankedTensorOf<[AnyFloat]>>:$sink,
    I64Attr:$window,
    I64Attr:$rate,
    OptionalAttr<F64Attr>:$scale
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $query `,` $raw `,` $entries `positions` `(` $positions `)`
    (`raw_start` `(` $raw_start^ `:` type($raw_start) `)`)?
    (`indices` `(` $indices^ `:` type($indices) `)`)?
    (`entry_table` `(` $entry_table^ `:` type($entry_table) `)`)?
    (`sink` `(` $sink^ `:` type($sink) `)`)?
    `window` `(` $window `)` `rate` `(` $rate `)`
    (`scale` `(` $scale^ `)`)?
    attr-dict `:` type($query) `,` type($raw) `,` type($entries) `,`
    type($positions) `->` type($result)
  }];
  let hasVerifier = 1;
}

def MNEMO_GatedPoolOp : MNEMO_Op<"gated_pool", [Pure]> {
  let summary = "DeepSeek-V4's compressor: a gated pool of a window of tokens";
  let description = [{
    Pools the tokens of compression window `w = entries[b, n]` into one
    entry, channel by channel, weighting each slot's value by a softmax over
    the window's slots of its gate plus a position bias:

    ```
    slot j of entry w, channel c:
      plain (slots = rate):   token w * rate + j,          kv/gate channel c
      overlapping (2 * rate): j < rate:  token (w - 1) * rate + j, channel c
                                         (the previous window's first half;
                                         none for w = 0)
                              j >= rate: token w * rate + j - rate,
                                         channel D + c (this window's second
                                         half)
    out[b, n, c] = sum_j softmax_j(gate[b, token, ch] + bias[j, c])
                         * kv[b, token, ch]
    ```

    over the slots that exist (a token below L). HCA pools plain windows of
    128 tokens, CSA overlapping windows of 4 (DeepSeek-V4's `Compressor`).
    An entry index below 0 yields zeros (a generation step's token that
    closes no window). The normalization and the rope at `w * rate` that
    follow in V4 are `mnemo.rms_norm` and `mnemo.rope`.

    Shapes: kv and gate `[B, L, C]` with `C = D` (plain) or `2 D`
    (overlapping), bias `[slots, D]`, entries `[B, N]` i64, result
    `[B, N, D]`. Computation is in f32.

    ```mlir
    %e = mnemo.gated_pool %kv, %gate, %bias, %entries rate(4) overlapping
        : tensor<1x?x1024xf32>, tensor<1x?x1024xf32>, tensor<8x512xf32>,
          tensor<1x?xi64> -> tensor<1x?x512xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$kv,
    RankedTensorOf<[AnyFloat]>:$gate,
    RankedTensorOf<[AnyFloat]>:$bias,
    RankedTensorOf<[I64]>:$entries,
    I64Attr:$rate,
    UnitAttr:$overlapping
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $kv `,` $gate `,` $bias `,` $entries `rate` `(` $rate `)`
    (`overlapping` $overlapping^)?
    attr-dict `:` type($kv) `,` type($gate) `,` type($bias) `,`
    type($entries) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // MNEMO_DIALECT_COMPRESSEDMEMORYOPS

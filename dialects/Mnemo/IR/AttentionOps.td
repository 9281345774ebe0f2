//===- AttentionOps.td - mnemo attention ops ---------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_ATTENTIONOPS
#define MNEMO_DIALECT_ATTENTIONOPS

include "dialects/Mnemo/IR/MnemoBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MNEMO_AttentionOp : MNEMO_Op<"attention",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "Scaled dot-product attention (MHA/GQA/MQA)";
  let description = [{
    Computes, for every batch `b`, query head `h` and query row `i`,

    ```
    s[j]   = scale * dot(Q[b,h,i,:], K[b,h/G,j,:])        G = Hq / Hkv
    s[j]   = softcap * tanh(s[j] / softcap)               if softcap is set
    s[j]  += mask[b,h,i,j]                                if mask is given
    s[j]   = -inf  if causal and j > i + q_offset
                   or window is set and i + q_offset - j >= window
    p      = softmax over j of s, with exp(sink[h]) added to the denominator
    O[b,h,i,:] = sum_j p[j] * V[b,h/G,j,:]
    ```

    Shapes: Q `[B, Hq, Sq, D]`, K `[B, Hkv, Skv, D]`, V `[B, Hkv, Skv, Dv]`,
    result `[B, Hq, Sq, Dv]`. `Hq` must be a multiple of `Hkv` (MHA when equal,
    GQA otherwise, MQA when `Hkv` is 1); `D` may differ from `Dv`. Head counts
    and head dims are static; batch and sequence lengths may be dynamic.

    * `scale` defaults to `1/sqrt(D)`.
    * `causal`: query row `i` sits at absolute position `i + q_offset` and
      sees keys `j <= i + q_offset`. `q_offset` (an `index`, default 0) is
      the number of cached tokens in front of the queries during decode.
    * `window(W)`: a query sees only the `W` most recent keys up to its own
      position (`i + q_offset - j < W`), as in Mistral's sliding window.
    * `softcap(c)`: Gemma-2 style logit capping, applied before the mask.
    * `mask`: an additive float mask broadcastable (numpy rules, aligned on
      the right) to `[B, Hq, Sq, Skv]`.
    * `sink`: per-query-head logits `[Hq]` that join the softmax denominator
      but contribute no value (attention sinks).

    A row whose keys are all masked yields zeros, not NaN.
    Computation is in f32 whatever the element type.

    ```mlir
    %o = mnemo.attention %q, %k, %v causal window(16) q_offset(%past)
        : tensor<1x8x1x128xf32>, tensor<1x2x?x128xf32>, tensor<1x2x?x128xf32>
        -> tensor<1x8x1x128xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$query,
    RankedTensorOf<[AnyFloat]>:$key,
    RankedTensorOf<[AnyFloat]>:$value,
    Optional<RankedTensorOf<[AnyFloat]>>:$mask,
    Optional<RankedTensorOf<[AnyFloat]>>:$sink,
    Optional<Index>:$q_offset,
    UnitAttr:$causal,
    OptionalAttr<I64Attr>:$window,
    OptionalAttr<F64Attr>:$scale,
    OptionalAttr<F64Attr>:$softcap
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`causal` $causal^)?
    (`window` `(` $window^ `)`)?
    (`scale` `(` $scale^ `)`)?
    (`softcap` `(` $softcap^ `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`sink` `(` $sink^ `:` type($sink) `)`)?
    (`q_offset` `(` $q_offset^ `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute, or 1/sqrt(D) without one.
    double getEffectiveScale();
    /// Query heads per key/value head (Hq / Hkv).
    int64_t getGroupSize();
    /// The softcap value, if any.
    std::optional<double> getSoftcapValue();
    /// The sliding-window size, if any.
    std::optional<int64_t> getWindowSize();
  }];
}

#endif // MNEMO_DIALECT_ATTENTIONOPS

//===- MLAOps.td - mnemo multi-head latent attention -------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_MLAOPS
#define MNEMO_DIALECT_MLAOPS

include "dialects/Mnemo/IR/MnemoBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MNEMO_MLAForm : I32EnumAttr<"MLAForm",
    "how mnemo.mla_attention is decomposed into mnemo.attention", [
      // Keys and values up-projected per head, then multi-head attention.
      I32EnumAttrCase<"Expanded", 0, "expanded">,
      // W_UK folded into the queries, attention over the latent cache,
      // W_UV applied to the result.
      I32EnumAttrCase<"Absorbed", 1, "absorbed">]> {
  let cppNamespace = "::mlir::mnemo";
  let genSpecializedAttr = 0;
}

def MNEMO_MLAFormAttr : EnumAttr<Mnemo_Dialect, MNEMO_MLAForm, "mla_form"> {
  let assemblyFormat = "$value";
}

def MNEMO_MLAAttentionOp : MNEMO_Op<"mla_attention",
                                    [Pure, AttrSizedOperandSegments]> {
  let summary = "DeepSeek multi-head latent attention over a latent KV";
  let description = [{
    Attention whose keys and values are stored as one normalized latent
    vector per token, `c_kv` `[B, Skv, r]`, plus one rotary key `k_pe`
    `[B, Skv, dr]` shared by all heads (DeepSeek-V2/V3 MLA). Every head `h`
    reads them through its up-projections `W_UK[h]` and `W_UV[h]`:

    ```
    k_nope[b,h,j,:] = W_UK[h] c_kv[b,j,:]          (dn values)
    v[b,h,j,:]      = W_UV[h] c_kv[b,j,:]          (dv values)
    s[j] = scale * (dot(q_nope[b,h,i,:], k_nope[b,h,j,:])
                    + dot(q_pe[b,h,i,:], k_pe[b,j,:]))
    s[j] = -inf  if causal and j > i + q_offset
    O[b,h,i,:] = sum_j softmax(s)[j] * v[b,h,j,:]
    ```

    Shapes: `q_nope` `[B, H, Sq, dn]`, `q_pe` `[B, H, Sq, dr]` (already
    rotated), `c_kv` `[B, Skv, r]`, `k_pe` `[B, Skv, dr]` (already rotated),
    result `[B, H, Sq, dv]`. The weights are per-head matrices in the
    `[out, in]` order of a PyTorch linear layer, with the latent rank last:
    `w_uk` `[H, dn, r]` and `w_uv` `[H, dv, r]`. Hugging Face's `kv_b_proj`
    weight `[H*(dn+dv), r]` viewed as `[H, dn+dv, r]` holds `w_uk` in rows
    `0..dn-1` and `w_uv` in rows `dn..dn+dv-1` of each head. Head count,
    head dims and rank are static; batch and lengths may be dynamic.

    * `scale` defaults to `1/sqrt(dn + dr)`.
    * `causal` and `q_offset` (an `index`, default 0) as in
      `mnemo.attention`: query row `i` sits at position `i + q_offset`.
    * `form` chooses the decomposition (`mnemo-decompose-mla`); the result
      is the same up to rounding. `expanded` up-projects keys and values per
      head (prefill); `absorbed` folds `W_UK` into the queries
      (`q_lat = q_nope W_UK[h]`), attends with one shared key/value head over
      `[c_kv, k_pe]` / `c_kv`, and applies `W_UV[h]` to the result (decode).
      Without the attribute, `mnemo-select-mla-form` picks one; the
      reference semantics are those of the expanded form.

    * `indices` (`[B, Sq, K]`, i32 or i64) makes it DeepSeek-V3.2's sparse
      MLA: query row `i` attends only over the tokens `indices[b, i, :]`
      lists (as in `mnemo.sparse_attention`: entries outside `[0, Skv)`
      skipped), the selection taking the place of `causal`, which it
      excludes; both forms decompose into `mnemo.sparse_attention`.

    A row whose keys are all masked yields zeros. Computation is in f32
    whatever the element type.

    ```mlir
    %o = mnemo.mla_attention %q_nope, %q_pe, %c_kv, %k_pe, %w_uk, %w_uv
        causal q_offset(%past) form(absorbed)
        : tensor<1x16x1x128xf32>, tensor<1x16x1x64xf32>,
          tensor<1x?x512xf32>, tensor<1x?x64xf32>,
          tensor<16x128x512xf32>, tensor<16x128x512xf32>
        -> tensor<1x16x1x128xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$q_nope,
    RankedTensorOf<[AnyFloat]>:$q_pe,
    RankedTensorOf<[AnyFloat]>:$c_kv,
    RankedTensorOf<[AnyFloat]>:$k_pe,
    RankedTensorOf<[AnyFloat]>:$w_uk,
    RankedTensorOf<[AnyFloat]>:$w_uv,
    Optional<Index>:$q_offset,
    Optional<RankedTensorOf<[I32, I64]>>:$indices,
    UnitAttr:$causal,
    OptionalAttr<F64Attr>:$scale,
    OptionalAttr<MNEMO_MLAFormAttr>:$form
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $q_nope `,` $q_pe `,` $c_kv `,` $k_pe `,` $w_uk `,` $w_uv
    (`causal` $causal^)?
    (`scale` `(` $scale^ `)`)?
    (`q_offset` `(` $q_offset^ `)`)?
    (`indices` `(` $indices^ `:` type($indices) `)`)?
    (`form` `(` custom<MLAForm>($form)^ `)`)?
    attr-dict `:` type($q_nope) `,` type($q_pe) `,` type($c_kv) `,`
    type($k_pe) `,` type($w_uk) `,` type($w_uv) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute, or 1/sqrt(dn + dr).
    double getEffectiveScale();
    /// The `form` attribute, or `expanded` without one.
    MLAForm getFormOrDefault();
    /// Heads H, nope dim dn, rope dim dr, latent rank r, value dim dv.
    int64_t getNumHeads();
    int64_t getNopeDim();
    int64_t getRopeDim();
    int64_t getLatentRank();
    int64_t getValueDim();
  }];
}

#endif // MNEMO_DIALECT_MLAOPS

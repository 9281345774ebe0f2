//===- LayerOps.td - mnemo dense layer ops -----------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_LAYEROPS
#define MNEMO_DIALECT_LAYEROPS

include "dialects/Mnemo/IR/MnemoBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def MNEMO_RmsNormOp : MNEMO_Op<"rms_norm", [Pure]> {
  let summary = "Root-mean-square normalization over the last dimension";
  let description = [{
    `y = x * rsqrt(mean(x^2, last dim) + eps) * w`, or `* (1 + w)` with
    `unit_offset` (Gemma, Qwen3-Next). `weight` is `[N]` where `N` is the last
    dimension of `input`. Computation is in f32 whatever the element type.

    ```mlir
    %y = mnemo.rms_norm %x, %w eps(1.0e-05)
        : tensor<2x40x128xf32>, tensor<128xf32> -> tensor<2x40x128xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$input,
    RankedTensorOf<[AnyFloat]>:$weight,
    F64Attr:$eps,
    UnitAttr:$unit_offset
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $weight `eps` `(` $eps `)` (`unit_offset` $unit_offset^)?
    attr-dict `:` type($input) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
}

def MNEMO_SwiGluOp : MNEMO_Op<"swiglu", [Pure, SameOperandsAndResultType]> {
  let summary = "SwiGLU gating: silu(gate) * up";
  let description = [{
    Elementwise `gate * sigmoid(gate) * up`, the gated activation of the
    Llama-family MLP between the gate/up projections and the down projection.

    With `limit(L)` (DeepSeek-V4's clamped SwiGLU, `swiglu_limit`), the
    inputs are clamped first: `gate = min(gate, L)`, `up = clamp(up, -L, L)`.

    ```mlir
    %h = mnemo.swiglu %gate, %up : tensor<2x40x344xf32>
    %c = mnemo.swiglu %gate, %up limit(10.0) : tensor<2x40x344xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$gate,
                       RankedTensorOf<[AnyFloat]>:$up,
                       OptionalAttr<F64Attr>:$limit);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $gate `,` $up (`limit` `(` $limit^ `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def MNEMO_LinearOp : MNEMO_Op<"linear", [Pure]> {
  let summary = "Fully connected layer with an explicit weight layout";
  let description = [{
    `y[..., n] = sum_k x[..., k] * W(n, k) + bias[n]`, where `W(n, k)` reads
    `weight[n, k]` for `layout(out_in)` (PyTorch's `[N, K]`) and
    `weight[k, n]` for `layout(in_out)` (`[K, N]`, an ONNX MatMul's operand).
    `input` is `[..., K]` with any number of leading dimensions; `bias`
    (optional) is `[N]`. Accumulation is in f32. The weight may be stored in
    a narrower float type than the input (bf16 weights, f32 activations):
    its elements are widened as they are read.

    ```mlir
    %y = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<344xf32>)
        : tensor<2x40x128xf32>, tensor<344x128xf32> -> tensor<2x40x344xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$input,
    RankedTensorOf<[AnyFloat]>:$weight,
    Optional<RankedTensorOf<[AnyFloat]>>:$bias,
    MNEMO_WeightLayoutAttr:$layout
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $weight `layout` `(` custom<WeightLayout>($layout) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    attr-dict `:` type($input) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Input features K and output features N of the weight.
    int64_t getInFeatures();
    int64_t getOutFeatures();
  }];
}

def MNEMO_GroupedLinearOp : MNEMO_Op<"grouped_linear", [Pure]> {
  let summary = "Linear layer whose blocks of rows each use one group's weight";
  let description = [{
    Rows in blocks of `group_rows`, each block multiplied by the weight of
    the group `groups` names for it (a mixture of experts' rows sorted by
    expert, each expert's rows padded to whole blocks):

    ```
    g = groups[r / group_rows]
    y[r, n] = sum_k x[r, k] * weight[g, n, k]      (0 where g is outside
                                                   [0, E))
    ```

    Shapes: `input` `[R, K]`, `weight` `[E, N, K]` (PyTorch's `[out, in]`
    per group; f32, bf16 or f16, widened as read), `groups` `[G]` (i32 or
    i64) with `G = ceil(R / group_rows)`, result `[R, N]`. The weight's shape
    is static. Accumulation is in f32.

    ```mlir
    %y = mnemo.grouped_linear %x, %w groups(%g) rows(64)
        : tensor<?x128xbf16>, tensor<8x64x128xbf16>, tensor<?xi32>
        -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$input,
    RankedTensorOf<[AnyFloat]>:$weight,
    RankedTensorOf<[I32, I64]>:$groups,
    ConfinedAttr<I64Attr, [IntPositive]>:$group_rows
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $weight `groups` `(` $groups `)` `rows` `(` $group_rows `)`
    attr-dict `:` type($input) `,` type($weight) `,` type($groups) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def MNEMO_EmbeddingOp : MNEMO_Op<"embedding", [Pure]> {
  let summary = "Table lookup: one row of the table per token id";
  let description = [{
    `y[i..., :] = table[ids[i...], :]` for a table `[V, H]` and integer ids of
    any shape; the result has shape `ids.shape + [H]`. Ids outside `[0, V)`
    select a row of zeros (the lookup never reads out of bounds). The rows
    are converted to the result's element type (a bf16 table read into f32
    activations).

    ```mlir
    %h = mnemo.embedding %table[%ids]
        : tensor<256x128xf32>, tensor<2x40xi64> -> tensor<2x40x128xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$table,
                       RankedTensorOf<[AnySignlessInteger]>:$ids);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` type($table) `,` type($ids)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def MNEMO_ExpertsOp : MNEMO_Op<"experts", [Pure]> {
  let summary = "SwiGLU experts applied to the tokens routed to them";
  let description = [{
    The routed experts of a mixture-of-experts layer (DeepSeek-V3): each
    token runs only the `K` experts its router selected,

    ```
    e = indices[b, s, j]
    h = silu(gate[e] x[b, s, :]) * (up[e] x[b, s, :])      (I values)
    out[b, s, :] = sum_j weights[b, s, j] * down[e] h     (entries with e
                                                           outside [0, E)
                                                           skipped)
    ```

    so its cost is `K / E` of running every expert. With `limit(L)` each
    expert's SwiGLU is clamped as `mnemo.swiglu ... limit(L)` says
    (DeepSeek-V4). Shapes: `input`
    `[B, S, H]`, `gate` and `up` `[E, I, H]`, `down` `[E, H, I]` (PyTorch's
    `[out, in]` order per expert; f32, bf16 or f16, widened as read),
    `indices` `[B, S, K]` (i32 or i64), `weights` `[B, S, K]` f32, result
    `[B, S, H]`. Expert count and widths are static. Computation is in
    f32.

    ```mlir
    %y = mnemo.experts %x, %gate, %up, %down, %idx, %w
        : tensor<?x?x128xf32>, tensor<8x64x128xbf16>, tensor<8x64x128xbf16>,
          tensor<8x128x64xbf16>, tensor<?x?x2xi64>, tensor<?x?x2xf32>
        -> tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$input,
    RankedTensorOf<[AnyFloat]>:$gate,
    RankedTensorOf<[AnyFloat]>:$up,
    RankedTensorOf<[AnyFloat]>:$down,
    RankedTensorOf<[I32, I64]>:$indices,
    RankedTensorOf<[F32]>:$weights,
    OptionalAttr<F64Attr>:$limit
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $gate `,` $up `,` $down `,` $indices `,` $weights
    (`limit` `(` $limit^ `)`)? attr-dict
    `:` type($input) `,` type($gate) `,` type($up) `,` type($down) `,`
    type($indices) `,` type($weights) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // MNEMO_DIALECT_LAYEROPS

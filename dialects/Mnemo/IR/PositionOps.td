//===- PositionOps.td - mnemo positional-encoding ops ------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_POSITIONOPS
#define MNEMO_DIALECT_POSITIONOPS

include "dialects/Mnemo/IR/MnemoAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MNEMO_RopeOp : MNEMO_Op<"rope", [Pure]> {
  let summary = "Rotary position embedding at given positions";
  let description = [{
    Rotates pairs of features of `input` (`[B, H, S, D]`) by angles
    `positions[b, s] * inv_freq[k]`, with
    `inv_freq[k] = theta^(-2k/rotary_dim)` for `k < rotary_dim/2`, rescaled
    as `scaling` says (see `#mnemo.rope_scaling`). cos and sin are multiplied
    by the scaling's attention factor (YaRN's mscale, 1 otherwise).

    * Default pairing is rotate-half (Llama/NeoX): feature `k` pairs with
      `k + rotary_dim/2`, `y_k = x_k cos - x_{k+r/2} sin`,
      `y_{k+r/2} = x_{k+r/2} cos + x_k sin`.
    * `interleaved` (GPT-J): feature `2k` pairs with `2k+1`.
    * `rotary_dim(r)`: only the first `r` features rotate (partial rotary,
      default `D`); the others pass through unchanged.

    `positions` is an integer tensor `[B, S]`, `[1, S]` (shared by the batch)
    or `[S]`.

    ```mlir
    %y = mnemo.rope %x, %pos theta(10000.0) rotary_dim(64)
        scaling(<llama3, factor = 8.0, original_max_position = 8192,
                 low_freq_factor = 1.0, high_freq_factor = 4.0>)
        : tensor<1x32x?x128xf32>, tensor<1x?xi64> -> tensor<1x32x?x128xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$input,
    RankedTensorOf<[AnySignlessInteger]>:$positions,
    F64Attr:$theta,
    UnitAttr:$interleaved,
    OptionalAttr<I64Attr>:$rotary_dim,
    OptionalAttr<MNEMO_RopeScalingAttr>:$scaling
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $positions `theta` `(` $theta `)`
    (`interleaved` $interleaved^)?
    (`rotary_dim` `(` $rotary_dim^ `)`)?
    (`scaling` `(` $scaling^ `)`)?
    attr-dict `:` type($input) `,` type($positions) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of rotated features (the `rotary_dim` attribute, or D).
    int64_t getRotaryDimOrDefault();
    /// The scaling attribute, or a `none` scaling when absent.
    RopeScalingAttr getScalingOrDefault();
  }];
}

def MNEMO_RopeTablesOp : MNEMO_Op<"rope_tables",
    [Pure, AllTypesMatch<["cos", "sin"]>]> {
  let summary = "Rotary position embedding with given cos/sin tables";
  let description = [{
    The form of `mnemo.rope` that exported graphs and ONNX's
    `RotaryEmbedding` carry: the angles are already evaluated, as `cos` and
    `sin` tables of the rotary width `r` (the tables' last dimension), one row
    per sequence position. For `d < r`,
    `y[b,h,s,d] = x[b,h,s,d] * cos[b,s,d] + rot(x)[b,h,s,d] * sin[b,s,d]`,
    where `rot` is rotate-half (`rot(x)[d] = -x[d + r/2]` for `d < r/2`,
    `x[d - r/2]` above) or, with `interleaved`, pairwise
    (`rot(x)[2k] = -x[2k+1]`, `rot(x)[2k+1] = x[2k]`). Features `d >= r`
    pass through unchanged (partial rotary).

    The tables are `[B, S, r]`, `[1, S, r]` (shared by the batch) or
    `[S, r]`. Any scaling (linear, NTK, YaRN with its attention factor,
    llama3) is whatever the tables hold, so an import is exact without
    recognizing it.

    ```mlir
    %y = mnemo.rope_tables %x, %cos, %sin
        : tensor<2x4x40x32xf32>, tensor<1x40x32xf32> -> tensor<2x4x40x32xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[AnyFloat]>:$input,
    RankedTensorOf<[AnyFloat]>:$cos,
    RankedTensorOf<[AnyFloat]>:$sin,
    UnitAttr:$interleaved
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin (`interleaved` $interleaved^)?
    attr-dict `:` type($input) `,` type($cos) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of rotated features: the tables' last dimension.
    int64_t getRotaryDim() {
      return getCos().getType().getDimSize(getCos().getType().getRank() - 1);
    }
  }];
}

#endif // MNEMO_DIALECT_POSITIONOPS

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

#endif // MNEMO_DIALECT_POSITIONOPS

//===- QuantOps.td - mnemo weight quantization ops ----------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_QUANTOPS
#define MNEMO_DIALECT_QUANTOPS

include "dialects/Mnemo/IR/MnemoBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MNEMO_QuantFormat : I32EnumAttr<"QuantFormat",
    "how a quantized weight's codes are stored", [
      // One code per byte.
      I32EnumAttrCase<"Int8", 0, "int8">,
      // Two codes per byte, the even column in the low nibble.
      I32EnumAttrCase<"Int4", 1, "int4">,
      // Two 4-bit indices per byte into QLoRA's NormalFloat4 table.
      I32EnumAttrCase<"NF4", 2, "nf4">,
      // One OCP FP8 E4M3 ("FN") value per byte.
      I32EnumAttrCase<"FP8E4M3", 3, "fp8_e4m3">]> {
  let cppNamespace = "::mlir::mnemo";
  let genSpecializedAttr = 0;
}

def MNEMO_QuantFormatAttr : EnumAttr<Mnemo_Dialect, MNEMO_QuantFormat,
                                     "quant_format"> {
  let assemblyFormat = "$value";
}

def MNEMO_DequantizeOp : MNEMO_Op<"dequantize", [Pure]> {
  let summary = "A weight stored as integer codes with per-group scales";
  let description = [{
    `result[..., c] = (q(..., c) - z[..., c / G]) * scales[..., c / G]`
    (`G` = `group_size`; groups run along the last dimension, the last one
    may be partial) where `q` reads `codes` as `format` says:

    * `int8`: one code per byte, signed (-128..127) without `zero_points`,
      unsigned (0..255) with them;
    * `int4`: two codes per byte, column `2i` in the low nibble and `2i+1`
      in the high one; signed (-8..7) without `zero_points`, unsigned
      (0..15) with them;
    * `nf4`: two 4-bit indices per byte, packed as `int4`, into QLoRA's
      NormalFloat4 table (`scales` is each group's absolute maximum); no
      zero points;
    * `fp8_e4m3`: one OCP E4M3 value per byte (bias 7, no infinities,
      largest 448; the NaN codes 0x7f and 0xff are never written and read
      as 480), times the group's scale; no zero points. DeepSeek-V3's
      128 x 128 blocks are groups of 128 whose scale repeats on each of the
      block's rows.

    `z` is `zero_points` read as unsigned bytes, or 0. The product is
    computed in f32 and rounded once to the result type. Shapes: `codes`
    `[..., C]` (int8, fp8_e4m3) or `[..., ceil(C / 2)]` (4-bit), `scales` and
    `zero_points` `[..., ceil(C / G)]`, result `[..., C]`.

    Kernels that read a weight (the CPU GEMM of `mnemo.linear`, the
    embedding lookup) take the codes and scales directly and decode them
    where they load a weight; the op's own lowering decodes the whole
    tensor.

    ```mlir
    %w = mnemo.dequantize %codes, %scales format(int4) group(32)
        : tensor<344x64xi8>, tensor<344x4xf16> -> tensor<344x128xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[I8]>:$codes,
    RankedTensorOf<[AnyFloat]>:$scales,
    Optional<RankedTensorOf<[I8]>>:$zero_points,
    MNEMO_QuantFormatAttr:$format,
    I64Attr:$group_size
  );
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $codes `,` $scales
    (`zero_points` `(` $zero_points^ `:` type($zero_points) `)`)?
    `format` `(` custom<QuantFormat>($format) `)` `group` `(` $group_size `)`
    attr-dict `:` type($codes) `,` type($scales) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Codes packed two per byte (int4, nf4).
    bool isPacked() {
      return getFormat() == QuantFormat::Int4 ||
             getFormat() == QuantFormat::NF4;
    }
  }];
}

#endif // MNEMO_DIALECT_QUANTOPS

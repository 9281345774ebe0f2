//===- MnemoAttrs.td - mnemo dialect attributes ------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_MNEMOATTRS
#define MNEMO_DIALECT_MNEMOATTRS

include "dialects/Mnemo/IR/MnemoBase.td"

def MNEMO_RopeScalingAttr : MNEMO_Attr<"RopeScaling", "rope_scaling"> {
  let summary = "Rotary-embedding frequency scaling (linear, NTK, YaRN, llama3)";
  let description = [{
    Describes how the rotary inverse frequencies
    `inv_freq[i] = theta^(-2i/rotary_dim)` are rescaled for contexts longer
    than the model was trained on. The semantics are those of Hugging Face
    transformers' `rope_parameters`:

    | kind      | parameters (defaults)                                           |
    |-----------|-----------------------------------------------------------------|
    | `none`    | –                                                               |
    | `linear`  | `factor`: positions are divided by it                           |
    | `dynamic` | `factor`, `original_max_position`: NTK-aware base, re-derived from the largest position of each row of `[B, S]` positions (of all of them for `[1, S]` or `[S]`): `seq = max(max(pos) + 1, original_max_position)`, `theta' = theta * (factor*seq/original - factor + 1)^(d/(d-2))` |
    | `yarn`    | `factor`, `original_max_position`, `beta_fast` (32), `beta_slow` (1), `attention_factor` (0.1 ln(factor) + 1), `truncate` (true) |
    | `llama3`  | `factor`, `original_max_position`, `low_freq_factor`, `high_freq_factor` |

    Parameters that do not apply to a kind are rejected.

    ```mlir
    #mnemo.rope_scaling<yarn, factor = 4.0, original_max_position = 4096>
    #mnemo.rope_scaling<llama3, factor = 8.0, original_max_position = 8192,
                        low_freq_factor = 1.0, high_freq_factor = 4.0>
    ```
  }];
  let parameters = (ins
    EnumParameter<MNEMO_RopeScalingKind>:$kind,
    APFloatParameter<"stretch of the context">:$factor,
    "int64_t":$originalMaxPosition,
    APFloatParameter<"llama3 low-frequency factor">:$lowFreqFactor,
    APFloatParameter<"llama3 high-frequency factor">:$highFreqFactor,
    APFloatParameter<"YaRN fast-rotation boundary">:$betaFast,
    APFloatParameter<"YaRN slow-rotation boundary">:$betaSlow,
    OptionalParameter<"std::optional<::llvm::APFloat>">:$attentionFactor,
    "bool":$truncate
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "RopeScalingKind":$kind, "double":$factor,
                     "int64_t":$originalMaxPosition,
                     CArg<"double", "1.0">:$lowFreqFactor,
                     CArg<"double", "4.0">:$highFreqFactor,
                     CArg<"double", "32.0">:$betaFast,
                     CArg<"double", "1.0">:$betaSlow,
                     CArg<"std::optional<double>", "std::nullopt">:$attentionFactor,
                     CArg<"bool", "true">:$truncate), [{
      std::optional<::llvm::APFloat> af;
      if (attentionFactor)
        af = ::llvm::APFloat(*attentionFactor);
      return $_get($_ctxt, kind, ::llvm::APFloat(factor), originalMaxPosition,
                   ::llvm::APFloat(lowFreqFactor), ::llvm::APFloat(highFreqFactor),
                   ::llvm::APFloat(betaFast), ::llvm::APFloat(betaSlow), af,
                   truncate);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The factor cos/sin are multiplied with (YaRN's mscale; 1 otherwise).
    double getEffectiveAttentionFactor() const;
    /// Parameters as doubles, for host-side frequency computation.
    double factor() const { return getFactor().convertToDouble(); }
    double lowFreqFactor() const { return getLowFreqFactor().convertToDouble(); }
    double highFreqFactor() const { return getHighFreqFactor().convertToDouble(); }
    double betaFast() const { return getBetaFast().convertToDouble(); }
    double betaSlow() const { return getBetaSlow().convertToDouble(); }
  }];
}

#endif // MNEMO_DIALECT_MNEMOATTRS

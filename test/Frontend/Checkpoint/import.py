# The IR the importer emits: the entry point's signature and names, llama3
# rope scaling from rope_parameters, tied embeddings, bf16 weights widened
# to f32; a Mistral sliding window and Qwen3's per-head q/k norms.
#
# RUN: rm -rf %t && %python %S/Inputs/make_checkpoints.py %t
# RUN: mnemoc %t/tiny --emit=mnemo | FileCheck %s --check-prefix=TINY
# RUN: mnemoc %S/Inputs/refs_public/mistral_swa --emit=mnemo | FileCheck %s --check-prefix=MISTRAL
# RUN: mnemoc %S/Inputs/refs_public/qwen3_qknorm --emit=mnemo | FileCheck %s --check-prefix=QWEN3

# TINY: func.func @forward(%{{.*}}: tensor<?x?xi64> {mnemo.name = "input_ids"}) -> (tensor<?x?x12xf32> {mnemo.name = "logits"})
# TINY: %[[EMBED:.*]] = arith.constant dense<{{.*}}> : tensor<12x8xf32>
# TINY: mnemo.embedding %[[EMBED]]
# TINY: mnemo.rope {{.*}} theta(5.000000e+05) scaling(<llama3, factor = 8.000000e+00, original_max_position = 32, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>) : tensor<?x2x?x4xf32>
# TINY: mnemo.attention {{.*}} causal : tensor<?x2x?x4xf32>, tensor<?x1x?x4xf32>
# TINY: mnemo.linear {{.*}}, %[[EMBED]] layout(out_in) : tensor<?x?x8xf32>, tensor<12x8xf32> -> tensor<?x?x12xf32>
# The prefill's head runs on each prompt's last token only (the generator
# keeps those logits): [B, 1, V].
# TINY-LABEL: func.func @prefill(
# TINY-SAME: -> (tensor<?x1x12xf32> {mnemo.name = "logits"}
# TINY: mnemo.linear {{.*}} : tensor<?x1x8xf32>, tensor<12x8xf32>
# TINY-LABEL: func.func @decode(

# MISTRAL-COUNT-2: mnemo.attention {{.*}} causal window(16) :

# QWEN3: mnemo.rms_norm {{.*}} eps(9.9999999999999995E-7) : tensor<?x?x4x32xf32>, tensor<32xf32>
# QWEN3: mnemo.rms_norm {{.*}} : tensor<?x?x2x32xf32>, tensor<32xf32>
# QWEN3: mnemo.rope {{.*}} theta(1.000000e+06)

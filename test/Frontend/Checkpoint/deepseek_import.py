# The IR the importer emits for DeepseekV3ForCausalLM: one mnemo.mla_attention
# per layer over the split weights (W_UK [H, dn, r], W_UV [H, dv, r]),
# interleaved YaRN ropes on q_pe and the shared k_pe, the softmax scale
# multiplied by mscale(mscale_all_dim)^2, a router whose k selected experts
# (mnemo.top_k over its weights) run in one mnemo.experts beside the shared
# expert's MLP in the MoE layer; the form chosen for prefill at the fused
# stage, and none left after decomposition. The experts in transformers'
# fused layout give the same logits as stored one by one.
#
# RUN: rm -rf %t && %python %S/Inputs/make_deepseek_checkpoints.py %t
# RUN: mnemoc %t/tiny --emit=mnemo | FileCheck %s --check-prefix=MNEMO
# RUN: mnemoc %t/tiny --emit=fused | FileCheck %s --check-prefix=FUSED
# RUN: mnemoc %t/tiny --emit=tiled --mla-form=absorbed | FileCheck %s --check-prefix=TILED
# RUN: mnemoc %t/tiny -o %t/tiny.mnemo
# RUN: %mnemo_run %t/tiny.mnemo --input input_ids=%t/input_ids.npy --output-dir %t/tiny-out
# RUN: mnemoc %t/tiny_fused -o %t/fused.mnemo
# RUN: %mnemo_run %t/fused.mnemo --input input_ids=%t/input_ids.npy --output-dir %t/fused-out
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/fused-out/logits.npy %t/tiny-out/logits.npy | FileCheck %s --check-prefix=SAME

# MNEMO: func.func @forward(%{{.*}}: tensor<?x?xi64> {mnemo.name = "input_ids"}) -> (tensor<?x?x12xf32> {mnemo.name = "logits"})
# MNEMO: mnemo.rms_norm {{.*}} eps(9.9999999999999995E-7) : tensor<?x?x8xf32>, tensor<8xf32>
# MNEMO: %[[QPE:.+]] = mnemo.rope {{.*}} interleaved scaling(<yarn, factor = 4.000000e+00, original_max_position = 64, {{.*}}attention_factor = 1.000000e+00>) : tensor<?x2x?x4xf32>
# MNEMO: %[[KPE:.+]] = mnemo.rope {{.*}} interleaved scaling(<yarn, {{.*}}>) : tensor<?x1x?x4xf32>
# MNEMO: mnemo.mla_attention %{{.+}}, %[[QPE]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} causal scale(0.45837383662379) : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<2x4x8xf32>, tensor<2x6x8xf32> -> tensor<?x2x?x6xf32>
# MNEMO: mnemo.swiglu {{.*}} : tensor<?x?x16xf32>
# MNEMO: mnemo.mla_attention
# MNEMO: mnemo.linear {{.*}} : tensor<?x?x16xf32>, tensor<4x16xf32> -> tensor<?x?x4xf32>
# MNEMO: math.exp
# MNEMO: mnemo.top_k {{.*}} k(2) : tensor<?x?x4xf32> -> tensor<?x?x2xi64>
# MNEMO: mnemo.experts {{.*}} : tensor<?x?x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x16x8xf32>, tensor<?x?x2xi64>, tensor<?x?x2xf32> -> tensor<?x?x16xf32>

# FUSED-COUNT-2: mnemo.mla_attention {{.*}} form(expanded) :

# TILED-NOT: mnemo.mla_attention
# TILED: scf.forall

# SAME: max |diff| {{.*}} ok

# DeepSeek-V3 configs the builder cannot honour and malformed tensors: one
# line `mnemoc: error: FILE: ...` naming the key or tensor at fault and a
# non-zero exit.
#
# RUN: rm -rf %t && %python %S/Inputs/make_deepseek_checkpoints.py %t
# RUN: not mnemoc %t/kv_heads -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=KV-HEADS
# RUN: not mnemoc %t/q_lora_zero -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=Q-LORA
# RUN: not mnemoc %t/rope_odd -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=ROPE-ODD
# RUN: not mnemoc %t/interleave_type -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=INTERLEAVE
# RUN: not mnemoc %t/partial_rotary -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=PARTIAL
# RUN: not mnemoc %t/group_divides -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=GROUP-DIVIDES
# RUN: not mnemoc %t/group_size -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=GROUP-SIZE
# RUN: not mnemoc %t/topk_group -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=TOPK-GROUP
# RUN: not mnemoc %t/experts_per_tok -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=PER-TOKEN
# RUN: not mnemoc %t/scoring -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=SCORING
# RUN: not mnemoc %t/topk_method -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=TOPK-METHOD
# RUN: not mnemoc %t/kv_b_shape -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=KV-B-SHAPE
# RUN: not mnemoc %t/no_bias -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=NO-BIAS
# Found by the checkpoint fuzzer: nothing sized by a config dim before the
# tensors' shapes are checked (the address space is capped at 2 GiB here).
# RUN: not %limit_memory 2097152 mnemoc %t/kv_lora_huge -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=KV-LORA-HUGE

# KV-HEADS: mnemoc: error: {{.*}}kv_heads{{[/\\]}}config.json: key 'num_key_value_heads': must equal num_attention_heads for multi-head latent attention{{$}}
# KV-HEADS-NOT: {{.}}
# Q-LORA: mnemoc: error: {{.*}}q_lora_zero{{[/\\]}}config.json: key 'q_lora_rank': must be at least 1{{$}}
# Q-LORA-NOT: {{.}}
# ROPE-ODD: mnemoc: error: {{.*}}rope_odd{{[/\\]}}config.json: key 'qk_rope_head_dim': must be even{{$}}
# ROPE-ODD-NOT: {{.}}
# INTERLEAVE: mnemoc: error: {{.*}}interleave_type{{[/\\]}}config.json: key 'rope_interleave': expected a boolean{{$}}
# INTERLEAVE-NOT: {{.}}
# PARTIAL: mnemoc: error: {{.*}}partial_rotary{{[/\\]}}config.json: key 'partial_rotary_factor': only 1 is supported{{$}}
# PARTIAL-NOT: {{.}}
# GROUP-DIVIDES: mnemoc: error: {{.*}}group_divides{{[/\\]}}config.json: key 'n_group': must divide n_routed_experts{{$}}
# GROUP-DIVIDES-NOT: {{.}}
# GROUP-SIZE: mnemoc: error: {{.*}}group_size{{[/\\]}}config.json: key 'n_group': needs at least 2 experts per group (the group score sums the top 2){{$}}
# GROUP-SIZE-NOT: {{.}}
# TOPK-GROUP: mnemoc: error: {{.*}}topk_group{{[/\\]}}config.json: key 'topk_group': must not exceed n_group{{$}}
# TOPK-GROUP-NOT: {{.}}
# PER-TOKEN: mnemoc: error: {{.*}}experts_per_tok{{[/\\]}}config.json: key 'num_experts_per_tok': exceeds the experts of the topk_group selected groups{{$}}
# PER-TOKEN-NOT: {{.}}
# SCORING: mnemoc: error: {{.*}}scoring{{[/\\]}}config.json: key 'scoring_func': only sigmoid is supported{{$}}
# SCORING-NOT: {{.}}
# TOPK-METHOD: mnemoc: error: {{.*}}topk_method{{[/\\]}}config.json: key 'topk_method': only noaux_tc is supported{{$}}
# TOPK-METHOD-NOT: {{.}}
# KV-B-SHAPE: mnemoc: error: {{.*}}kv_b_shape{{[/\\]}}model.safetensors: tensor 'model.layers.0.self_attn.kv_b_proj.weight' has shape [8, 8], expected [20, 8]{{$}}
# KV-B-SHAPE-NOT: {{.}}
# NO-BIAS: mnemoc: error: {{.*}}no_bias{{[/\\]}}model.safetensors: missing tensor 'model.layers.1.mlp.gate.e_score_correction_bias'{{$}}
# NO-BIAS-NOT: {{.}}
# KV-LORA-HUGE: mnemoc: error: {{.*}}kv_lora_huge{{[/\\]}}model.safetensors: tensor 'model.layers.0.self_attn.kv_a_proj_with_mqa.weight' has shape [12, 16], expected [2147483651, 16]{{$}}
# KV-LORA-HUGE-NOT: {{.}}

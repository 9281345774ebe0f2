# mnemoc --lora DIR merges a PEFT LoRA adapter into a checkpoint's weights at
# compile time: W + scaling * B A for each adapted module. The adapters in
# Inputs/lora were made by scripts/refgen/lora_adapters.py on llama_gqa (rank
# 8 on q/v with alpha 16; rank 4 on q/k/v/o with rsLoRA scaling), their
# logits by PEFT 0.21's PeftModel (unmerged) on the GPU machine.
# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --lora %S/Inputs/lora/q_v_r8 -o %t/q_v.mnemo
# RUN: %mnemo_run %t/q_v.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/q_v
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/q_v/logits.npy %S/Inputs/lora/q_v_r8/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --lora %S/Inputs/lora/qkvo_r4_rslora -o %t/qkvo.mnemo
# RUN: %mnemo_run %t/qkvo.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/qkvo
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/qkvo/logits.npy %S/Inputs/lora/qkvo_r4_rslora/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --lora %S/Inputs/lora/q_v_r8 --target=aarch64 -o %t/q_v-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/q_v-a64.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/q_v-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/q_v-a64/logits.npy %S/Inputs/lora/q_v_r8/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
#
# The adapter is what changes the logits (the base model's are far from
# PEFT's), and generation over the merged weights is the merged forward.
# RUN: not %python %S/../ONNX/Inputs/compare_logits.py %S/Inputs/refs_public/llama_gqa/logits.npy %S/Inputs/lora/q_v_r8/logits.npy | FileCheck %s --check-prefix=DIFFERENT
# DIFFERENT: FAIL
# RUN: %mnemo_run %t/q_v.mnemo --generate 4 --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/q_v-gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/q_v.mnemo %t/q_v-gen %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE
# RECOMPUTE-COUNT-4: step {{[0-3]}} (length {{[0-9]+}}): max |d| {{.*}}, greedy ok: ok
#
# Adapters a plain merge cannot express, or that do not fit the checkpoint,
# are refused in one line naming the file and the key or tensor.
# RUN: %python %S/Inputs/make_bad_adapters.py %S/Inputs/lora/q_v_r8 %t/bad
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --lora %t/bad/dora -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=DORA
# DORA: error: {{.*}}dora{{/|\\}}adapter_config.json: use_dora: DoRA adapters are not supported
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --lora %t/bad/bias -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=BIAS
# BIAS: error: {{.*}}adapter_config.json: bias 'all': adapters that train biases are not supported
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --lora %t/bad/rank -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=RANK
# RANK: error: {{.*}}adapter_model.safetensors: module 'model.layers.0.self_attn.q_proj': lora_A [8, 128] and lora_B [128, 8] do not fit r = 4 and the weight [128, 128]
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --lora %t/bad/saved -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=SAVED
# SAVED: error: {{.*}}adapter_config.json: 'modules_to_save': adapters that replace whole modules are not supported
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --lora %t/bad/unpaired -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=UNPAIRED
# UNPAIRED: error: {{.*}}adapter_model.safetensors: module 'model.layers.0.self_attn.q_proj' has lora_A but no lora_B
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --lora %t/bad/no_module -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=NOMODULE
# NOMODULE: error: {{.*}}adapter_model.safetensors: module 'model.layers.7.self_attn.q_proj': the checkpoint has no tensor 'model.layers.7.self_attn.q_proj.weight'
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --lora %t/bad/shape -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=SHAPE
# SHAPE: error: {{.*}}: module 'model.layers.0.self_attn.q_proj': lora_A [8, 128] and lora_B [100, 8] do not fit r = 8 and the weight [128, 128]
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --lora %t/bad/stray -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=STRAY
# STRAY: error: {{.*}}: tensor 'lm_head.weight' is not a LoRA factor
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --lora %t/bad/no_config -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=NOCONFIG
# NOCONFIG: error: {{.*}}adapter_config.json: {{[Nn]}}o such file or directory
# RUN: not mnemoc %S/../ONNX/Inputs/refs_public/llama_gqa/model.onnx --lora %S/Inputs/lora/q_v_r8 -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=ONNX
# ONNX: error: --lora applies to checkpoint directories
"""PEFT LoRA adapters merged at compile time (see the RUN lines)."""

# Malformed checkpoints: one line `mnemoc: error: FILE: ...` naming the
# tensor or key at fault and a non-zero exit, never a crash.
#
# RUN: rm -rf %t && %python %S/Inputs/make_checkpoints.py %t
# RUN: not mnemoc %t/truncated -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=TRUNCATED
# RUN: not mnemoc %t/short -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=SHORT
# RUN: not mnemoc %t/header_past_end -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=PAST-END
# RUN: not mnemoc %t/bad_json -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=BAD-JSON
# RUN: not mnemoc %t/overlap -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=OVERLAP
# RUN: not mnemoc %t/dtype_size -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=DTYPE-SIZE
# RUN: not mnemoc %t/missing_tensor -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=MISSING
# RUN: not mnemoc %t/config_arch -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=ARCH
# RUN: not mnemoc %t/config_json -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=CONFIG-JSON
# RUN: not mnemoc %t/config_no_type -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=NO-TYPE
# RUN: not mnemoc %t/config_type -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=TYPE
# RUN: not mnemoc %t/config_type_mismatch -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=TYPE-MISMATCH
# RUN: not mnemoc %t/config_rope -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=ROPE
# RUN: not mnemoc %t/config_act -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=ACT
# RUN: not mnemoc %t/config_layers -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=LAYERS
# RUN: not mnemoc %t/config_huge -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=HUGE
# RUN: not mnemoc %t/config_partial -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=PARTIAL
# RUN: not mnemoc %t/no_config -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=NO-CONFIG

# TRUNCATED: mnemoc: error: {{.*}}truncated{{[/\\]}}model.safetensors: tensor 'model.layers.0.mlp.down_proj.weight' data_offsets [{{[0-9]+}}, {{[0-9]+}}) run past the data region ({{[0-9]+}} bytes){{.*}}
# TRUNCATED-NOT: {{.}}
# SHORT: mnemoc: error: {{.*}}short{{[/\\]}}model.safetensors: file of 3 bytes is too short for the 8-byte header length{{.*}}
# SHORT-NOT: {{.}}
# PAST-END: mnemoc: error: {{.*}}header_past_end{{[/\\]}}model.safetensors: header length 1099511627776 runs past the end of the file (10 bytes){{.*}}
# PAST-END-NOT: {{.}}
# BAD-JSON: mnemoc: error: {{.*}}bad_json{{[/\\]}}model.safetensors: header is not valid JSON: {{.+}}
# BAD-JSON-NOT: {{.}}
# OVERLAP: mnemoc: error: {{.*}}overlap{{[/\\]}}model.safetensors: tensor 'model.layers.0.mlp.up_proj.weight' overlaps tensor 'model.layers.0.mlp.gate_proj.weight'{{.*}}
# OVERLAP-NOT: {{.}}
# DTYPE-SIZE: mnemoc: error: {{.*}}dtype_size{{[/\\]}}model.safetensors: tensor 'model.norm.weight' shape and dtype F32 give 32 bytes but data_offsets span 16{{.*}}
# DTYPE-SIZE-NOT: {{.}}
# MISSING: mnemoc: error: {{.*}}missing_tensor{{[/\\]}}model.safetensors: missing tensor 'model.layers.0.self_attn.o_proj.weight'{{.*}}
# MISSING-NOT: {{.}}
# ARCH: mnemoc: error: {{.*}}config_arch{{[/\\]}}config.json: key 'architectures': unsupported architecture 'GPT2LMHeadModel'{{.*}}
# ARCH-NOT: {{.}}
# CONFIG-JSON: mnemoc: error: {{.*}}config_json{{[/\\]}}config.json: not valid JSON: {{.+}}
# CONFIG-JSON-NOT: {{.}}
# NO-TYPE: mnemoc: error: {{.*}}config_no_type{{[/\\]}}config.json: key 'model_type': missing (expected 'llama' for LlamaForCausalLM){{$}}
# NO-TYPE-NOT: {{.}}
# TYPE: mnemoc: error: {{.*}}config_type{{[/\\]}}config.json: key 'model_type': unsupported model type 'gpt2' (expected 'llama' for LlamaForCausalLM){{$}}
# TYPE-NOT: {{.}}
# TYPE-MISMATCH: mnemoc: error: {{.*}}config_type_mismatch{{[/\\]}}config.json: key 'model_type': 'qwen3' does not match architecture LlamaForCausalLM (expected 'llama'){{$}}
# TYPE-MISMATCH-NOT: {{.}}
# ROPE: mnemoc: error: {{.*}}config_rope{{[/\\]}}config.json: key 'rope_parameters.rope_type': unsupported rope type 'longrope'{{.*}}
# ROPE-NOT: {{.}}
# ACT: mnemoc: error: {{.*}}config_act{{[/\\]}}config.json: key 'hidden_act': unsupported activation 'gelu'{{.*}}
# LAYERS: mnemoc: error: {{.*}}config_layers{{[/\\]}}config.json: key 'num_hidden_layers': must be at most 65536
# HUGE: mnemoc: error: {{.*}}config_huge{{[/\\]}}config.json: key 'hidden_size': must be at most 2147483647
# ACT-NOT: {{.}}
# PARTIAL: mnemoc: error: {{.*}}config_partial{{[/\\]}}config.json: key 'partial_rotary_factor': must be at most 1{{$}}
# PARTIAL-NOT: {{.}}
# NO-CONFIG: mnemoc: error: {{.*}}no_config: directory without a config.json{{.*}}
# NO-CONFIG-NOT: {{.}}

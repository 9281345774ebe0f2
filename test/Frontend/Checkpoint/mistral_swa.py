# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refs_public/mistral_swa --target=host -o %t/model.mnemo
# RUN: %mnemo_run %t/model.mnemo --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --output-dir %t
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/logits.npy %S/Inputs/refs_public/mistral_swa/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_public/mistral_swa --target=aarch64 -o %t/model-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/model-a64.mnemo --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --output-dir %t/a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/a64/logits.npy %S/Inputs/refs_public/mistral_swa/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
# Generation (prefill, then decode over the paged KV cache) against the
# references defined by recomputation: greedy, a ragged batch (row 1 a
# 23-token prompt), teacher-forced; then a bf16 cache of 8-token pages and an
# FP8 one; then AArch64 under qemu.
# RUN: %mnemo_run %t/model.mnemo --generate 24 --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --output-dir %t/gen | FileCheck %s --check-prefix=GEN
# RUN: %python %S/Inputs/generation.py compare %t/gen %S/Inputs/refs_public/mistral_swa | FileCheck %s --check-prefix=MATCH
# RUN: %python %S/Inputs/generation.py ragged %S/Inputs/refs_public/mistral_swa %t/ragged.npy | FileCheck %s --check-prefix=RAGGED
# RUN: %mnemo_run %t/model.mnemo --generate 24 --input input_ids=%t/ragged.npy --prompt-lengths 40,23 --output-dir %t/gen-ragged
# RUN: %python %S/Inputs/generation.py compare %t/gen-ragged %S/Inputs/refs_public/mistral_swa --ragged | FileCheck %s --check-prefix=MATCH
# RUN: %mnemo_run %t/model.mnemo --generate 24 --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --teacher-force %S/Inputs/refs_public/mistral_swa/greedy_tokens.npy --output-dir %t/gen-teacher
# RUN: %python %S/Inputs/generation.py compare %t/gen-teacher %S/Inputs/refs_public/mistral_swa --teacher | FileCheck %s --check-prefix=TEACHER
# RUN: mnemoc %S/Inputs/refs_public/mistral_swa --target=host --kv-dtype=bf16 --kv-page-size=8 -o %t/model-bf16kv.mnemo
# RUN: %mnemo_run %t/model-bf16kv.mnemo --generate 24 --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --teacher-force %S/Inputs/refs_public/mistral_swa/greedy_tokens.npy --output-dir %t/gen-bf16
# RUN: %python %S/Inputs/generation.py compare %t/gen-bf16 %S/Inputs/refs_public/mistral_swa --teacher --rel-l2 1e-2 | FileCheck %s --check-prefix=TEACHER
# RUN: mnemoc %S/Inputs/refs_public/mistral_swa --target=host --kv-dtype=fp8 -o %t/model-fp8kv.mnemo
# RUN: %mnemo_run %t/model-fp8kv.mnemo --generate 24 --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --teacher-force %S/Inputs/refs_public/mistral_swa/greedy_tokens.npy --output-dir %t/gen-fp8
# RUN: %python %S/Inputs/generation.py compare %t/gen-fp8 %S/Inputs/refs_public/mistral_swa --teacher --rel-l2 5e-2 | FileCheck %s --check-prefix=TEACHER
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/model-a64.mnemo --generate 24 --input input_ids=%t/ragged.npy --prompt-lengths 40,23 --output-dir %t/a64-gen
# RUN: %python %S/Inputs/generation.py compare %t/a64-gen %S/Inputs/refs_public/mistral_swa --ragged | FileCheck %s --check-prefix=MATCH
# Every layer has the 16-token window, so the pages behind it return to the
# pool: 6 pages (the two 40-token prompts' 3 each) carry both rows to 63
# tokens, where a full-attention model needs 8.
# RUN: %mnemo_run %t/model.mnemo --generate 24 --kv-pages 6 --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --output-dir %t/gen-6
# RUN: %python %S/Inputs/generation.py compare %t/gen-6 %S/Inputs/refs_public/mistral_swa | FileCheck %s --check-prefix=MATCH
# GEN: tokens: i64 [2, 24]
# GEN: step_logits: f32 [2, 24, 256]
# GEN: time to first token: {{.*}} ms (prefill of 2 prompts)
# GEN: time per output token: {{.*}} ms (median of 23 decode steps)
# MATCH: row 0: tokens {{.*}}: ok
# MATCH: row 1: tokens {{.*}}: ok
# RAGGED: 40,23
# TEACHER: row 0: {{.*}}: ok
# TEACHER: row 1: {{.*}}: ok
"""The mistral_swa reference checkpoint (MistralForCausalLM: a 16-token sliding
window over 40 tokens; config.json + model.safetensors) imported, compiled
for the host and run on a [2, 40] batch; its logits match PyTorch's to 1e-4."""

# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --generation=false --target=host --mla-form=expanded -o %t/expanded.mnemo
# RUN: %mnemo_run %t/expanded.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/expanded
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/expanded/logits.npy %S/Inputs/refs_public/deepseek_mla/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --target=host --mla-form=absorbed -o %t/absorbed.mnemo
# RUN: %mnemo_run %t/absorbed.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/absorbed
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/absorbed/logits.npy %S/Inputs/refs_public/deepseek_mla/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --generation=false --target=aarch64 --mla-form=expanded -o %t/expanded-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/expanded-a64.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/expanded-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/expanded-a64/logits.npy %S/Inputs/refs_public/deepseek_mla/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --target=aarch64 --mla-form=absorbed -o %t/absorbed-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/absorbed-a64.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/absorbed-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/absorbed-a64/logits.npy %S/Inputs/refs_public/deepseek_mla/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
# Generation over the paged cache of latents and rope keys (one row of
# kv_lora + rope dims per token, MQA over the latent): greedy, ragged (row 1
# a 23-token prompt) and teacher-forced against the recomputed references;
# bf16 and FP8 caches teacher-forced; AArch64 under qemu.
# RUN: %mnemo_run %t/absorbed.mnemo --generate 24 --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/gen
# RUN: %python %S/Inputs/generation.py compare %t/gen %S/Inputs/refs_public/deepseek_mla | FileCheck %s --check-prefix=MATCH
# RUN: %python %S/Inputs/generation.py ragged %S/Inputs/refs_public/deepseek_mla %t/ragged.npy | FileCheck %s --check-prefix=RAGGED
# RUN: %mnemo_run %t/absorbed.mnemo --generate 24 --input input_ids=%t/ragged.npy --prompt-lengths 40,23 --output-dir %t/gen-ragged
# RUN: %python %S/Inputs/generation.py compare %t/gen-ragged %S/Inputs/refs_public/deepseek_mla --ragged | FileCheck %s --check-prefix=MATCH
# RUN: %mnemo_run %t/absorbed.mnemo --generate 24 --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --teacher-force %S/Inputs/refs_public/deepseek_mla/greedy_tokens.npy --output-dir %t/gen-teacher
# RUN: %python %S/Inputs/generation.py compare %t/gen-teacher %S/Inputs/refs_public/deepseek_mla --teacher | FileCheck %s --check-prefix=TEACHER
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --target=host --kv-dtype=bf16 --kv-page-size=8 -o %t/bf16kv.mnemo
# RUN: %mnemo_run %t/bf16kv.mnemo --generate 24 --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --teacher-force %S/Inputs/refs_public/deepseek_mla/greedy_tokens.npy --output-dir %t/gen-bf16
# RUN: %python %S/Inputs/generation.py compare %t/gen-bf16 %S/Inputs/refs_public/deepseek_mla --teacher --rel-l2 1e-2 | FileCheck %s --check-prefix=TEACHER
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --target=host --kv-dtype=fp8 -o %t/fp8kv.mnemo
# RUN: %mnemo_run %t/fp8kv.mnemo --generate 24 --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --teacher-force %S/Inputs/refs_public/deepseek_mla/greedy_tokens.npy --output-dir %t/gen-fp8
# RUN: %python %S/Inputs/generation.py compare %t/gen-fp8 %S/Inputs/refs_public/deepseek_mla --teacher --rel-l2 5e-2 | FileCheck %s --check-prefix=TEACHER
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/absorbed-a64.mnemo --generate 24 --input input_ids=%t/ragged.npy --prompt-lengths 40,23 --output-dir %t/a64-gen
# RUN: %python %S/Inputs/generation.py compare %t/a64-gen %S/Inputs/refs_public/deepseek_mla --ragged | FileCheck %s --check-prefix=MATCH
# MATCH: row 0: tokens {{.*}}: ok
# MATCH: row 1: tokens {{.*}}: ok
# RAGGED: 40,23
# TEACHER: row 0: {{.*}}: ok
# TEACHER: row 1: {{.*}}: ok
"""The deepseek_mla reference checkpoint (DeepseekV3ForCausalLM: multi-head
latent attention with q LoRA 64, kv LoRA 32, nope 32 + rope 16 qk dims, v dim
32, interleaved rope; dense MLPs) imported, compiled with the expanded and
with the absorbed MLA form, for the host and for AArch64 (run under qemu), on
a [2, 40] batch; its logits match PyTorch's to 1e-4 in all four."""

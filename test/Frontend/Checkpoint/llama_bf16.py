# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refgen/llama_bf16 --target=host -o %t/model.mnemo
# RUN: %mnemo_run %t/model.mnemo --input input_ids=%S/Inputs/refgen/llama_bf16/input_ids.npy --output-dir %t
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/logits.npy %S/Inputs/refgen/llama_bf16/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refgen/llama_bf16 --generation=false --target=aarch64 -o %t/model-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/model-a64.mnemo --input input_ids=%S/Inputs/refgen/llama_bf16/input_ids.npy --output-dir %t/a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/a64/logits.npy %S/Inputs/refgen/llama_bf16/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
# Generation over the paged KV cache: 8 greedy steps, each step's logits
# those of the artifact's own forward over the prompt and the tokens so far.
# RUN: %mnemo_run %t/model.mnemo --generate 8 --input input_ids=%S/Inputs/refgen/llama_bf16/input_ids.npy --output-dir %t/gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/model.mnemo %t/gen %S/Inputs/refgen/llama_bf16/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE
# RECOMPUTE-COUNT-8: step {{[0-7]}} (length {{[0-9]+}}): max |d| {{.*}}, greedy ok: ok
"""The llama_bf16 reference checkpoint (LlamaForCausalLM, weights stored in
bf16, widened to f32) compiled for the host and for AArch64 (run under
qemu) on a [2, 23] batch; its logits match PyTorch's to 1e-4."""

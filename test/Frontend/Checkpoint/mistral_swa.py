# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refs_public/mistral_swa --target=host -o %t/model.mnemo
# RUN: %mnemo_run %t/model.mnemo --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --output-dir %t
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/logits.npy %S/Inputs/refs_public/mistral_swa/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_public/mistral_swa --target=aarch64 -o %t/model-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/model-a64.mnemo --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --output-dir %t/a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/a64/logits.npy %S/Inputs/refs_public/mistral_swa/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
"""The mistral_swa reference checkpoint (MistralForCausalLM: a 16-token sliding
window over 40 tokens; config.json + model.safetensors) imported, compiled
for the host and run on a [2, 40] batch; its logits match PyTorch's to 1e-4."""

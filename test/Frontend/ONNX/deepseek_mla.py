# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %shared_models/refs_public/deepseek_mla/model.onnx --target=host -o %t/model.mnemo
# RUN: %mnemo_run %t/model.mnemo --input input_ids=%shared_models/refs_public/deepseek_mla/input_ids.npy --output-dir %t
# RUN: %python %S/Inputs/compare_logits.py %t/logits.npy %shared_models/refs_public/deepseek_mla/logits.npy | FileCheck %s
# RUN: mnemoc %shared_models/refs_public/deepseek_mla/model.onnx --target=aarch64 -o %t/model-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/model-a64.mnemo --input input_ids=%shared_models/refs_public/deepseek_mla/input_ids.npy --output-dir %t/a64
# RUN: %python %S/Inputs/compare_logits.py %t/a64/logits.npy %shared_models/refs_public/deepseek_mla/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
"""The deepseek_mla reference export (torch.onnx, opset 23, external data) imported,
compiled for the host and for AArch64 (run under qemu); its logits match
PyTorch's to 1e-4 on both."""

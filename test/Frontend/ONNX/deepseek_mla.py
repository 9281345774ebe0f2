# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %shared_models/refs_public/deepseek_mla/model.onnx --target=host -o %t/model.mnemo
# RUN: %mnemo_run %t/model.mnemo --input input_ids=%shared_models/refs_public/deepseek_mla/input_ids.npy --output-dir %t
# RUN: %python %S/Inputs/compare_logits.py %t/logits.npy %shared_models/refs_public/deepseek_mla/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
"""The deepseek_mla reference export (torch.onnx, opset 23, external data) imported,
compiled for the host and run; its logits match PyTorch's to 1e-4."""

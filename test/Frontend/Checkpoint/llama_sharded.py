# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refgen/llama_sharded --generation=false --target=host -o %t/model.mnemo
# RUN: %mnemo_run %t/model.mnemo --input input_ids=%S/Inputs/refgen/llama_sharded/input_ids.npy --output-dir %t
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/logits.npy %S/Inputs/refgen/llama_sharded/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refgen/llama_sharded --generation=false --target=aarch64 -o %t/model-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/model-a64.mnemo --input input_ids=%S/Inputs/refgen/llama_sharded/input_ids.npy --output-dir %t/a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/a64/logits.npy %S/Inputs/refgen/llama_sharded/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
"""The llama_sharded reference checkpoint (LlamaForCausalLM, weights in three
safetensors shards listed by model.safetensors.index.json) compiled for the
host and for AArch64 (run under qemu) on a [2, 23] batch; its logits match
PyTorch's to 1e-4."""

# --dtype stores a checkpoint's weight matrices (linear layers, embedding
# tables) as bf16 or f16; activations and accumulation stay f32.
#
# A bf16 checkpoint compiled with --dtype=bf16 keeps its weights bit for bit:
# the logits match PyTorch's to the fp32 tolerance, for the host and AArch64.
# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refgen/llama_bf16 --generation=false --dtype=bf16 --emit=mnemo -o - | FileCheck %s --check-prefix=IR
# IR: mnemo.embedding {{.*}} : tensor<256x96xbf16>, tensor<?x?xi64> -> tensor<?x?x96xf32>
# IR: mnemo.linear {{.*}} : tensor<?x?x96xf32>, tensor<{{[0-9]+}}x96xbf16> -> tensor<?x?x{{[0-9]+}}xf32>
# RUN: mnemoc %S/Inputs/refgen/llama_bf16 --generation=false --dtype=bf16 -o %t/bf16.mnemo
# RUN: %mnemo_run %t/bf16.mnemo --input input_ids=%S/Inputs/refgen/llama_bf16/input_ids.npy --output-dir %t/bf16
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/bf16/logits.npy %S/Inputs/refgen/llama_bf16/logits.npy | FileCheck %s --check-prefix=EXACT
# RUN: mnemoc %S/Inputs/refgen/llama_bf16 --generation=false --dtype=bf16 --target=aarch64 -o %t/bf16-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/bf16-a64.mnemo --input input_ids=%S/Inputs/refgen/llama_bf16/input_ids.npy --output-dir %t/bf16-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/bf16-a64/logits.npy %S/Inputs/refgen/llama_bf16/logits.npy | FileCheck %s --check-prefix=EXACT
# EXACT: max |diff| {{.*}} ok
#
# The artifact holds half the weight bytes of the f32 one.
# RUN: mnemoc %S/Inputs/refgen/llama_bf16 --generation=false --external-weights -o %t/f32.mnemo
# RUN: mnemoc %S/Inputs/refgen/llama_bf16 --generation=false --dtype=bf16 --external-weights -o %t/bf16-ext.mnemo
# RUN: %python -c "import os, sys; a, b = (os.path.getsize(p) for p in sys.argv[1:]); print('weight bytes ratio', round(a / b, 3)); assert a < 0.55 * b" %t/bf16-ext.mnemo.weights %t/f32.mnemo.weights
#
# f32 checkpoints rounded to bf16 or f16: relative error of the logits within
# the reduced-precision bound (2e-2), dense and MLA/MoE models.
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=bf16 -o %t/llama-bf16.mnemo
# RUN: %mnemo_run %t/llama-bf16.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/llama-bf16
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/llama-bf16/logits.npy %S/Inputs/refs_public/llama_gqa/logits.npy --rel 2e-2 | FileCheck %s --check-prefix=REL
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=f16 -o %t/llama-f16.mnemo
# RUN: %mnemo_run %t/llama-f16.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/llama-f16
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/llama-f16/logits.npy %S/Inputs/refs_public/llama_gqa/logits.npy --rel 2e-2 | FileCheck %s --check-prefix=REL
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --generation=false --dtype=bf16 -o %t/ds-bf16.mnemo
# RUN: %mnemo_run %t/ds-bf16.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/ds-bf16
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/ds-bf16/logits.npy %S/Inputs/refs_public/deepseek_mla/logits.npy --rel 2e-2 | FileCheck %s --check-prefix=REL
# REL: relative {{.*}} ok
#
# --dtype is refused for inputs that carry their own element types.
# RUN: not mnemoc %S/../ONNX/Inputs/refs_public/llama_gqa/model.onnx --dtype=bf16 -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=ERR
# ERR: error: --dtype applies to checkpoint directories
"""--dtype=bf16|f16 for checkpoints: weight matrices stored narrow, read into
f32 activations (see the RUN lines)."""

# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refgen/llama_rope_dynamic --generation=false --target=host -o %t/model.mnemo
# RUN: %mnemo_run %t/model.mnemo --input input_ids=%S/Inputs/refgen/llama_rope_dynamic/input_ids.npy --output-dir %t
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/logits.npy %S/Inputs/refgen/llama_rope_dynamic/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refgen/llama_rope_dynamic --generation=false --target=aarch64 -o %t/model-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/model-a64.mnemo --input input_ids=%S/Inputs/refgen/llama_rope_dynamic/input_ids.npy --output-dir %t/a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/a64/logits.npy %S/Inputs/refgen/llama_rope_dynamic/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
# Its generation steps compile with a warning: cached keys keep their rotation.
# RUN: mnemoc %S/Inputs/refgen/llama_rope_dynamic --target=host -o %t/gen.mnemo 2>&1 | FileCheck %s --check-prefix=WARN
# WARN: warning: dynamic NTK RoPE: the generation steps' cached keys keep the rotation of the length they were written at, so decoding drifts from a full recomputation once a sequence passes original_max_position_embeddings (16)
# A ragged batch: each prompt's dynamic base is its own (23 and 19 tokens, both
# past the original 16), so the short row's first logits are those of a
# forward over it alone.
# RUN: %mnemo_run %t/gen.mnemo --generate 1 --prompt-lengths 23,19 --input input_ids=%S/Inputs/refgen/llama_rope_dynamic/input_ids.npy --output-dir %t/ragged
# RUN: %python -c "import numpy as np; np.save('%t/row1.npy', np.load('%S/Inputs/refgen/llama_rope_dynamic/input_ids.npy')[1:2, :19])"
# RUN: %mnemo_run %t/gen.mnemo --input input_ids=%t/row1.npy --output-dir %t/row1
# RUN: %python %S/Inputs/same_row.py %t/ragged/step_logits.npy 1 %t/row1/logits.npy | FileCheck %s --check-prefix=RAGGED
# RAGGED: row 1: max |d| {{.*}}: ok
"""The llama_rope_dynamic reference checkpoint (LlamaForCausalLM, dynamic-NTK
rope scaling, factor 2) compiled for the host and for AArch64 (run under
qemu) on a [2, 23] batch; its logits match PyTorch's to 1e-4. Generation
warns that cached keys keep their rotation; a ragged batch's rows keep their
own bases."""

# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %S/Inputs/make_attention.py %t
# RUN: mnemoc %t/gqa_causal_mask.onnx --emit=mnemo | FileCheck %s
# RUN: mnemoc %t/gqa_causal_mask.onnx -o %t/gqa.mnemo
# RUN: %mnemo_run %t/gqa.mnemo --input Q=%t/gqa_Q.npy --input K=%t/gqa_K.npy --input V=%t/gqa_V.npy --input attn_mask=%t/gqa_attn_mask.npy --output-dir %t/gqa
# RUN: %python %S/Inputs/compare_logits.py %t/gqa/Y.npy %t/gqa_expected.npy | FileCheck %s --check-prefix=MATCH
# RUN: mnemoc %t/bool_mask.onnx -o %t/bool.mnemo
# RUN: %mnemo_run %t/bool.mnemo --input Q=%t/bool_Q.npy --input K=%t/bool_K.npy --input V=%t/bool_V.npy --input attn_mask=%t/bool_attn_mask.npy --output-dir %t/bool
# RUN: %python %S/Inputs/compare_logits.py %t/bool/Y.npy %t/bool_expected.npy | FileCheck %s --check-prefix=MATCH
# RUN: not mnemoc %t/bad_mode.onnx -o %t/bad_mode.mnemo 2>&1 | FileCheck %s --check-prefix=MODE
"""ai.onnx Attention-23 with 4-D inputs imported as one mnemo.attention: GQA,
top-left causal mask, explicit scale, float and boolean attn_mask (with a
fully masked row), D != Dv; compiled, run and compared with the numpy model.
A bad attribute value is refused by name. (The rest of Attention-23/24/25
is covered by ONNX's own cases in Conformance/.)"""

# CHECK: mnemo.attention %{{.+}}, %{{.+}}, %{{.+}} causal scale(0.3000000{{[0-9]*}}) mask(%{{.+}} : tensor<5x7xf32>) : tensor<1x4x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x6xf32> -> tensor<1x4x5x6xf32>
# MATCH: max |diff| {{.*}} ok
# MODE: mnemoc: error: {{.*}}bad_mode.onnx: node 'node_attention' (Attention): qk_matmul_output_mode must be 0 to 3, got 7

# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --target=host --mla-form=expanded -o %t/expanded.mnemo
# RUN: %mnemo_run %t/expanded.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/expanded
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/expanded/logits.npy %S/Inputs/refs_public/deepseek_mla/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --target=host --mla-form=absorbed -o %t/absorbed.mnemo
# RUN: %mnemo_run %t/absorbed.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/absorbed
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/absorbed/logits.npy %S/Inputs/refs_public/deepseek_mla/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --target=aarch64 --mla-form=expanded -o %t/expanded-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/expanded-a64.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/expanded-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/expanded-a64/logits.npy %S/Inputs/refs_public/deepseek_mla/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --target=aarch64 --mla-form=absorbed -o %t/absorbed-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/absorbed-a64.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/absorbed-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/absorbed-a64/logits.npy %S/Inputs/refs_public/deepseek_mla/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
"""The deepseek_mla reference checkpoint (DeepseekV3ForCausalLM: multi-head
latent attention with q LoRA 64, kv LoRA 32, nope 32 + rope 16 qk dims, v dim
32, interleaved rope; dense MLPs) imported, compiled with the expanded and
with the absorbed MLA form, for the host and for AArch64 (run under qemu), on
a [2, 40] batch; its logits match PyTorch's to 1e-4 in all four."""

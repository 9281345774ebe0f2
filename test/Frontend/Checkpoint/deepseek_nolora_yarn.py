# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refgen/deepseek_nolora_yarn --generation=false --target=host --mla-form=expanded -o %t/expanded.mnemo
# RUN: %mnemo_run %t/expanded.mnemo --input input_ids=%S/Inputs/refgen/deepseek_nolora_yarn/input_ids.npy --output-dir %t/expanded
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/expanded/logits.npy %S/Inputs/refgen/deepseek_nolora_yarn/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refgen/deepseek_nolora_yarn --target=host --mla-form=absorbed -o %t/absorbed.mnemo
# RUN: %mnemo_run %t/absorbed.mnemo --input input_ids=%S/Inputs/refgen/deepseek_nolora_yarn/input_ids.npy --output-dir %t/absorbed
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/absorbed/logits.npy %S/Inputs/refgen/deepseek_nolora_yarn/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refgen/deepseek_nolora_yarn --generation=false --target=aarch64 --mla-form=expanded -o %t/expanded-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/expanded-a64.mnemo --input input_ids=%S/Inputs/refgen/deepseek_nolora_yarn/input_ids.npy --output-dir %t/expanded-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/expanded-a64/logits.npy %S/Inputs/refgen/deepseek_nolora_yarn/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refgen/deepseek_nolora_yarn --generation=false --target=aarch64 --mla-form=absorbed -o %t/absorbed-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/absorbed-a64.mnemo --input input_ids=%S/Inputs/refgen/deepseek_nolora_yarn/input_ids.npy --output-dir %t/absorbed-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/absorbed-a64/logits.npy %S/Inputs/refgen/deepseek_nolora_yarn/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
# Generation over the latent cache: 8 greedy steps, each step's logits
# those of the artifact's own forward over the prompt and the tokens so far.
# RUN: %mnemo_run %t/absorbed.mnemo --generate 8 --input input_ids=%S/Inputs/refgen/deepseek_nolora_yarn/input_ids.npy --output-dir %t/gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/absorbed.mnemo %t/gen %S/Inputs/refgen/deepseek_nolora_yarn/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE
# RECOMPUTE-COUNT-8: step {{[0-7]}} (length {{[0-9]+}}): max |d| {{.*}}, greedy ok: ok
"""The deepseek_nolora_yarn reference checkpoint (DeepseekV3ForCausalLM without
q LoRA: q_proj; YaRN rope scaling with mscale and mscale_all_dim, so the
rotary factor is their ratio and the softmax scale is multiplied by
mscale(mscale_all_dim)^2) with both MLA forms, host and AArch64, on a
[2, 23] batch; its logits match PyTorch's to 1e-4 in all four."""

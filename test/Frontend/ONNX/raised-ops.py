# RUN: mnemoc %shared_models/refs_public/llama_gqa/model.onnx --emit=mnemo | FileCheck %s --check-prefix=LLAMA
# RUN: mnemoc %shared_models/refs_public/qwen3_qknorm/model.onnx --emit=mnemo | FileCheck %s --check-prefix=QWEN3
# RUN: mnemoc %shared_models/refs_public/mistral_swa/model.onnx --emit=mnemo | FileCheck %s --check-prefix=MISTRAL
# RUN: mnemoc %shared_models/refs_public/deepseek_mla/model.onnx --emit=mnemo | FileCheck %s --check-prefix=DEEPSEEK
"""Every RMSNormalization-23 of the reference exports is imported as
mnemo.rms_norm: 2 per layer plus the final norm, and Qwen3's per-head q/k
norms (2 more per layer); DeepSeek-V3 adds the q_lora and kv_lora norms.
Attention and RoPE subgraphs are not raised yet; they stay generic."""

# LLAMA-COUNT-5: mnemo.rms_norm
# LLAMA-NOT: mnemo.rms_norm
# QWEN3-COUNT-9: mnemo.rms_norm
# QWEN3-NOT: mnemo.rms_norm
# MISTRAL-COUNT-5: mnemo.rms_norm
# MISTRAL-NOT: mnemo.rms_norm
# DEEPSEEK-COUNT-9: mnemo.rms_norm
# DEEPSEEK-NOT: mnemo.rms_norm

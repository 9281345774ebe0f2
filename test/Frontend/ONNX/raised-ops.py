# RUN: mnemoc %shared_models/refs_public/llama_gqa/model.onnx --emit=mnemo --report 2>&1 | FileCheck %s --check-prefixes=LLAMA,ALL
# RUN: mnemoc %shared_models/refs_public/qwen3_qknorm/model.onnx --emit=mnemo --report 2>&1 | FileCheck %s --check-prefixes=QWEN3,ALL
# RUN: mnemoc %shared_models/refs_public/mistral_swa/model.onnx --emit=mnemo --report 2>&1 | FileCheck %s --check-prefixes=MISTRAL,ALL
# RUN: mnemoc %shared_models/refs_public/deepseek_mla/model.onnx --emit=mnemo --report 2>&1 | FileCheck %s --check-prefixes=DEEPSEEK,ALL
"""In the four reference exports (2 layers each) every attention, RoPE,
RMSNorm and SwiGLU is a mnemo op: per layer one attention (causal; Mistral's
16-token sliding window recovered from the constant mask; GQA K/V taken
before repeat_kv, 2 KV heads for 4 query heads), two ropes (Q and K), one
SwiGLU, two RMSNorms plus the final one; Qwen3 adds per-head q/k norms and
DeepSeek-V3 its q_lora and kv_lora norms. Nothing of them is left generic:
no Softmax, Neg, Sigmoid, Pow or Sqrt in the report."""

# LLAMA: raised: attention (MatMul-Softmax-MatMul) 2, rms_norm (RMSNormalization) 5, rope_tables (rotate-half) 4, swiglu (Sigmoid-Mul) 2
# QWEN3: raised: attention (MatMul-Softmax-MatMul) 2, rms_norm (RMSNormalization) 9, rope_tables (rotate-half) 4, swiglu (Sigmoid-Mul) 2
# MISTRAL: raised: attention (MatMul-Softmax-MatMul) 2, rms_norm (RMSNormalization) 5, rope_tables (rotate-half) 4, swiglu (Sigmoid-Mul) 2
# DEEPSEEK: raised: attention (MatMul-Softmax-MatMul) 2, rms_norm (RMSNormalization) 9, rope_tables (split halves) 4, swiglu (Sigmoid-Mul) 2
# ALL: generic:
# ALL-NOT: Softmax
# ALL-NOT: Neg
# ALL-NOT: Sigmoid

# LLAMA-COUNT-2: mnemo.attention {{.*}} causal scale({{.*}}) : tensor<2x4x40x32xf32>, tensor<2x2x40x32xf32>, tensor<2x2x40x32xf32>
# LLAMA-NOT: mnemo.attention
# MISTRAL-COUNT-2: mnemo.attention {{.*}} causal window(16) scale({{.*}}) : tensor<2x4x40x32xf32>, tensor<2x2x40x32xf32>, tensor<2x2x40x32xf32>
# MISTRAL-NOT: mnemo.attention
# QWEN3-COUNT-2: mnemo.attention {{.*}} causal scale({{.*}}) : tensor<2x4x40x32xf32>, tensor<2x2x40x32xf32>
# DEEPSEEK-COUNT-2: mnemo.attention {{.*}} causal scale({{.*}}) : tensor<2x4x40x48xf32>, tensor<2x4x40x48xf32>, tensor<2x4x40x32xf32>

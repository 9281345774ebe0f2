# Checkpoints that hold their linear layers already quantized, as GPTQ
# (AutoGPTQ / GPTQModel; both checkpoint formats, 4 and 8 bits, symmetric
# and asymmetric, one group or many), AWQ (AutoAWQ's GEMM layout) and
# bitsandbytes' NF4 (plain or double-quantized scales) store them:
# mnemo.dequantize takes their codes, scales and zero points as they are. Inputs/make_prequantized.py packs llama_gqa's layers and decodes the
# packed tensors independently, as the reference dequantizers do; the
# artifact must give exactly the logits of that decoded f32 checkpoint.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %S/Inputs/make_prequantized.py %S/Inputs/refs_public/llama_gqa %t/gptq4 gptq 4 32
# RUN: mnemoc %t/gptq4 --generation=false --emit=mnemo -o - | FileCheck %s --check-prefix=IR
# IR: mnemo.dequantize {{.*}} zero_points({{.*}} : tensor<128x4xi8>) format(int4) group(32) : tensor<128x64xi8>, tensor<128x4xf16> -> tensor<128x128xf32>
# IR: mnemo.linear
# IR: mnemo.dequantize {{.*}} zero_points({{.*}} : tensor<128x11xi8>) format(int4) group(32) : tensor<128x172xi8>, tensor<128x11xf16> -> tensor<128x344xf32>
#
# RUN: %python %s check mnemoc %mnemo_run %t/gptq4 %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/Inputs/make_prequantized.py %S/Inputs/refs_public/llama_gqa %t/gptq8 gptq 8 64 v2
# RUN: %python %s check mnemoc %mnemo_run %t/gptq8 %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/Inputs/make_prequantized.py %S/Inputs/refs_public/llama_gqa %t/gptq4sym gptq 4 64 sym
# RUN: %python %s check mnemoc %mnemo_run %t/gptq4sym %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/Inputs/make_prequantized.py %S/Inputs/refs_public/llama_gqa %t/gptq4one gptq 4 -1
# RUN: %python %s check mnemoc %mnemo_run %t/gptq4one %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/Inputs/make_prequantized.py %S/Inputs/refs_public/llama_gqa %t/awq awq 4 32
# RUN: %python %s check mnemoc %mnemo_run %t/awq %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=EXACT
# EXACT: max |diff| 0 ok
#
# bitsandbytes NF4, plain and with double-quantized scales: blocks of the
# flattened weight, so a layer whose rows are not whole blocks (down_proj,
# 344 inputs) decodes [blocks, 64] and is reshaped.
# RUN: %python %S/Inputs/make_prequantized.py %S/Inputs/refs_public/llama_gqa %t/bnb bnb 4 64 double
# RUN: mnemoc %t/bnb --generation=false --emit=mnemo -o - | FileCheck %s --check-prefix=BNBIR
# BNBIR: mnemo.dequantize {{.*}} format(nf4) group(64) : tensor<128x64xi8>, tensor<128x2xf32> -> tensor<128x128xf32>
# BNBIR: mnemo.dequantize {{.*}} format(nf4) group(64) : tensor<688x32xi8>, tensor<688x1xf32> -> tensor<688x64xf32>
# BNBIR-NEXT: tensor.collapse_shape
# BNBIR-NEXT: tensor.expand_shape {{.*}} into tensor<128x344xf32>
# RUN: %python %s check mnemoc %mnemo_run %t/bnb %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/Inputs/make_prequantized.py %S/Inputs/refs_public/llama_gqa %t/bnb32 bnb 4 32
# RUN: %python %s check mnemoc %mnemo_run %t/bnb32 %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=EXACT
#
# The same on AArch64 under qemu, and cached generation against the
# artifact's own forward recomputed at every step.
# RUN: mnemoc %t/awq --generation=false --target=aarch64 -o %t/awq-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/awq-a64.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/awq-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/awq-a64/logits.npy %t/awq.out/logits.npy | FileCheck %s --check-prefix=SAME
# SAME: max |diff| {{.*}} ok
# RUN: mnemoc %t/gptq4 -o %t/gptq4-gen.mnemo
# RUN: %mnemo_run %t/gptq4-gen.mnemo --generate 6 --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/gptq4-gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/gptq4-gen.mnemo %t/gptq4-gen %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE
# RECOMPUTE-COUNT-6: step {{[0-7]}} (length {{[0-9]+}}): max |d| {{.*}}, greedy ok: ok
#
# DeepSeek-V3's FP8 (quant_method fp8): E4M3 weights beside a
# weight_scale_inv per block of weight_block_size [rows, columns].
# Inputs/fp8_checkpoint.py writes llama_gqa's projections so, in blocks of
# 128 x 128 and of 64 x 32 (partial blocks at the 344-wide MLP's edges),
# and the f32 checkpoint of the values they decode to.
# RUN: %python %S/Inputs/fp8_checkpoint.py %S/Inputs/refs_public/llama_gqa %t/fp8 %t/fp8-dequantized 128
# RUN: mnemoc %t/fp8 --generation=false --emit=mnemo -o - | FileCheck %s --check-prefix=FP8IR
# FP8IR: mnemo.dequantize {{.*}} format(fp8_e4m3) group(128) : tensor<128x128xi8>, tensor<128x1xf32> -> tensor<128x128xf32>
# FP8IR: mnemo.dequantize {{.*}} format(fp8_e4m3) group(128) : tensor<128x344xi8>, tensor<128x3xf32> -> tensor<128x344xf32>
# RUN: %python %s check mnemoc %mnemo_run %t/fp8 %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/Inputs/fp8_checkpoint.py %S/Inputs/refs_public/llama_gqa %t/fp8b %t/fp8b-dequantized 64x32
# RUN: %python %s check mnemoc %mnemo_run %t/fp8b %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=EXACT
# RUN: mnemoc %t/fp8b -o %t/fp8b-gen.mnemo
# RUN: %mnemo_run %t/fp8b-gen.mnemo --generate 6 --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/fp8b-gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/fp8b-gen.mnemo %t/fp8b-gen %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE
# A NaN code (the decoding has none), a missing scale and a bad block size
# are refused.
# RUN: %python %S/Inputs/fp8_checkpoint.py %S/Inputs/refs_public/llama_gqa %t/fp8nan %t/fp8nan-dequantized 128 --nan=model.layers.1.self_attn.k_proj.weight
# RUN: not mnemoc %t/fp8nan -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=FP8NAN
# FP8NAN: error: {{.*}}model.safetensors: tensor 'model.layers.1.self_attn.k_proj.weight' holds an FP8 NaN at element 0
# RUN: cp -r %t/fp8 %t/fp8noscale && %python %S/Inputs/make_prequantized.py edit %t/fp8noscale model.layers.0.mlp.up_proj.weight_scale_inv
# RUN: not mnemoc %t/fp8noscale -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=FP8SCALE
# FP8SCALE: error: {{.*}}model.safetensors: tensor 'model.layers.0.mlp.up_proj.weight' has dtype F8_E4M3, expected F32, F16 or BF16
# RUN: cp -r %t/fp8 %t/fp8block && %python %S/Inputs/make_prequantized.py edit %t/fp8block 'weight_block_size=[128]'
# RUN: not mnemoc %t/fp8block -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=FP8BLOCK
# FP8BLOCK: error: {{.*}}config.json: key 'quantization_config.weight_block_size': expected two positive integers [rows, columns]
#
# What mnemo.dequantize cannot hold, and damaged checkpoints, are refused
# in one line naming the file and the key or tensor.
# RUN: %python %S/Inputs/make_prequantized.py %S/Inputs/refs_public/llama_gqa %t/act gptq 4 32 act-order
# RUN: not mnemoc %t/act -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=ACT
# ACT: error: {{.*}}model.safetensors: 'model.layers.{{[0-9]}}.{{.*}}_proj': g_idx[{{[0-9]+}}] is {{[0-9]+}}, not {{[0-9]+}}: act-order (desc_act) groups are not supported
# RUN: cp -r %t/gptq4 %t/hqq && %python %S/Inputs/make_prequantized.py edit %t/hqq 'quant_method="hqq"'
# RUN: not mnemoc %t/hqq -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=HQQ
# HQQ: error: {{.*}}config.json: key 'quantization_config.quant_method': checkpoints quantized with 'hqq' are not supported (expected gptq, awq, bitsandbytes or fp8; or an unquantized checkpoint and mnemoc --dtype)
# RUN: cp -r %t/bnb32 %t/fp4 && %python %S/Inputs/make_prequantized.py edit %t/fp4 'bnb_4bit_quant_type="fp4"'
# RUN: not mnemoc %t/fp4 -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=FP4
# FP4: error: {{.*}}config.json: key 'quantization_config.bnb_4bit_quant_type': 'fp4' is not supported (expected nf4)
# RUN: cp -r %t/bnb32 %t/nomap && %python %S/Inputs/make_prequantized.py edit %t/nomap model.layers.0.self_attn.v_proj.weight.quant_map
# RUN: not mnemoc %t/nomap -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=NOMAP
# NOMAP: error: {{.*}}model.safetensors: missing tensor 'model.layers.0.self_attn.v_proj.weight.quant_map' of a quantized layer
# RUN: cp -r %t/gptq4 %t/bits3 && %python %S/Inputs/make_prequantized.py edit %t/bits3 bits=3
# RUN: not mnemoc %t/bits3 -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=BITS
# BITS: error: {{.*}}config.json: key 'quantization_config.bits': GPTQ with 3 bits is not supported (expected 4 or 8)
# RUN: cp -r %t/awq %t/gemv && %python %S/Inputs/make_prequantized.py edit %t/gemv 'version="gemv"'
# RUN: not mnemoc %t/gemv -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=GEMV
# GEMV: error: {{.*}}config.json: key 'quantization_config.version': AWQ's 'gemv' layout is not supported (expected gemm)
# RUN: cp -r %t/gptq4 %t/group && %python %S/Inputs/make_prequantized.py edit %t/group group_size=64
# RUN: not mnemoc %t/group -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=SHAPE
# SHAPE: error: {{.*}}model.safetensors: tensor 'model.layers.0.mlp.down_proj.qzeros' has shape [11, 16], expected [6, 16]
# RUN: cp -r %t/gptq4 %t/nozeros && %python %S/Inputs/make_prequantized.py edit %t/nozeros model.layers.1.mlp.up_proj.qzeros
# RUN: not mnemoc %t/nozeros -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=MISSING
# MISSING: error: {{.*}}model.safetensors: missing tensor 'model.layers.1.mlp.up_proj.qzeros' of a quantized layer
"""prequantized.py check MNEMOC MNEMO_RUN DIR IDS: compiles DIR and
DIR-dequantized, runs both on IDS (into DIR.out and DIR-dequantized.out)
and compares the logits."""
import os
import subprocess
import sys

if __name__ == "__main__" and sys.argv[1] == "check":
    mnemoc, mnemo_run, directory, ids = sys.argv[2:6]
    here = os.path.dirname(os.path.abspath(__file__))
    outs = []
    for d in (directory, directory + "-dequantized"):
        subprocess.run([mnemoc, d, "--generation=false", "-o", d + ".mnemo"],
                       check=True)
        subprocess.run([mnemo_run, d + ".mnemo", "--input",
                        "input_ids=" + ids, "--output-dir", d + ".out"],
                       check=True, stdout=subprocess.DEVNULL)
        outs.append(os.path.join(d + ".out", "logits.npy"))
    sys.exit(subprocess.run([sys.executable, os.path.join(
        here, "..", "ONNX", "Inputs", "compare_logits.py")] + outs).returncode)

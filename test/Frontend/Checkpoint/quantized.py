# --dtype=int8|int4|nf4 stores a checkpoint's weight matrices (projections,
# embedding, output head; DeepSeek's per-head up-projections) as integer
# codes with a scale per group of input features, decoded where the CPU GEMM
# and the embedding lookup load them.
# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=int4 --emit=mnemo -o - | FileCheck %s --check-prefix=IR
# IR: %[[E:.*]] = mnemo.dequantize {{.*}} format(int4) group(32) : tensor<256x64xi8>, tensor<256x4xf16> -> tensor<256x128xf32>
# IR: mnemo.embedding %[[E]]
# IR: mnemo.dequantize {{.*}} format(int4) group(32) : tensor<128x64xi8>, tensor<128x4xf16> -> tensor<128x128xf32>
# IR: mnemo.linear
#
# Whole models against an f32 checkpoint holding the values the codes decode
# to, quantized independently by Inputs/fake_quantize.py (fp32 tolerance),
# then against the f32 reference logits (the quantization error itself,
# printed; bounded loosely, as a decoding fault gives errors near 1).
# RUN: %python %S/Inputs/fake_quantize.py %S/Inputs/refs_public/llama_gqa %t/fq-llama-int4 int4 32
# RUN: mnemoc %t/fq-llama-int4 --generation=false -o %t/fq-llama-int4.mnemo
# RUN: %mnemo_run %t/fq-llama-int4.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/fq-llama-int4
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --dtype=int4 -o %t/llama-int4.mnemo
# RUN: %mnemo_run %t/llama-int4.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/llama-int4
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/llama-int4/logits.npy %t/fq-llama-int4/logits.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/llama-int4/logits.npy %S/Inputs/refs_public/llama_gqa/logits.npy --rel 0.3 | FileCheck %s --check-prefix=REL
#
# RUN: %python %S/Inputs/fake_quantize.py %S/Inputs/refs_public/qwen3_qknorm %t/fq-qwen-nf4 nf4 64
# RUN: mnemoc %t/fq-qwen-nf4 --generation=false -o %t/fq-qwen-nf4.mnemo
# RUN: %mnemo_run %t/fq-qwen-nf4.mnemo --input input_ids=%S/Inputs/refs_public/qwen3_qknorm/input_ids.npy --output-dir %t/fq-qwen-nf4
# RUN: mnemoc %S/Inputs/refs_public/qwen3_qknorm --generation=false --dtype=nf4 --quant-group=64 -o %t/qwen-nf4.mnemo
# RUN: %mnemo_run %t/qwen-nf4.mnemo --input input_ids=%S/Inputs/refs_public/qwen3_qknorm/input_ids.npy --output-dir %t/qwen-nf4
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/qwen-nf4/logits.npy %t/fq-qwen-nf4/logits.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/qwen-nf4/logits.npy %S/Inputs/refs_public/qwen3_qknorm/logits.npy --rel 0.3 | FileCheck %s --check-prefix=REL
#
# RUN: %python %S/Inputs/fake_quantize.py %S/Inputs/refs_public/mistral_swa %t/fq-mistral-int8 int8 32 asymmetric
# RUN: mnemoc %t/fq-mistral-int8 --generation=false -o %t/fq-mistral-int8.mnemo
# RUN: %mnemo_run %t/fq-mistral-int8.mnemo --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --output-dir %t/fq-mistral-int8
# RUN: mnemoc %S/Inputs/refs_public/mistral_swa --generation=false --dtype=int8 --quant-scheme=asymmetric -o %t/mistral-int8.mnemo
# RUN: %mnemo_run %t/mistral-int8.mnemo --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --output-dir %t/mistral-int8
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/mistral-int8/logits.npy %t/fq-mistral-int8/logits.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/mistral-int8/logits.npy %S/Inputs/refs_public/mistral_swa/logits.npy --rel 2e-2 | FileCheck %s --check-prefix=REL
#
# RUN: %python %S/Inputs/fake_quantize.py %S/Inputs/refs_public/deepseek_mla %t/fq-ds-int4 int4 16 asymmetric
# RUN: mnemoc %t/fq-ds-int4 --generation=false -o %t/fq-ds-int4.mnemo
# RUN: %mnemo_run %t/fq-ds-int4.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/fq-ds-int4
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --dtype=int4 --quant-group=16 --quant-scheme=asymmetric -o %t/ds-int4.mnemo
# RUN: %mnemo_run %t/ds-int4.mnemo --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/ds-int4
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/ds-int4/logits.npy %t/fq-ds-int4/logits.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/ds-int4/logits.npy %S/Inputs/refs_public/deepseek_mla/logits.npy --rel 0.3 | FileCheck %s --check-prefix=REL
# EXACT: max |diff| {{.*}} ok
# REL: relative {{.*}} ok
#
# --quant-skip=embedding,head leaves the two ends in bf16 (GPTQ's and AWQ's
# convention): int8 with asymmetric codes is then within 1e-2 of the f32
# references on the four models (qwen3_qknorm's head is its embedding).
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=int8 --quant-skip=embedding,head --emit=mnemo -o - | FileCheck %s --check-prefix=SKIP
# SKIP: %[[E:.*]] = arith.constant dense<{{.*}}> : tensor<256x128xbf16>
# SKIP: mnemo.embedding %[[E]]
# SKIP: mnemo.dequantize {{.*}} format(int8) group(32)
# RUN: %python %S/Inputs/fake_quantize.py %S/Inputs/refs_public/llama_gqa %t/fq-llama-int8s int8 32 asymmetric --skip=embedding,head
# RUN: mnemoc %t/fq-llama-int8s --generation=false -o %t/fq-llama-int8s.mnemo
# RUN: %mnemo_run %t/fq-llama-int8s.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/fq-llama-int8s
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=int8 --quant-scheme=asymmetric --quant-skip=embedding,head -o %t/llama-int8s.mnemo
# RUN: %mnemo_run %t/llama-int8s.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/llama-int8s
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/llama-int8s/logits.npy %t/fq-llama-int8s/logits.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/llama-int8s/logits.npy %S/Inputs/refs_public/llama_gqa/logits.npy --rel 1e-2 | FileCheck %s --check-prefix=REL
# RUN: for m in qwen3_qknorm mistral_swa deepseek_mla; do mnemoc %S/Inputs/refs_public/$m --generation=false --dtype=int8 --quant-scheme=asymmetric --quant-skip=embedding,head -o %t/$m-int8s.mnemo && %mnemo_run %t/$m-int8s.mnemo --input input_ids=%S/Inputs/refs_public/$m/input_ids.npy --output-dir %t/$m-int8s > /dev/null && %python %S/../ONNX/Inputs/compare_logits.py %t/$m-int8s/logits.npy %S/Inputs/refs_public/$m/logits.npy --rel 1e-2 || exit 1; done | FileCheck %s --check-prefix=REL3
# REL3-COUNT-3: relative {{.*}} ok
# RUN: mnemoc %S/Inputs/refs_public/qwen3_qknorm --generation=false --dtype=int8 --quant-scheme=asymmetric --quant-skip=embedding,head --target=aarch64 -o %t/qwen-int8s-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/qwen-int8s-a64.mnemo --input input_ids=%S/Inputs/refs_public/qwen3_qknorm/input_ids.npy --output-dir %t/qwen-int8s-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/qwen-int8s-a64/logits.npy %S/Inputs/refs_public/qwen3_qknorm/logits.npy --rel 1e-2 | FileCheck %s --check-prefix=REL
#
# AArch64 (NEON micro-tiles of 12 columns: 6 bytes of nibbles per K step),
# under qemu.
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=int4 --target=aarch64 -o %t/llama-int4-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/llama-int4-a64.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/llama-int4-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/llama-int4-a64/logits.npy %t/fq-llama-int4/logits.npy | FileCheck %s --check-prefix=EXACT
# RUN: mnemoc %S/Inputs/refs_public/qwen3_qknorm --generation=false --dtype=nf4 --quant-group=64 --target=aarch64 -o %t/qwen-nf4-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/qwen-nf4-a64.mnemo --input input_ids=%S/Inputs/refs_public/qwen3_qknorm/input_ids.npy --output-dir %t/qwen-nf4-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/qwen-nf4-a64/logits.npy %t/fq-qwen-nf4/logits.npy | FileCheck %s --check-prefix=EXACT
#
# --dtype=fp8: E4M3 values with a scale per 128 x 128 block (DeepSeek-V3's
# format; --quant-group sets the block), decoded where the CPU GEMM and the
# embedding load them: against the fake-quantized f32 checkpoint (f32
# rounding, every matrix in FP8, blocks of 128 and of 32). E4M3's three
# mantissa bits cost these random-weight models 0.057 to 0.065 of their
# logits (relative L2) with every matrix in FP8, within 0.1 here; with the
# embedding and the head in bf16, as DeepSeek-V3's checkpoints keep them,
# 0.042 to 0.049, within 5e-2 on the four models; on AArch64 as on the
# host.
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=fp8 --emit=mnemo -o - | FileCheck %s --check-prefix=FP8IR
# FP8IR: %[[E:.*]] = mnemo.dequantize {{.*}} format(fp8_e4m3) group(128) : tensor<256x128xi8>, tensor<256x1xf32> -> tensor<256x128xf32>
# FP8IR: mnemo.embedding %[[E]]
# RUN: %python %S/Inputs/fake_quantize.py %S/Inputs/refs_public/llama_gqa %t/fq-llama-fp8 fp8 128
# RUN: mnemoc %t/fq-llama-fp8 --generation=false -o %t/fq-llama-fp8.mnemo
# RUN: %mnemo_run %t/fq-llama-fp8.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/fq-llama-fp8
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --dtype=fp8 -o %t/llama-fp8.mnemo
# RUN: %mnemo_run %t/llama-fp8.mnemo --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/llama-fp8
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/llama-fp8/logits.npy %t/fq-llama-fp8/logits.npy | FileCheck %s --check-prefix=EXACT
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/llama-fp8/logits.npy %S/Inputs/refs_public/llama_gqa/logits.npy --rel 0.1 | FileCheck %s --check-prefix=REL
# RUN: %python %S/Inputs/fake_quantize.py %S/Inputs/refs_public/qwen3_qknorm %t/fq-qwen-fp8 fp8 32
# RUN: mnemoc %t/fq-qwen-fp8 --generation=false -o %t/fq-qwen-fp8.mnemo
# RUN: %mnemo_run %t/fq-qwen-fp8.mnemo --input input_ids=%S/Inputs/refs_public/qwen3_qknorm/input_ids.npy --output-dir %t/fq-qwen-fp8
# RUN: mnemoc %S/Inputs/refs_public/qwen3_qknorm --generation=false --dtype=fp8 --quant-group=32 -o %t/qwen-fp8.mnemo
# RUN: %mnemo_run %t/qwen-fp8.mnemo --input input_ids=%S/Inputs/refs_public/qwen3_qknorm/input_ids.npy --output-dir %t/qwen-fp8
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/qwen-fp8/logits.npy %t/fq-qwen-fp8/logits.npy | FileCheck %s --check-prefix=EXACT
# RUN: for m in llama_gqa qwen3_qknorm mistral_swa deepseek_mla; do mnemoc %S/Inputs/refs_public/$m --generation=false --dtype=fp8 --quant-skip=embedding,head -o %t/$m-fp8s.mnemo && %mnemo_run %t/$m-fp8s.mnemo --input input_ids=%S/Inputs/refs_public/$m/input_ids.npy --output-dir %t/$m-fp8s > /dev/null && %python %S/../ONNX/Inputs/compare_logits.py %t/$m-fp8s/logits.npy %S/Inputs/refs_public/$m/logits.npy --rel 5e-2 || exit 1; done | FileCheck %s --check-prefix=FP8REL
# FP8REL-COUNT-4: relative {{.*}} ok
# Greedy generation with FP8 weights and bf16 ends keeps the reference
# tokens up to the first step whose reference margin is below 0.05, its
# logits there within a relative 5e-2.
# RUN: for m in llama_gqa qwen3_qknorm mistral_swa deepseek_mla; do mnemoc %S/Inputs/refs_public/$m --dtype=fp8 --quant-skip=embedding,head -o %t/$m-fp8g.mnemo && %mnemo_run %t/$m-fp8g.mnemo --generate 24 --input input_ids=%S/Inputs/refs_public/$m/input_ids.npy --output-dir %t/$m-fp8g > /dev/null && %python %S/Inputs/generation.py compare %t/$m-fp8g %S/Inputs/refs_public/$m --margin 0.05 --rel-l2 5e-2 || exit 1; done | FileCheck %s --check-prefix=FP8GEN
# FP8GEN-COUNT-8: row {{[01]}}: tokens {{.*}} match{{.*}}: ok
# RUN: mnemoc %S/Inputs/refs_public/mistral_swa --generation=false --dtype=fp8 --quant-skip=embedding,head --target=aarch64 -o %t/mistral-fp8s-a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/mistral-fp8s-a64.mnemo --input input_ids=%S/Inputs/refs_public/mistral_swa/input_ids.npy --output-dir %t/mistral-fp8s-a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/mistral-fp8s-a64/logits.npy %t/mistral_swa-fp8s/logits.npy | FileCheck %s --check-prefix=EXACT
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --dtype=fp8 --quant-scheme=asymmetric -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=FP8ASYM
# FP8ASYM: error: --quant-scheme=asymmetric does not apply to fp8
#
# Generation with quantized weights: each cached decode step gives the
# logits of the artifact's own forward over the prompt and tokens so far.
# RUN: %mnemo_run %t/llama-int4.mnemo --generate 6 --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/llama-int4-gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/llama-int4.mnemo %t/llama-int4-gen %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE
# RUN: %mnemo_run %t/ds-int4.mnemo --generate 6 --input input_ids=%S/Inputs/refs_public/deepseek_mla/input_ids.npy --output-dir %t/ds-int4-gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/ds-int4.mnemo %t/ds-int4-gen %S/Inputs/refs_public/deepseek_mla/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE
# RUN: %mnemo_run %t/llama-fp8.mnemo --generate 6 --input input_ids=%S/Inputs/refs_public/llama_gqa/input_ids.npy --output-dir %t/llama-fp8-gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/llama-fp8.mnemo %t/llama-fp8-gen %S/Inputs/refs_public/llama_gqa/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE
# RECOMPUTE-COUNT-6: step {{[0-7]}} (length {{[0-9]+}}): max |d| {{.*}}, greedy ok: ok
#
# Weight bytes (the artifacts' weight files): int4 and nf4 at group 32 take
# under 0.3 of bf16's (4 bits plus an f16 scale per 32 weights: 0.28).
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=bf16 --external-weights -o %t/w-bf16.mnemo
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=int4 --external-weights -o %t/w-int4.mnemo
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=nf4 --external-weights -o %t/w-nf4.mnemo
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=int8 --external-weights -o %t/w-int8.mnemo
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --generation=false --dtype=bf16 --external-weights -o %t/wd-bf16.mnemo
# RUN: mnemoc %S/Inputs/refs_public/deepseek_mla --generation=false --dtype=int4 --external-weights -o %t/wd-int4.mnemo
# RUN: %python %s %t/w-bf16.mnemo.weights 0.3 %t/w-int4.mnemo.weights %t/w-nf4.mnemo.weights | FileCheck %s --check-prefix=BYTES
# RUN: mnemoc %S/Inputs/refs_public/llama_gqa --generation=false --dtype=fp8 --external-weights -o %t/w-fp8.mnemo
# RUN: %python %s %t/w-bf16.mnemo.weights 0.55 %t/w-int8.mnemo.weights %t/w-fp8.mnemo.weights | FileCheck %s --check-prefix=BYTES
# RUN: %python %s %t/wd-bf16.mnemo.weights 0.3 %t/wd-int4.mnemo.weights | FileCheck %s --check-prefix=BYTES
# BYTES-NOT: FAIL
# BYTES: of bf16 ok
#
# Flags that do not fit are refused in one line.
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --quant-group=64 -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=ERR1
# ERR1: error: --quant-group, --quant-scheme and --quant-skip apply to --dtype=int8, int4, nf4 or fp8
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --dtype=int4 --quant-group=0 -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=ERR2
# ERR2: error: --quant-group=0: expected 1 to 65536 input features
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --dtype=nf4 --quant-scheme=asymmetric -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=ERR3
# ERR3: error: --quant-scheme=asymmetric does not apply to nf4
# RUN: not mnemoc %S/Inputs/refs_public/llama_gqa --dtype=int8 --quant-skip=norm -o %t/x.mnemo 2>&1 | FileCheck %s --check-prefix=ERR4
# ERR4: error: --quant-skip=norm: expected embedding or head
"""Weight bytes of quantized artifacts against a bf16 one:
quantized.py BF16 LIMIT FILE...: prints each FILE's share of BF16's bytes,
`ok` when it is at most LIMIT."""
import os
import sys

if __name__ == "__main__":
    base = os.path.getsize(sys.argv[1])
    limit = float(sys.argv[2])
    for path in sys.argv[3:]:
        share = os.path.getsize(path) / base
        print(f"{os.path.basename(path)}: {share:.3f} of bf16 "
              f"{'ok' if share <= limit else 'FAIL'}")

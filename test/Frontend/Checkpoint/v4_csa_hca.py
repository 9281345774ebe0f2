# RUN: rm -rf %t && mkdir -p %t
# RUN: mnemoc %S/Inputs/refs_sparse_public/v4_csa_hca --target=host -o %t/host.mnemo
# RUN: %mnemo_run %t/host.mnemo --input input_ids=%S/Inputs/refs_sparse_public/v4_csa_hca/input_ids.npy --output-dir %t/host
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/host/logits.npy %S/Inputs/refs_sparse_public/v4_csa_hca/logits.npy | FileCheck %s
# RUN: mnemoc %S/Inputs/refs_sparse_public/v4_csa_hca --target=aarch64 --generation=false -o %t/a64.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/a64.mnemo --input input_ids=%S/Inputs/refs_sparse_public/v4_csa_hca/input_ids.npy --output-dir %t/a64
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/a64/logits.npy %S/Inputs/refs_sparse_public/v4_csa_hca/logits.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
#
# DeepseekV4ForCausalLM (transformers 5.17, docs/DeepSeekV4.md): layers
# HCA, CSA, HCA over two hyper-connection streams, 300 tokens (HCA entries
# close at 128 and 256).
#
# Generation over the V4 caches (K = V rows, compressor rows, entries at
# their slots, the indexer's): greedy, teacher-forced and ragged (a
# 61-token prompt beside the 300-token one) against the recomputed
# references. The tokens match in every step; the logits to 3e-6 until a
# CSA entry closes at length 304, then within 3.1e-3: the recomputation's
# top-k rows get one entry wider there, and PyTorch's CPU tie order, which
# depends on the row's width, re-selects four earlier rows (193, 226, 249,
# 271), whose hidden states no cache can revisit (docs/DeepSeekV4.md).
# RUN: %mnemo_run %t/host.mnemo --generate 16 --input input_ids=%S/Inputs/refs_sparse_public/v4_csa_hca/input_ids.npy --output-dir %t/gen
# RUN: %python %S/Inputs/generation.py compare %t/gen %S/Inputs/refs_sparse_public/v4_csa_hca --max-abs 5e-3 | FileCheck %s --check-prefix=MATCH
# RUN: %mnemo_run %t/host.mnemo --generate 16 --input input_ids=%S/Inputs/refs_sparse_public/v4_csa_hca/input_ids.npy --teacher-force %S/Inputs/refs_sparse_public/v4_csa_hca/greedy_tokens.npy --output-dir %t/teacher
# RUN: %python %S/Inputs/generation.py compare %t/teacher %S/Inputs/refs_sparse_public/v4_csa_hca --teacher --max-abs 5e-3 | FileCheck %s --check-prefix=TEACHER
# RUN: %python %S/Inputs/generation.py ragged %S/Inputs/refs_sparse_public/v4_csa_hca %t/ragged.npy
# RUN: %mnemo_run %t/host.mnemo --generate 16 --input input_ids=%t/ragged.npy --prompt-lengths 300,61 --output-dir %t/gen-ragged
# RUN: %python %S/Inputs/generation.py compare %t/gen-ragged %S/Inputs/refs_sparse_public/v4_csa_hca --ragged --max-abs 5e-3 | FileCheck %s --check-prefixes=MATCH,MATCH1
# The ragged pair prefilled 50 tokens at a time (--append-step): chunks
# that end inside CSA and HCA blocks and list the entries they close.
# RUN: mnemoc %S/Inputs/refs_sparse_public/v4_csa_hca --append-step -o %t/append.mnemo
# RUN: %mnemo_run %t/append.mnemo --generate 16 --input input_ids=%t/ragged.npy --prompt-lengths 300,61 --prompt-chunk 50 --output-dir %t/gen-append
# RUN: %python %S/Inputs/generation.py compare %t/gen-append %S/Inputs/refs_sparse_public/v4_csa_hca --ragged --max-abs 5e-3 | FileCheck %s --check-prefixes=MATCH,MATCH1
# MATCH: row 0: tokens 16/16 match{{.*}}: ok
# MATCH1: row 1: tokens 16/16 match{{.*}}: ok
# TEACHER: row 0: {{.*}}: ok
#
# transformers' own cached decode (hf_cached_logits.npy, teacher-forced on
# the same tokens; scripts/refgen/v4_prompts.py) gives the same logits as
# this cache at every step: its drift from the recomputation is the same
# re-selection.
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/teacher/step_logits.npy %S/Inputs/refs_sparse_public/v4_csa_hca/hf_cached_logits.npy | FileCheck %s
#
# Prompts of 130 tokens (2 into a CSA block and into the second HCA window)
# and 250 (decoding across the HCA boundary at 256), references made with
# transformers (prompts/): 130 within 1e-4 of the recomputation; 250 with
# the tie re-selection above, and within 1e-4 of transformers' cache.
# RUN: %mnemo_run %t/host.mnemo --generate 16 --input input_ids=%S/Inputs/refs_sparse_public/v4_csa_hca/prompts/L130/input_ids.npy --output-dir %t/L130
# RUN: %python %S/Inputs/generation.py compare %t/L130 %S/Inputs/refs_sparse_public/v4_csa_hca/prompts/L130 | FileCheck %s --check-prefix=MATCH
# RUN: %mnemo_run %t/host.mnemo --generate 16 --input input_ids=%S/Inputs/refs_sparse_public/v4_csa_hca/prompts/L250/input_ids.npy --teacher-force %S/Inputs/refs_sparse_public/v4_csa_hca/prompts/L250/greedy_tokens.npy --output-dir %t/L250
# RUN: %python %S/Inputs/generation.py compare %t/L250 %S/Inputs/refs_sparse_public/v4_csa_hca/prompts/L250 --teacher --max-abs 5e-3 | FileCheck %s --check-prefix=TEACHER
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/L250/step_logits.npy %S/Inputs/refs_sparse_public/v4_csa_hca/prompts/L250/hf_cached_logits.npy | FileCheck %s
#
# With an order that does not depend on the row's width (lowest index
# first), the cached decode equals the artifact's own forward recomputed
# at every step (checked against PyTorch above), within 1e-4.
# RUN: mnemoc %S/Inputs/refs_sparse_public/v4_csa_hca --topk-ties=lowest-index -o %t/lowest.mnemo
# RUN: %mnemo_run %t/lowest.mnemo --generate 16 --input input_ids=%S/Inputs/refs_sparse_public/v4_csa_hca/input_ids.npy --output-dir %t/gen-lowest
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/lowest.mnemo %t/gen-lowest %S/Inputs/refs_sparse_public/v4_csa_hca/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE
# RECOMPUTE-COUNT-16: greedy ok: ok
#
# A bf16 cache, teacher-forced: relative L2 within 1e-2; an FP8 one (the
# K = V rows in E4M3 with a scale per token, the compressor rows and
# entries in bf16) within 5e-2. AArch64 under qemu: the ragged batch.
# RUN: mnemoc %S/Inputs/refs_sparse_public/v4_csa_hca --kv-dtype=bf16 --kv-page-size=8 -o %t/bf16.mnemo
# RUN: %mnemo_run %t/bf16.mnemo --generate 16 --input input_ids=%S/Inputs/refs_sparse_public/v4_csa_hca/input_ids.npy --teacher-force %S/Inputs/refs_sparse_public/v4_csa_hca/greedy_tokens.npy --output-dir %t/gen-bf16
# RUN: %python %S/Inputs/generation.py compare %t/gen-bf16 %S/Inputs/refs_sparse_public/v4_csa_hca --teacher --rel-l2 1e-2 | FileCheck %s --check-prefix=TEACHER
# RUN: mnemoc %S/Inputs/refs_sparse_public/v4_csa_hca --target=aarch64 -o %t/a64-gen.mnemo
# RUN: %aarch64_run %aarch64_bin/mnemo-run %t/a64-gen.mnemo --generate 16 --input input_ids=%t/ragged.npy --prompt-lengths 300,61 --output-dir %t/a64-gen
# RUN: %python %S/Inputs/generation.py compare %t/a64-gen %S/Inputs/refs_sparse_public/v4_csa_hca --ragged --max-abs 5e-3 | FileCheck %s --check-prefixes=MATCH,MATCH1
# RUN: mnemoc %S/Inputs/refs_sparse_public/v4_csa_hca --kv-dtype=fp8 -o %t/fp8.mnemo
# RUN: %mnemo_run %t/fp8.mnemo --generate 16 --input input_ids=%S/Inputs/refs_sparse_public/v4_csa_hca/input_ids.npy --teacher-force %S/Inputs/refs_sparse_public/v4_csa_hca/greedy_tokens.npy --output-dir %t/gen-fp8
# RUN: %python %S/Inputs/generation.py compare %t/gen-fp8 %S/Inputs/refs_sparse_public/v4_csa_hca --teacher --rel-l2 5e-2 | FileCheck %s --check-prefix=TEACHER
#
# A decode step reads the pages of its window only: the raw keys from the
# page of the first one a query sees (raw_start), the compressor rows from
# the window the first closing entry pools.
# RUN: mnemoc %S/Inputs/refs_sparse_public/v4_csa_hca --emit=mnemo -o %t/steps.mlir
# RUN: FileCheck %s --check-prefix=STEP < %t/steps.mlir
# The gathered pages are counted from the step's shapes (the new tokens,
# the window, the rate), so a GPU launch plan holds the steps.
# RUN: mnemoc %S/Inputs/refs_sparse_public/v4_csa_hca --target=sm_90a --kv-dtype=fp8 -o %t/gpu.mnemo
# RUN: %mnemo_run %t/gpu.mnemo --dump-plan | FileCheck %s --check-prefix=PLAN
# PLAN: {"name": "prefill",
# PLAN: {"name": "decode",
# STEP-LABEL: func.func @decode
# STEP: mnemo.gated_pool
# STEP: mnemo.compressed_attention {{.*}} raw_start({{.*}}) sink({{.*}}) window(32) rate(128)
#
# RUN: mnemoc %S/Inputs/refs_sparse_public/v4_csa_hca --generation=false --emit=mnemo -o %t/v4.mlir
# RUN: FileCheck %s --check-prefix=IR < %t/v4.mlir
# Layer 0 (HCA): the compressor's pool (mnemo.gated_pool); the rope on the
# leading 16 of 64 channels once the importer has moved the trailing rope
# channels in front; the attention over the raw keys and the entries with
# the sink; hash-routed experts with the clamped SwiGLU. Layer 1 (CSA) adds the indexer and its top-k in
# PyTorch's CPU order, whose indices the attention takes.
# IR: mnemo.gated_pool {{.*}} rate(128) :
# IR: mnemo.rope {{.*}} theta(1.600000e+05) interleaved rotary_dim(16)
# IR: mnemo.compressed_attention {{.*}} positions({{.*}}) sink({{.*}} : tensor<4xf32>) window(32) rate(128)
# IR: mnemo.experts {{.*}} limit(1.000000e+01)
# IR: mnemo.gated_pool {{.*}} rate(4) overlapping
# IR: mnemo.lightning_indexer {{.*}} causal
# IR: %[[IDX:.+]] = mnemo.top_k {{.*}} k(8) ties(introselect)
# IR: mnemo.compressed_attention {{.*}} indices(%[[IDX]] : tensor<?x?x8xi64>) sink({{.*}}) window(32) rate(4)
#
# Models not seen by the references: other compression rates, window and
# top-k, prompts that end inside a CSA and an HCA block; a sliding-only
# layer, half the head rotated, other thetas, one head per output group,
# three streams, clamps that bite, a batch of two. Their logits come from
# the independent numpy model (Numerics/deepseek_v4_model.py).
# RUN: %python %S/Inputs/make_v4_variants.py %S/Inputs/refs_sparse_public/v4_csa_hca %t/v
# RUN: mnemoc %t/v/good/rates --generation=false -o %t/rates.mnemo
# RUN: %mnemo_run %t/rates.mnemo --input input_ids=%t/v/good/rates/input_ids.npy --output-dir %t/rates
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/rates/logits.npy %t/v/good/rates/logits.npy | FileCheck %s
# RUN: mnemoc %t/v/good/mixed --generation=false -o %t/mixed.mnemo
# RUN: %mnemo_run %t/mixed.mnemo --input input_ids=%t/v/good/mixed/input_ids.npy --output-dir %t/mixed
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/mixed/logits.npy %t/v/good/mixed/logits.npy | FileCheck %s
# Their generation (12 steps across CSA and HCA boundaries, lowest-index
# ties) equals their forward recomputed at every step.
# RUN: mnemoc %t/v/good/rates --topk-ties=lowest-index -o %t/rates-gen.mnemo
# RUN: %mnemo_run %t/rates-gen.mnemo --generate 12 --input input_ids=%t/v/good/rates/input_ids.npy --output-dir %t/rates-gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/rates-gen.mnemo %t/rates-gen %t/v/good/rates/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE12
# RUN: mnemoc %t/v/good/mixed --topk-ties=lowest-index -o %t/mixed-gen.mnemo
# RUN: %mnemo_run %t/mixed-gen.mnemo --generate 12 --input input_ids=%t/v/good/mixed/input_ids.npy --output-dir %t/mixed-gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/mixed-gen.mnemo %t/mixed-gen %t/v/good/mixed/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE12
# 16 query heads on the K = V head: the host's forward against the numpy
# model, its generation against its forward recomputed; the GPU form of its
# attention (a group of 16: mnemo.sparse_attention with the sink, over each
# query's window and entries) in every layer of every function.
# RUN: mnemoc %t/v/good/heads --topk-ties=lowest-index -o %t/heads.mnemo
# RUN: %mnemo_run %t/heads.mnemo --input input_ids=%t/v/good/heads/input_ids.npy --output-dir %t/heads
# RUN: %python %S/../ONNX/Inputs/compare_logits.py %t/heads/logits.npy %t/v/good/heads/logits.npy | FileCheck %s
# RUN: %mnemo_run %t/heads.mnemo --generate 12 --input input_ids=%t/v/good/heads/input_ids.npy --output-dir %t/heads-gen
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/heads.mnemo %t/heads-gen %t/v/good/heads/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE12
# RUN: mnemoc %t/v/good/heads --emit=mnemo -o %t/heads.mlir
# RUN: mnemo-opt %t/heads.mlir --mnemo-decompose-compressed-attention=selected-group=16 | FileCheck %s --check-prefix=SELECTED
# SELECTED-COUNT-9: mnemo.sparse_attention {{.*}} sink({{.*}} : tensor<16xf32>)
# SELECTED-NOT: mnemo.compressed_attention
# Pages of 5 tokens, which neither rate (2, 16) divides: the steps gather
# their windows from multiples of lcm(5, rate) tokens.
# RUN: mnemoc %t/v/good/rates --topk-ties=lowest-index --kv-page-size=5 -o %t/rates-p5.mnemo
# RUN: %mnemo_run %t/rates-p5.mnemo --generate 12 --input input_ids=%t/v/good/rates/input_ids.npy --output-dir %t/rates-p5
# RUN: %python %S/Inputs/generation.py recompute %mnemo_run %t/rates-p5.mnemo %t/rates-p5 %t/v/good/rates/input_ids.npy | FileCheck %s --check-prefix=RECOMPUTE12
# RECOMPUTE12-COUNT-12: greedy ok: ok
#
# Keys and tensors the builder cannot honour: one line naming file and key.
# RUN: not mnemoc %t/v/bad/kv_heads -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=KV
# KV: kv_heads/config.json: key 'num_key_value_heads': must be 1
# RUN: not mnemoc %t/v/bad/o_groups -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=GROUPS
# GROUPS: o_groups/config.json: key 'o_groups': must divide num_attention_heads
# RUN: not mnemoc %t/v/bad/scoring -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=SCORING
# SCORING: scoring/config.json: key 'scoring_func': only sqrtsoftplus is supported
# RUN: not mnemoc %t/v/bad/layer_type -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=LAYER
# LAYER: layer_type/config.json: key 'layer_types': unsupported layer type 'full_attention'
# RUN: not mnemoc %t/v/bad/rope_odd -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=ROPE
# ROPE: rope_odd/config.json: key 'partial_rotary_factor': gives an unsupported rotary dimension
# RUN: not mnemoc %t/v/bad/rope_dim -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=ROPEDIM
# ROPEDIM: rope_dim/config.json: key 'qk_rope_head_dim': must equal partial_rotary_factor * head_dim (16)
# RUN: not mnemoc %t/v/bad/tid2eid -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=TABLE
# TABLE: tid2eid/model.safetensors: tensor 'model.layers.0.ffn.gate.tid2eid' element 11 is 4, outside [0, 4)

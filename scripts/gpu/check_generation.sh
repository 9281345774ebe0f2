#!/usr/bin/env bash
# Generation on a CUDA device against the recomputed greedy references.
#
#   scripts/gpu/check_generation.sh DIR [REFS]
#
# DIR/bin/mnemo-run and DIR/gen/MODEL[.SOURCE].KV.mnemo (a checkpoint of REFS, by
# default test/Frontend/Checkpoint/Inputs/refs_public, compiled for a GPU
# target with --kv-dtype=KV) are made beforehand, on a machine with mnemoc:
#
#   for m in llama_gqa qwen3_qknorm mistral_swa deepseek_mla; do
#     for kv in f32 bf16 fp8; do
#       mnemoc REFS/$m --target=sm_90a --kv-dtype=$kv -o DIR/gen/$m.$kv.mnemo
#     done
#   done
#
# (SOURCE names another source of the same model, such as its ONNX export
# with past key/values: test/Frontend/ONNX/Inputs/with_past/dynamo23/MODEL/
# model.onnx compiled to DIR/gen/MODEL.onnx.KV.mnemo; or `wbf16`, the
# checkpoint compiled with --dtype=bf16, whose linear layers run on the
# tensor cores: MODEL.wbf16.bf16.mnemo, teacher-forced within 1e-2.)
#
# REFS may also be test/Frontend/Checkpoint/Inputs/refs_sparse_public (the
# DeepSeek-V3.2 model v32_dsa, 16 reference steps). The number of steps is
# the references'. For a model with a top-k indexer (index_topk in its
# config.json), the lossy caches' bound holds per step except where the
# rounding moves a near-tie of the indexer's selection: two steps for bf16
# and FP8 (generation.py --flips, which lists them; on the host bf16 moves
# one, but the GPU's attention over the selected rows rounds its f32 query
# to bf16 for the tensor cores, as every paged attention over 16-bit pages
# there does, and v32_dsa then moves FP8's two: steps 3 and 12).
#
# For an f32 cache: greedy decoding of input_ids.npy (tokens up to the first
# step whose reference margin is below 1e-3, logits within 1e-4), the ragged
# batch (row 1 cut to its ragged/ prompt, decoded beside row 0) and the
# teacher-forced logits within 1e-4 (with an `append` step, mnemoc
# --append-step: greedy and ragged again with the prompts fed in chunks,
# mnemo-run --prompt-chunk); bf16 and FP8 caches: teacher-forced
# logits within a relative L2 of 1e-2 and 5e-2. The comparisons are
# test/Frontend/Checkpoint/Inputs/generation.py's. Prints each check with
# its timings and comparison lines, and a summary; exits 1 when a check
# fails.
set -u
DIR=$1
REFS=${2:-test/Frontend/Checkpoint/Inputs/refs_public}
RUN=$DIR/bin/mnemo-run
CHECK=test/Frontend/Checkpoint/Inputs/generation.py
PY=${PYTHON:-python3}
pass=0
fail=0

report() { # name, command...
  local name=$1
  shift
  local log
  if log=$("$@" 2>&1); then
    pass=$((pass + 1))
    echo "ok   $name"
    echo "$log" | sed 's/^/     /'
  else
    fail=$((fail + 1))
    echo "FAIL $name"
    echo "$log" | tail -n 8 | sed 's/^/     /'
  fi
}

generate() { # artifact, out dir, extra flags...
  local art=$1 out=$2
  shift 2
  "$RUN" "$art" --device=cuda --generate "$steps" --output-dir "$out" "$@" |
    grep -E "first token|per output token"
}

greedy() { # artifact, ref dir, out dir, mnemo-run flags...
  local art=$1 ref=$2 out=$3
  shift 3
  generate "$art" "$out" --input "input_ids=$ref/input_ids.npy" "$@" &&
    $PY $CHECK compare "$out" "$ref" "${f32tol[@]}"
}

ragged() { # artifact, ref dir, out dir, prompt lengths, mnemo-run flags...
  local art=$1 ref=$2 out=$3 lengths=$4
  shift 4
  generate "$art" "$out" --input "input_ids=$(dirname "$out")/ragged.npy" \
    --prompt-lengths "$lengths" "$@" &&
    $PY $CHECK compare "$out" "$ref" --ragged "${f32tol[@]}"
}

teacher() { # artifact, ref dir, out dir, tolerance flags...
  local art=$1 ref=$2 out=$3
  shift 3
  generate "$art" "$out" --input "input_ids=$ref/input_ids.npy" \
    --teacher-force "$ref/greedy_tokens.npy" &&
    $PY $CHECK compare "$out" "$ref" --teacher "$@"
}

for art in "$DIR"/gen/*.mnemo; do
  name=$(basename "$art" .mnemo)
  model=${name%%.*}
  kv=${name##*.}
  ref=$REFS/$model
  out=$DIR/out/$name
  mkdir -p "$out"
  steps=$($PY -c "import numpy; print(numpy.load('$ref/greedy_tokens.npy').shape[1])")
  sparse=0
  grep -q '"index_topk"' "$ref/config.json" && sparse=1
  # DeepSeek-V4 (compress_rates): a cache departs from the recomputed
  # references by up to 3.1e-3 where a CSA entry closes and PyTorch's tie
  # order re-selects earlier rows (docs/DeepSeekV4.md; the host test's
  # bound).
  f32tol=()
  grep -q '"compress_rates"' "$ref/config.json" && f32tol=(--max-abs 5e-3)
  tol=()
  if [ "$kv" = f32 ]; then
    report "$name greedy" greedy "$art" "$ref" "$out/greedy"
    lengths=$($PY $CHECK ragged "$ref" "$out/ragged.npy")
    report "$name ragged $lengths" ragged "$art" "$ref" "$out/ragged" "$lengths"
    # An artifact with an `append` step (mnemoc --append-step): the prompts
    # fed 7 tokens at a time, the ragged rows 16 at a time.
    if "$RUN" "$art" --dump-plan | grep -q '"append"'; then
      report "$name greedy, prompt in chunks of 7" greedy "$art" "$ref" \
        "$out/greedy-chunks" --prompt-chunk 7
      report "$name ragged $lengths, prompts in chunks of 16" ragged "$art" \
        "$ref" "$out/ragged-chunks" "$lengths" --prompt-chunk 16
    fi
  elif [ "$kv" = fp8 ]; then
    tol=(--rel-l2 5e-2)
    [ "$sparse" = 1 ] && tol+=(--flips 2)
  else
    tol=(--rel-l2 1e-2)
    [ "$sparse" = 1 ] && tol+=(--flips 2)
  fi
  [ "$kv" = f32 ] && tol=("${f32tol[@]}")
  report "$name teacher-forced ${tol[*]:-(max |d| 1e-4)}" teacher "$art" \
    "$ref" "$out/teacher" "${tol[@]}"
done
echo "generation checks: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

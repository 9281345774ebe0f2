#!/usr/bin/env bash
# On a GPU machine: the correctness cases and reference models
# (scripts/gpu/check_ptx.py, through CuPy and through mnemo-run
# --device=cuda), generation (check_generation.sh), then the attention
# benchmark against the peers
# (scripts/gpu/bench_attention.py) and the linear-layer one against cuBLAS
# (bench_linear.py). DIR was filled on the build machine:
#   DIR/bin/mnemo-run
#   DIR/cases90[.tar.xz]   make_cases.py --target sm_90a --models ...
#   DIR/cases80            make_cases.py --target sm_80
#   DIR/bench              bench_attention.py prepare
#   DIR/bench_linear       bench_linear.py prepare
#   DIR/shapes             check_shapes.py prepare (dynamic-shape artifacts)
#   DIR/gen                checkpoints compiled with their generation steps
#                          (check_generation.sh says how)
# Every case there is an artifact (CASE.mnemo) with its launch plan as JSON
# (CASE.plan.json, from mnemo-run --dump-plan on the build machine), which
# the scripts read through plan.py; no mnemoc is needed here.
# Results go to $OUT (check_ptx.json per chip, bench/results.json, the plot).
# Each step runs under a time limit (CHECK_TIMEOUT_S, default 900 s): a
# kernel waiting on an mbarrier phase that never completes would hang.
set -u
dir=${1:-.device}
out=${OUT:-/tmp/mnemo-gpu}
here=$(cd "$(dirname "$0")" && pwd)
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
for archive in "$dir"/*.tar.xz; do
  [ -e "$archive" ] && tar xJf "$archive" -C "$dir"
done
for chip in 90 80; do
  [ -d "$dir/cases$chip" ] || continue
  mkdir -p "$out/sm$chip"
  echo "== sm_$chip cases"
  timeout "${CHECK_TIMEOUT_S:-900}" python3 "$here/check_ptx.py" \
    "$dir/cases$chip" --out "$out/sm$chip" --mnemo-run "$dir/bin/mnemo-run" ||
    status=1
done
if [ -d "$dir/shapes" ]; then
  echo "== one artifact per model at several shapes"
  timeout "${CHECK_TIMEOUT_S:-900}" python3 "$here/check_shapes.py" run \
    "$dir/shapes" --mnemo-run "$dir/bin/mnemo-run" || status=1
fi
if [ -d "$dir/gen" ]; then
  echo "== generation (checkpoints' prefill and decode)"
  timeout "${CHECK_TIMEOUT_S:-900}" bash "$here/check_generation.sh" "$dir" ||
    status=1
fi
if [ -d "$dir/bench" ]; then
  echo "== attention benchmark"
  timeout "${CHECK_TIMEOUT_S:-900}" python3 "$here/bench_attention.py" run \
    "$dir/bench" --out "$out/bench" --budget-s "${BENCH_BUDGET_S:-300}" ||
    status=1
fi
if [ -d "$dir/bench_linear" ]; then
  echo "== linear benchmark"
  timeout "${CHECK_TIMEOUT_S:-900}" python3 "$here/bench_linear.py" run \
    "$dir/bench_linear" --out "$out/bench_linear" \
    --budget-s "${LINEAR_BUDGET_S:-120}" || status=1
fi
exit $status

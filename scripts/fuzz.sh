#!/usr/bin/env bash
# Long fuzzing runs of the parsers of untrusted input: the ONNX and
# checkpoint importers (structure-aware mutations), the safetensors reader
# and the runtime's artifact loader, side by side, each for HOURS hours.
#
#   scripts/fuzz.sh HOURS [TARGET...]   TARGET: onnx checkpoint safetensors load
#
# Corpora persist in fuzz/corpus/TARGET (git-ignored), so a second run goes
# on from where the first stopped; crashes are written to fuzz/crashes/TARGET
# and do not stop the run (libFuzzer's -fork=1 -ignore_crashes=1). Each
# target's log is fuzz/TARGET.log; the summary gives executions, coverage
# and crashes per target. docs/Fuzzing.md has the crash-reproducer workflow.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "usage: scripts/fuzz.sh HOURS [onnx|checkpoint|safetensors|load ...]" >&2
  exit 2
fi
seconds=$(/usr/bin/python3 -c "print(max(1, int(float('$1') * 3600)))")
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx checkpoint safetensors load)
for t in "${targets[@]}"; do
  case $t in onnx|checkpoint|safetensors|load) ;; *) echo "unknown target '$t'" >&2; exit 2;; esac
done

ensure_packages
build_mnemo mnemoc mnemo-fuzz-onnx mnemo-fuzz-checkpoint mnemo-fuzz-safetensors \
  mnemo-fuzz-load
work=$MNEMO_ROOT/fuzz
# The targets run from copies, so that a rebuild during a long run changes
# neither the running fuzzers nor the jobs fork mode starts later.
bin=$work/bin
mkdir -p "$bin"
for t in "${targets[@]}"; do cp "$MNEMO_BUILD/bin/mnemo-fuzz-$t" "$bin/"; done
cp "$MNEMO_BUILD/bin/mnemoc" "$bin/"
shared=$(cd "$MNEMO_ROOT/../shared/models/refs_public" 2>/dev/null && pwd || true)

# Seeds, added to each corpus on every run (libFuzzer keeps what is new).
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
seed_onnx() {
  /usr/bin/python3 "$MNEMO_ROOT/tools/fuzz/onnx_seeds.py" "$seeds/onnx" --with-exports >/dev/null
}
seed_checkpoint() {
  /usr/bin/python3 "$MNEMO_ROOT/tools/fuzz/checkpoint_seeds.py" "$seeds/checkpoint" --with-exports >/dev/null
}
seed_safetensors() {
  mkdir -p "$seeds/safetensors"
  /usr/bin/python3 - "$seeds/safetensors/seed.safetensors" <<'PY'
import json, struct, sys
import numpy as np
a = np.arange(6, dtype=np.float32)
h = json.dumps({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                "b": {"dtype": "BF16", "shape": [2], "data_offsets": [24, 28]},
                "__metadata__": {"format": "pt"}}).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + a.tobytes() + bytes(4))
PY
  if [ -n "$shared" ]; then
    cp "$shared/llama_gqa/model.safetensors" "$seeds/safetensors/llama_gqa.safetensors"
  fi
}
seed_load() {
  mkdir -p "$seeds/load"
  "$bin/mnemoc" "$MNEMO_ROOT/test/Runtime/Inputs/model.mlir" -o "$seeds/load/cpu.mnemo" --max-seq-len=32
  "$bin/mnemoc" "$MNEMO_ROOT/test/Target/NVPTX/attention-kernel-ptx.mlir" --target=sm_90a \
    -o "$seeds/load/gpu.mnemo"
}

log "fuzzing ${targets[*]} for $seconds s each, side by side"
pids=()
for t in "${targets[@]}"; do
  "seed_$t"
  mkdir -p "$work/corpus/$t" "$work/crashes/$t"
  max_len=()
  [ "$t" = safetensors ] && max_len=(-max_len=4096)
  "$bin/mnemo-fuzz-$t" -fork=1 -ignore_crashes=1 -max_total_time="$seconds" \
    -rss_limit_mb=4096 "${max_len[@]}" -artifact_prefix="$work/crashes/$t/" \
    "$work/corpus/$t" "$seeds/$t" >"$work/$t.log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done

# Executions, coverage and crashes per target, from the fork-mode logs.
for t in "${targets[@]}"; do
  last=$(grep -E '^#[0-9]+: cov: ' "$work/$t.log" | tail -1 || true)
  execs=$(sed -nE 's/^#([0-9]+): .*/\1/p' <<<"$last")
  cov=$(sed -nE 's/.* cov: ([0-9]+) .*/\1/p' <<<"$last")
  crashes=$(find "$work/crashes/$t" -type f | wc -l)
  echo "fuzz $t: ${execs:-0} executions, coverage ${cov:-?} edges, $crashes crash files, corpus $(ls "$work/corpus/$t" | wc -l) inputs"
  [ "$crashes" -eq 0 ] || status=1
done
exit $status

#!/usr/bin/env bash
# Sets up and builds Mnemo, then runs its main job on the bundled tiny ONNX
# model (examples/tiny-onnx/model.onnx: a 2-layer Llama-style decoder in the
# form torch.onnx exports it, made by examples/tiny-onnx/make_model.py).
# mnemoc compiles it for the host and reports the subgraphs it raised to
# mnemo ops; mnemo-run runs it on the 12-token prompt stored beside it. Prints
# the top predicted next tokens, the latency, and whether the logits match
# the float64 numpy reference stored beside the model (exit 1 if not).
# A shorter second part does the same for the decoder written directly in
# the mnemo dialect (examples/tiny-decoder/model.mlir).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

ensure_packages
build_mnemo mnemoc mnemo-run

work="$MNEMO_BUILD/demo"
mkdir -p "$work"

# demo_model NAME MODEL PROMPT_IDS REFERENCE_LOGITS [MNEMOC FLAGS...]
# Compiles MODEL for the host, runs it, prints the prediction and the check.
demo_model() {
  local name=$1 model=$2 ids=$3 ref=$4
  shift 4
  local artifact="$work/$name.mnemo" run_log
  "$MNEMO_BUILD/bin/mnemoc" "$model" -o "$artifact" --target=host "$@"
  log "compiled $artifact ($(du -h "$artifact" | cut -f1))"
  run_log=$("$MNEMO_BUILD/bin/mnemo-run" "$artifact" --input "input_ids=$ids" \
    --output-dir "$work/$name" --repeat 50)
  /usr/bin/python3 - "$ids" "$work/$name/logits.npy" "$ref" "$run_log" <<'PY'
import re
import sys
import numpy as np
ids_path, got_path, ref_path, run_log = sys.argv[1:]
ids, logits, ref = np.load(ids_path), np.load(got_path), np.load(ref_path)
last = logits[0, -1]
top = np.argsort(-last)[:5]
print("prompt ids:", ids[0].tolist())
print("top next tokens (id, logit):",
      ", ".join(f"{t} ({last[t]:.4f})" for t in top))
latency = re.search(r"latency: (\S+) ms \(median of (\d+)\)", run_log)
print(f"latency: {float(latency[1]):.3f} ms per run (median of {latency[2]})")
diff = (float(np.abs(logits.astype(np.float64) - ref).max())
        if logits.shape == ref.shape else float("inf"))
ok = bool(np.isfinite(logits).all()) and diff <= 1e-4
print(f"logits vs reference: max |diff| = {diff:.3g}: "
      f"{'match' if ok else 'MISMATCH'}")
sys.exit(0 if ok else 1)
PY
}

onnx="$MNEMO_ROOT/examples/tiny-onnx"
log "model: examples/tiny-onnx/model.onnx, a 2-layer Llama-style decoder" \
  "(vocab 512, hidden 128, 4 query / 2 KV heads), ONNX opset 23"
log "compiling for the host; --report lists the subgraphs raised to mnemo ops"
demo_model tiny-onnx "$onnx/model.onnx" "$onnx/input_ids.npy" "$onnx/logits.npy" --report

mlir="$MNEMO_ROOT/examples/tiny-decoder"
log "also: examples/tiny-decoder/model.mlir, written in the mnemo dialect:" \
  "$(sed -n 2p "$mlir/model.mlir" | sed 's|^// A ||')"
demo_model tiny-decoder "$mlir/model.mlir" "$mlir/prompt_ids.npy" "$mlir/reference_logits.npy"

#!/usr/bin/env bash
# Sets up and builds Mnemo, then runs its main job on the embedded default:
# the bundled tiny decoder (examples/tiny-decoder/model.mlir, written in the
# mnemo dialect) compiled by mnemoc into a host artifact and run by
# mnemo-run on the default prompt. Prints the top predicted next tokens, the
# latency, and whether the logits match the float64 numpy model stored
# beside the model.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

ensure_packages
build_mnemo mnemoc mnemo-run

model="$MNEMO_ROOT/examples/tiny-decoder"
work="$MNEMO_BUILD/demo"
mkdir -p "$work"
log "model: $(sed -n 2p "$model/model.mlir" | sed 's|^// ||')"
"$MNEMO_BUILD/bin/mnemoc" "$model/model.mlir" -o "$work/tiny-decoder.mnemo" --target=host
log "compiled $work/tiny-decoder.mnemo ($(du -h "$work/tiny-decoder.mnemo" | cut -f1))"
"$MNEMO_BUILD/bin/mnemo-run" "$work/tiny-decoder.mnemo" \
  --input "input_ids=$model/prompt_ids.npy" --output-dir "$work" --repeat 20
/usr/bin/python3 - "$model" "$work" <<'PY'
import sys
import numpy as np
model, work = sys.argv[1:]
ids = np.load(f"{model}/prompt_ids.npy")
logits = np.load(f"{work}/logits.npy")
ref = np.load(f"{model}/reference_logits.npy")
last = logits[0, -1]
top = np.argsort(-last)[:5]
print("prompt ids:", ids[0].tolist())
print("top next tokens:", ", ".join(f"{t} ({last[t]:.4f})" for t in top))
diff = float(np.abs(logits - ref).max())
ok = np.isfinite(logits).all() and diff <= 1e-4
print(f"logits vs reference: max |diff| = {diff:.3g} (tolerance 1e-4): "
      f"{'match' if ok else 'MISMATCH'}")
sys.exit(0 if ok else 1)
PY

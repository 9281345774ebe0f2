#!/usr/bin/env bash
# Sets up and builds Mnemo, then runs its main job on the embedded default:
# the bundled tiny decoder (examples/tiny-decoder/model.mlir, written in the
# mnemo dialect) on the default prompt, through the host reference path
# (reference decomposition → LLVM → JIT). Prints the top next tokens and
# whether the logits match the float64 numpy model stored beside it.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

ensure_packages
build_mnemo mnemo-opt

model="$MNEMO_ROOT/examples/tiny-decoder"
log "tiny decoder: $(sed -n 2p "$model/model.mlir" | sed 's|^// ||')"
log "prompt ids: $(/usr/bin/python3 -c "import numpy; print(numpy.load('$model/prompt_ids.npy').tolist())")"
/usr/bin/python3 "$MNEMO_ROOT/scripts/run_reference.py" "$model/model.mlir" \
  --input "input_ids=$model/prompt_ids.npy" \
  --expected "$model/reference_logits.npy" --atol 1e-4 --top 5

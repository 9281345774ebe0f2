# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t | FileCheck %s
# RUN: not %python %mnemo_src/scripts/run_reference.py %mnemo_src/examples/tiny-decoder/model.mlir \
# RUN:   --input input_ids=%t/float_ids.npy 2>&1 | FileCheck %s --check-prefix=BADINPUT
"""The bundled tiny decoder through the reference path, at sequence lengths
other than the demo's, against the generator's float64 numpy model."""

import os
import subprocess
import sys

import numpy as np

SRC = os.environ["MNEMO_SRC"]
sys.path.insert(0, os.path.join(SRC, "examples", "tiny-decoder"))
import generate  # noqa: E402

out = sys.argv[1]
params = generate.weights()
rng = np.random.default_rng(7)
# CHECK: length 1: {{.*}}match
# CHECK: length 4: {{.*}}match
# CHECK: length 13: {{.*}}match
for length in (1, 4, 13):
    ids = rng.integers(0, generate.VOCAB, size=length).astype(np.int64)
    np.save(f"{out}/ids{length}.npy", ids[None])
    np.save(f"{out}/ref{length}.npy", generate.forward(params, ids)[None])
    proc = subprocess.run(
        [sys.executable, os.path.join(SRC, "scripts", "run_reference.py"),
         os.path.join(SRC, "examples", "tiny-decoder", "model.mlir"),
         "--input", f"input_ids={out}/ids{length}.npy",
         "--expected", f"{out}/ref{length}.npy", "--atol", "1e-4"],
        capture_output=True, text=True)
    verdict = proc.stdout.strip().splitlines()[-1] if proc.stdout else proc.stderr
    print(f"length {length}: {verdict}")
    if proc.returncode:
        sys.exit(1)

np.save(f"{out}/float_ids.npy", np.zeros((1, 3), np.float32))
# BADINPUT: run_reference: error: {{.*}}float_ids.npy: input 'input_ids' is float32[1, 3], @forward expects tensor<1x?xi64>

"""compare_logits.py GOT.npy WANT.npy: prints the max |diff| and `ok` when it
is within the fp32 tolerance (1e-4) and nothing is NaN, `FAIL` otherwise."""

import sys

import numpy as np

got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
if got.shape != want.shape:
    sys.exit(f"FAIL: shape {got.shape} != {want.shape}")
diff = float(np.max(np.abs(got.astype(np.float64) - want)))
ok = np.isfinite(got).all() and diff <= 1e-4
print(f"max |diff| {diff:.3g} {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)

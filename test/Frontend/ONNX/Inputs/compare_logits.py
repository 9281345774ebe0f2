"""compare_logits.py GOT.npy WANT.npy [--rel TOL]: prints the max |diff| and
`ok` when it is within the fp32 tolerance (1e-4) and nothing is NaN, `FAIL`
otherwise. With --rel, the bound is on the relative error
||got - want|| / ||want|| instead (reduced-precision weights), printed too."""

import sys

import numpy as np

got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
rel_tol = float(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--rel" else None
if got.shape != want.shape:
    sys.exit(f"FAIL: shape {got.shape} != {want.shape}")
delta = got.astype(np.float64) - want
diff = float(np.max(np.abs(delta)))
if rel_tol is None:
    ok = np.isfinite(got).all() and diff <= 1e-4
    print(f"max |diff| {diff:.3g} {'ok' if ok else 'FAIL'}")
else:
    rel = float(np.linalg.norm(delta) / np.linalg.norm(want))
    ok = np.isfinite(got).all() and rel <= rel_tol
    print(f"max |diff| {diff:.3g} relative {rel:.3g} {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)

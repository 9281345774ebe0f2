"""Checks that one row of a batched generation step gives the logits a
forward over that row's prompt alone gives.

    same_row.py STEP_LOGITS.npy ROW FORWARD_LOGITS.npy [TOL]

Compares step 0 of row ROW of `mnemo-run --generate`'s step_logits.npy
([B, N, V]) with the last position of a forward's logits.npy ([1, S, V])
over that row's prompt; prints the max |difference| and exits 1 when it
exceeds TOL (default 1e-5) or is not finite.
"""

import sys

import numpy as np


def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    step = np.load(argv[1])
    row = int(argv[2])
    forward = np.load(argv[3])
    tol = float(argv[4]) if len(argv) == 5 else 1e-5
    got, want = step[row, 0], forward[0, -1]
    err = float(np.abs(got - want).max())
    good = bool(np.isfinite(got).all()) and err <= tol
    print(f"row {row}: max |d| {err:.2e} (tol {tol:g}){': ok' if good else ': MISMATCH'}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

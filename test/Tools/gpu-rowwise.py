# RUN: %python %s | FileCheck %s
# CHECK: close: ok
# CHECK: zeroed row: caught at (2, 10)
# CHECK: stale row: caught at (0, 3)
# CHECK: zero reference row: ok
"""scripts/gpu/rowwise.py, which the GPU checks and benchmarks use to compare
outputs row by row: a zeroed or stale row must fail even when the whole
tensor's relative error stays small, and a reference row of zeros must not
make the bound blow up."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.environ.get("MNEMO_SRC", os.path.join(
    os.path.dirname(__file__), "..", "..")), "scripts", "gpu"))
from rowwise import worst_row_numpy  # noqa: E402

TOL = 2e-2
rng = np.random.default_rng(0)
ref = rng.standard_normal((16, 512, 32))
out = ref + 1e-3 * rng.standard_normal(ref.shape)


def report(name, y, r):
    rel, row = worst_row_numpy(y, r)
    whole = np.linalg.norm(y - r) / np.linalg.norm(r)
    status = "ok" if rel <= TOL else f"caught at {row}"
    # The whole tensor's relative error alone would pass each case.
    assert whole <= TOL, whole
    print(f"{name}: {status} (worst row {rel:.2g}, whole tensor {whole:.2g})")


report("close", out, ref)
zeroed = out.copy()
zeroed[2, 10] = 0
report("zeroed row", zeroed, ref)
stale = out.copy()
stale[0, 3] = ref[0, 4]
report("stale row", stale, ref)
silent = ref.copy()
silent[1, 7] = 0
report("zero reference row", silent + 1e-6, silent)

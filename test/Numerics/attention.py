# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: attention: [[N:[0-9]+]] of [[N]] cases passed
"""mnemo.attention's reference decomposition against a numpy float64 model."""

from attention_cases import GRID
from mnemo_numerics import run_cases

run_cases("attention", GRID)

# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: mla reference: [[N:[0-9]+]] of [[N]] cases passed
# CHECK: mla expanded: [[N]] of [[N]] cases passed
# CHECK: mla absorbed: [[N]] of [[N]] cases passed
# CHECK: mla expanded tiled q4/kv8: [[N]] of [[N]] cases passed
# CHECK: mla absorbed tiled q4/kv8: [[N]] of [[N]] cases passed
# CHECK: mla auto tiled q3/kv5: [[N]] of [[N]] cases passed
"""mnemo.mla_attention against an independent numpy model: the reference
decomposition, both forms of mnemo-decompose-mla, and both forms tiled by
mnemo-tile-attention at tile sizes that divide none of the lengths."""

from mla_cases import GRID
from mnemo_numerics import run_cases

run_cases("mla reference", GRID)
for form in ("expanded", "absorbed"):
    run_cases(f"mla {form}", GRID, passes=f"mnemo-decompose-mla{{form={form}}}")
for form in ("expanded", "absorbed"):
    run_cases(f"mla {form} tiled q4/kv8", GRID,
              passes=f"mnemo-decompose-mla{{form={form}}},"
                     "func.func(mnemo-tile-attention{block-q=4 block-kv=8})")
run_cases("mla auto tiled q3/kv5", GRID,
          passes="mnemo-select-mla-form,mnemo-decompose-mla,"
                 "func.func(mnemo-tile-attention{block-q=3 block-kv=5})")

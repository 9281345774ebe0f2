# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: rope: [[N:[0-9]+]] of [[N]] cases passed
# CHECK: rope_tables: [[M:[0-9]+]] of [[M]] cases passed
"""mnemo.rope's and mnemo.rope_tables' reference decompositions against the
numpy models."""

import numpy as np

from mnemo_numerics import Case, rng, run_cases
from numpy_refs import rope as reference
from numpy_refs import rope_tables as tables_reference


def scaling_text(scaling):
    if not scaling:
        return ""
    params = [scaling["kind"]]
    for key, value in scaling.items():
        if key == "kind":
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, float):
            value = repr(value)
        params.append(f"{key} = {value}")
    return " scaling(<" + ", ".join(params) + ">)"


def rope_case(name, shape, seed, theta=10000.0, r=None, interleaved=False,
              scaling=None, pos_shape="bs", max_pos=64, pos_dtype=np.int64,
              dtype=np.float32, atol=1e-5, dynamic=None):
    gen = rng(seed)
    b, h, s, d = shape
    x = gen.standard_normal(shape).astype(dtype)
    full = {"bs": (b, s), "1s": (1, s), "s": (s,)}[pos_shape]
    pos = gen.integers(0, max_pos, size=full).astype(pos_dtype)
    attrs = f"theta({theta!r})"
    if interleaved:
        attrs += " interleaved"
    if r is not None:
        attrs += f" rotary_dim({r})"
    attrs += scaling_text(scaling)
    body = f"%result = mnemo.rope %x, %pos {attrs} : {{T:x}}, {{T:pos}} -> {{R}}"
    expected = reference(x, pos, theta, r or d, interleaved, scaling)
    return Case(name, body, {"x": x, "pos": pos}, expected, dtype=dtype,
                atol=atol, dynamic=dynamic,
                result_dynamic=(dynamic or {}).get("x", ()))


cases = [
    rope_case("rotate_half_d64", (2, 4, 9, 64), 1),
    rope_case("interleaved_d32", (1, 3, 7, 32), 2, interleaved=True),
    rope_case("partial_rotate_half_48_of_16", (2, 2, 5, 48), 3, r=16),
    rope_case("partial_interleaved_40_of_24", (1, 2, 6, 40), 4, r=24,
              interleaved=True),
    rope_case("theta_1e6_d128", (1, 2, 4, 128), 5, theta=1e6, max_pos=512),
    rope_case("positions_1s_i32", (3, 2, 5, 16), 6, pos_shape="1s",
              pos_dtype=np.int32),
    rope_case("positions_s", (2, 2, 5, 16), 7, pos_shape="s"),
    rope_case("linear", (1, 2, 8, 32), 8,
              scaling={"kind": "linear", "factor": 4.0}),
    rope_case("dynamic_below_original", (1, 2, 6, 32), 9, max_pos=30,
              scaling={"kind": "dynamic", "factor": 2.0,
                       "original_max_position": 64}),
    rope_case("dynamic_beyond_original", (2, 2, 6, 32), 10, max_pos=200,
              scaling={"kind": "dynamic", "factor": 2.0,
                       "original_max_position": 64}),
    # Rows of very different lengths: each its own base.
    rope_case("dynamic_per_row", (3, 2, 5, 32), 17, max_pos=150,
              scaling={"kind": "dynamic", "factor": 4.0,
                       "original_max_position": 32}),
    rope_case("dynamic_per_row_dynamic_batch", (3, 2, 5, 32), 18, max_pos=150,
              scaling={"kind": "dynamic", "factor": 4.0,
                       "original_max_position": 32},
              dynamic={"x": [0, 2], "pos": [0, 1]}),
    rope_case("dynamic_shared_row", (3, 2, 5, 32), 19, max_pos=150,
              pos_shape="1s",
              scaling={"kind": "dynamic", "factor": 4.0,
                       "original_max_position": 32}),
    rope_case("yarn_default_mscale", (1, 2, 7, 64), 11, max_pos=300,
              scaling={"kind": "yarn", "factor": 4.0,
                       "original_max_position": 64}),
    rope_case("yarn_explicit", (1, 2, 7, 32), 12, max_pos=300, interleaved=True,
              scaling={"kind": "yarn", "factor": 8.0,
                       "original_max_position": 128, "beta_fast": 16.0,
                       "beta_slow": 2.0, "attention_factor": 1.25,
                       "truncate": False}),
    rope_case("llama3", (1, 2, 7, 64), 13, theta=500000.0, max_pos=300,
              scaling={"kind": "llama3", "factor": 8.0,
                       "original_max_position": 64, "low_freq_factor": 1.0,
                       "high_freq_factor": 4.0}),
    rope_case("llama3_partial", (1, 2, 5, 48), 14, r=32, theta=500000.0,
              max_pos=300,
              scaling={"kind": "llama3", "factor": 4.0,
                       "original_max_position": 32, "low_freq_factor": 1.0,
                       "high_freq_factor": 2.0}),
    rope_case("dynamic_shapes", (2, 2, 7, 32), 15,
              dynamic={"x": [0, 2], "pos": [0, 1]}),
    rope_case("f16", (1, 2, 5, 64), 16, dtype=np.float16, atol=4e-3),
]

run_cases("rope", cases)


def tables_case(name, shape, seed, r, table_shape, interleaved=False,
                dtype=np.float32, atol=1e-5, dynamic=None):
    """Arbitrary tables (not cos/sin of anything): the op is a formula."""
    gen = rng(seed)
    x = gen.standard_normal(shape).astype(dtype)
    cos = gen.standard_normal(table_shape + (r,)).astype(dtype)
    sin = gen.standard_normal(table_shape + (r,)).astype(dtype)
    attrs = " interleaved" if interleaved else ""
    body = (f"%result = mnemo.rope_tables %x, %cos, %sin{attrs}"
            " : {T:x}, {T:cos} -> {R}")
    expected = tables_reference(x, cos, sin, interleaved)
    return Case(name, body, {"x": x, "cos": cos, "sin": sin}, expected,
                dtype=dtype, atol=atol, dynamic=dynamic,
                result_dynamic=(dynamic or {}).get("x", ()))


b, s = 2, 7
tables = [
    tables_case("rotate_half_shared", (b, 3, s, 32), 21, 32, (1, s)),
    tables_case("rotate_half_batched_partial", (b, 2, s, 48), 22, 16, (b, s)),
    tables_case("interleaved_rank2", (1, 2, 5, 24), 23, 24, (5,),
                interleaved=True),
    tables_case("interleaved_partial", (b, 2, s, 40), 24, 24, (b, s),
                interleaved=True),
    tables_case("dynamic_shapes", (b, 2, s, 16), 25, 16, (1, s),
                dynamic={"x": [0, 2], "cos": [1], "sin": [1]}),
    tables_case("f16", (1, 2, 5, 32), 26, 32, (1, 5), dtype=np.float16,
                atol=4e-3),
]
run_cases("rope_tables", tables)

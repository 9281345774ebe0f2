# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: layers: [[N:[0-9]+]] of [[N]] cases passed
# CHECK: layers, linear tiled 3x5: [[N]] of [[N]] cases passed
"""rms_norm, swiglu, linear and embedding decompositions against numpy, and
the cache-tiled linear (mnemo-tile-linear) on the same cases."""

import numpy as np

from mnemo_numerics import Case, rng, run_cases


def rms_norm_case(name, shape, seed, eps=1e-5, unit_offset=False,
                  dtype=np.float32, atol=1e-5, dynamic=None):
    r = rng(seed)
    x = (r.standard_normal(shape) * 3).astype(dtype)
    w = r.standard_normal(shape[-1:]).astype(dtype)
    x64 = x.astype(np.float64)
    scale = 1.0 / np.sqrt((x64 ** 2).mean(axis=-1, keepdims=True) + eps)
    expected = x64 * scale * (w.astype(np.float64) + (1.0 if unit_offset else 0.0))
    attrs = f"eps({eps:.17e})" + (" unit_offset" if unit_offset else "")
    body = f"%result = mnemo.rms_norm %x, %w {attrs} : {{T:x}}, {{T:w}} -> {{R}}"
    dims = (dynamic or {}).get("x", ())
    return Case(name, body, {"x": x, "w": w}, expected, dtype=dtype, atol=atol,
                dynamic=dynamic, result_dynamic=dims)


def swiglu_case(name, shape, seed, dtype=np.float32, atol=1e-5, limit=None):
    r = rng(seed)
    g = (r.standard_normal(shape) * 4).astype(dtype)
    u = (r.standard_normal(shape) * (4 if limit else 1)).astype(dtype)
    g64, u64 = g.astype(np.float64), u.astype(np.float64)
    if limit:  # DeepSeek-V4's clamp: gate above, up both ways
        g64, u64 = np.minimum(g64, limit), np.clip(u64, -limit, limit)
    expected = g64 / (1 + np.exp(-g64)) * u64
    attrs = f" limit({limit:.17e})" if limit else ""
    body = f"%result = mnemo.swiglu %g, %u{attrs} : {{R}}"
    return Case(name, body, {"g": g, "u": u}, expected, dtype=dtype, atol=atol)


def linear_case(name, lead, k, n, seed, layout="out_in", bias=False,
                dynamic=None, result_dynamic=()):
    r = rng(seed)
    x = r.standard_normal(lead + (k,)).astype(np.float32)
    w_nk = r.standard_normal((n, k)).astype(np.float32)
    w = w_nk if layout == "out_in" else np.ascontiguousarray(w_nk.T)
    expected = x.astype(np.float64) @ w_nk.astype(np.float64).T
    inputs = {"x": x, "w": w}
    extra = ""
    if bias:
        b = r.standard_normal((n,)).astype(np.float32)
        inputs["b"] = b
        expected = expected + b
        extra = " bias(%b : {T:b})"
    body = (f"%result = mnemo.linear %x, %w layout({layout}){extra} "
            ": {T:x}, {T:w} -> {R}")
    return Case(name, body, inputs, expected, atol=2e-5, dynamic=dynamic,
                result_dynamic=result_dynamic)


def embedding_case(name, vocab, hidden, ids, seed):
    r = rng(seed)
    table = r.standard_normal((vocab, hidden)).astype(np.float32)
    ids = np.asarray(ids, dtype=np.int64)
    valid = (ids >= 0) & (ids < vocab)
    expected = np.where(valid[..., None], table[np.where(valid, ids, 0)], 0.0)
    body = "%result = mnemo.embedding %t[%ids] : {T:t}, {T:ids} -> {R}"
    return Case(name, body, {"t": table, "ids": ids}, expected, atol=0.0)


cases = [
    rms_norm_case("rms_norm_3d", (2, 5, 33), 1),
    rms_norm_case("rms_norm_unit_offset", (3, 64), 2, eps=1e-6,
                  unit_offset=True),
    rms_norm_case("rms_norm_4d_per_head", (1, 2, 3, 40), 3),
    rms_norm_case("rms_norm_dynamic", (2, 7, 16), 4, dynamic={"x": [0, 1]}),
    rms_norm_case("rms_norm_f16", (2, 3, 48), 5, dtype=np.float16, atol=4e-3),
    swiglu_case("swiglu", (2, 3, 37), 6),
    swiglu_case("swiglu_f16", (4, 19), 7, dtype=np.float16, atol=4e-3),
    swiglu_case("swiglu_limit", (3, 29), 8, limit=1.5),
    linear_case("linear_out_in", (2, 5), 33, 17, 8),
    linear_case("linear_in_out_bias", (7,), 24, 9, 9, layout="in_out",
                bias=True),
    linear_case("linear_out_in_bias_4d", (1, 2, 3), 16, 12, 10, bias=True),
    linear_case("linear_vector", (), 19, 7, 14, bias=True),
    linear_case("linear_dynamic_rows", (3, 5), 32, 8, 11,
                dynamic={"x": [0, 1]}, result_dynamic=(0, 1)),
    embedding_case("embedding", 50, 12, [[3, 0, 49, 7], [1, 1, 2, 48]], 12),
    embedding_case("embedding_out_of_range_is_zero", 10, 4,
                   [-1, 10, 5, 1 << 40], 13),
]

run_cases("layers", cases)
# mnemo-tile-linear at tile sizes that divide none of the shapes.
run_cases("layers, linear tiled 3x5", cases,
          passes="func.func(mnemo-tile-linear{block-rows=3 block-cols=5})")

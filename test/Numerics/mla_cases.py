"""The mnemo.mla_attention test grid, shared by the reference and the
decomposed runs."""

import numpy as np

import numpy_refs
from mnemo_numerics import Case, rng


def mla_case(name, b, h, sq, skv, dn, dr, r, dv, seed, causal=False,
             offset=0, scale=None, form=None, dtype=np.float32, atol=1e-5,
             dynamic=None):
    g = rng(seed)
    inputs = {
        "qn": g.standard_normal((b, h, sq, dn)).astype(dtype),
        "qp": g.standard_normal((b, h, sq, dr)).astype(dtype),
        "c": g.standard_normal((b, skv, r)).astype(dtype),
        "kp": g.standard_normal((b, skv, dr)).astype(dtype),
        # Up-projections scaled like trained ones so scores stay O(1).
        "wk": (g.standard_normal((h, dn, r)) / np.sqrt(r)).astype(dtype),
        "wv": (g.standard_normal((h, dv, r)) / np.sqrt(r)).astype(dtype),
    }
    attrs = []
    if causal:
        attrs.append("causal")
    if scale is not None:
        attrs.append(f"scale({scale!r})")
    pre = ""
    if offset:
        pre = f"%off = arith.constant {offset} : index\n"
        attrs.append("q_offset(%off)")
    if form:
        attrs.append(f"form({form})")
    body = (pre + "%result = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv " +
            " ".join(attrs) + " : {T:qn}, {T:qp}, {T:c}, {T:kp}, {T:wk}, "
            "{T:wv} -> {R}")
    expected = numpy_refs.mla(*inputs.values(), scale=scale, causal=causal,
                              offset=offset)
    return Case(name, body, inputs, expected, dtype=dtype, atol=atol,
                dynamic=dynamic)


GRID = [
    mla_case("prefill_noncausal", 2, 4, 7, 7, 16, 8, 12, 16, 1),
    mla_case("prefill_causal_odd_dims", 1, 3, 13, 13, 24, 8, 20, 12, 2,
             causal=True),
    mla_case("chunk_causal_offset", 2, 2, 5, 19, 32, 16, 24, 32, 3,
             causal=True, offset=14),
    mla_case("decode_one_row", 2, 4, 1, 23, 16, 8, 40, 24, 4, causal=True,
             offset=22, form="absorbed"),
    mla_case("decode_noncausal_scale", 1, 8, 1, 9, 8, 4, 12, 8, 5,
             scale=0.2),
    mla_case("dv_ne_dn_expanded_attr", 1, 2, 11, 17, 48, 16, 32, 40, 6,
             causal=True, offset=6, form="expanded"),
    mla_case("dynamic_batch_and_lengths", 2, 4, 6, 10, 16, 8, 16, 16, 7,
             causal=True, offset=4,
             dynamic={"qn": [0, 2], "qp": [0, 2], "c": [0, 1], "kp": [0, 1]}),
    mla_case("f16", 1, 2, 9, 9, 16, 8, 16, 16, 8, causal=True,
             dtype=np.float16, atol=2e-3),
]

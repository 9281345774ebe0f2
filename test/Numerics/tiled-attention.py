# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: tiled q4/kv8: [[N:[0-9]+]] of [[N]] cases passed
# CHECK: tiled q16/kv16: [[M:[0-9]+]] of [[M]] cases passed
# CHECK: tiled q3/kv5: [[K:[0-9]+]] of [[K]] cases passed
"""mnemo-tile-attention (FlashAttention form) executed on the host against
the numpy model: the whole attention grid at tile sizes that divide none of
its lengths, plus ropes fused into the Q/K tile loads."""

import numpy as np

import numpy_refs
from attention_cases import GRID
from mnemo_numerics import Case, rng, run_cases


def roped_case(name, b, hq, hkv, sq, skv, d, seed, offset=0, interleaved=False,
               rotary_dim=None, causal=True, window=None, scaling=None):
    r = rng(seed)
    q = r.standard_normal((b, hq, sq, d)).astype(np.float32)
    k = r.standard_normal((b, hkv, skv, d)).astype(np.float32)
    v = r.standard_normal((b, hkv, skv, d)).astype(np.float32)
    pq = np.broadcast_to(np.arange(offset, offset + sq), (b, sq)).astype(np.int64).copy()
    pk = np.broadcast_to(np.arange(skv), (b, skv)).astype(np.int64).copy()
    rot = rotary_dim or d
    rope_attrs = "theta(10000.0)" + (" interleaved" if interleaved else "") + \
        (f" rotary_dim({rotary_dim})" if rotary_dim else "")
    if scaling:
        rope_attrs += (f" scaling(<dynamic, factor = {scaling['factor']}, "
                       f"original_max_position = {scaling['original_max_position']}>)")
    attn_attrs = ("causal " if causal else "") + \
        (f"window({window}) " if window else "") + \
        ("q_offset(%off) " if offset else "")
    body = (f"%off = arith.constant {offset} : index\n"
            f"%qr = mnemo.rope %q, %pq {rope_attrs} : {{T:q}}, {{T:pq}} -> {{T:q}}\n"
            f"%kr = mnemo.rope %k, %pk {rope_attrs} : {{T:k}}, {{T:pk}} -> {{T:k}}\n"
            f"%result = mnemo.attention %qr, %kr, %v {attn_attrs}"
            ": {T:q}, {T:k}, {T:v} -> {R}")
    qr = numpy_refs.rope(q, pq, 10000.0, rot, interleaved, scaling)
    kr = numpy_refs.rope(k, pk, 10000.0, rot, interleaved, scaling)
    expected = numpy_refs.attention(qr, kr, v, causal=causal, offset=offset,
                                    window=window)
    return Case(name, body, {"q": q, "k": k, "v": v, "pq": pq, "pk": pk},
                expected)


ROPED = [
    roped_case("rope_fused_prefill", 1, 4, 2, 19, 19, 32, 101),
    roped_case("rope_fused_decode", 2, 8, 2, 1, 23, 16, 102, offset=22),
    roped_case("rope_fused_interleaved_partial_window", 1, 2, 1, 13, 13, 40,
               103, interleaved=True, rotary_dim=24, window=4),
    # Dynamic NTK depends on the largest position of the whole tensor: such a
    # rope must not be applied per tile.
    roped_case("rope_dynamic_ntk_not_fused", 1, 2, 1, 16, 16, 8, 104,
               scaling={"kind": "dynamic", "factor": 4.0,
                        "original_max_position": 4}),
]

for bq, bkv in ((4, 8), (16, 16), (3, 5)):
    run_cases(f"tiled q{bq}/kv{bkv}", GRID + ROPED,
              passes=f"func.func(mnemo-tile-attention{{block-q={bq} block-kv={bkv}}})")

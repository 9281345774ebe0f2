"""The attention test grid, shared by the reference and tiled runs."""

import numpy as np

import numpy_refs
from mnemo_numerics import Case, rng

def attention_case(name, b, hq, hkv, sq, skv, d, dv, seed, dtype=np.float32,
                   atol=1e-5, mask_shape=None, mask_fill=None, dynamic=None,
                   **opts):
    r = rng(seed)
    q = r.standard_normal((b, hq, sq, d)).astype(dtype)
    k = r.standard_normal((b, hkv, skv, d)).astype(dtype)
    v = r.standard_normal((b, hkv, skv, dv)).astype(dtype)
    inputs = {"q": q, "k": k, "v": v}
    attrs = []
    if opts.get("causal"):
        attrs.append("causal")
    if opts.get("window") is not None:
        attrs.append(f"window({opts['window']})")
    if opts.get("scale") is not None:
        attrs.append(f"scale({opts['scale']!r})")
    if opts.get("softcap") is not None:
        attrs.append(f"softcap({opts['softcap']!r})")
    pre = ""
    ref_opts = dict(opts)
    if mask_shape is not None:
        mask = r.standard_normal(mask_shape).astype(np.float32)
        if mask_fill is not None:
            mask = mask_fill(mask)
        inputs["mask"] = mask
        attrs.append("mask(%mask : {T:mask})")
        ref_opts["mask"] = mask
    if "sink" in opts:
        sink = r.standard_normal((hq,)).astype(np.float32) + opts["sink"]
        inputs["sink"] = sink
        attrs.append("sink(%sink : {T:sink})")
        ref_opts["sink"] = sink
    if opts.get("offset"):
        pre = f"%off = arith.constant {opts['offset']} : index\n"
        attrs.append("q_offset(%off)")
    body = (pre + "%result = mnemo.attention %q, %k, %v " + " ".join(attrs) +
            " : {T:q}, {T:k}, {T:v} -> {R}")
    return Case(name, body, inputs, numpy_refs.attention(q, k, v, **ref_opts),
                dtype=dtype, atol=atol, dynamic=dynamic)


def hide_rows(rows):
    """Masks every key of the given query rows with -inf."""
    def fill(mask):
        mask[..., rows, :] = -np.inf
        return mask
    return fill


GRID = [
    attention_case("mha_noncausal", 2, 2, 2, 5, 7, 8, 8, 1),
    attention_case("gqa_4to1_causal_d32", 1, 8, 2, 37, 37, 32, 32, 2,
                   causal=True),
    attention_case("mqa_d40", 2, 4, 1, 19, 23, 40, 40, 3),
    attention_case("gqa_d64_causal_offset", 1, 4, 2, 3, 19, 64, 64, 4,
                   causal=True, offset=16),
    attention_case("decode_one_row_d128", 2, 8, 2, 1, 45, 128, 128, 5,
                   causal=True, offset=44),
    attention_case("sliding_window_16_d40", 1, 4, 2, 40, 40, 40, 40, 6,
                   causal=True, window=16),
    attention_case("window_with_offset", 1, 2, 1, 7, 29, 32, 32, 7,
                   causal=True, window=5, offset=22),
    attention_case("window_without_causal", 1, 2, 2, 9, 9, 16, 16, 8,
                   window=3),
    attention_case("softcap_scale", 1, 4, 2, 11, 13, 48, 48, 9,
                   scale=0.3, softcap=2.0),
    attention_case("dv_ne_d", 2, 4, 1, 13, 17, 96, 64, 10, causal=True),
    attention_case("dv_smaller_gqa_8to2", 1, 8, 2, 21, 21, 48, 24, 11,
                   causal=True),
    attention_case("mask_b1sk", 2, 4, 2, 6, 10, 32, 32, 12,
                   mask_shape=(2, 1, 6, 10)),
    attention_case("mask_2d_with_dead_rows", 1, 2, 1, 6, 10, 32, 32, 13,
                   mask_shape=(6, 10), mask_fill=hide_rows([1, 4])),
    attention_case("mask_full_rank", 1, 2, 2, 4, 5, 8, 8, 14,
                   mask_shape=(1, 2, 4, 5)),
    attention_case("causal_plus_mask", 1, 4, 4, 9, 9, 16, 16, 15,
                   causal=True, mask_shape=(1, 1, 9, 9)),
    attention_case("sink", 1, 4, 2, 8, 8, 32, 32, 16, causal=True, sink=0.0),
    attention_case("sink_dominates", 1, 2, 1, 3, 6, 16, 16, 17, sink=6.0),
    attention_case("sink_with_dead_row", 1, 2, 2, 4, 4, 8, 8, 18,
                   mask_shape=(4, 4), mask_fill=hide_rows([2]), sink=0.0),
    attention_case("dynamic_batch_and_lengths", 2, 4, 2, 7, 11, 32, 32, 19,
                   causal=True, offset=4,
                   dynamic={"q": [0, 2], "k": [0, 2], "v": [0, 2]}),
    attention_case("f16_gqa", 1, 4, 2, 9, 9, 64, 64, 20, dtype=np.float16,
                   atol=2e-3, causal=True),
]


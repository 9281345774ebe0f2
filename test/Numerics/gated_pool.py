# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: gated pool: [[N:[0-9]+]] of [[N]] cases passed
"""mnemo.gated_pool (DeepSeek-V4's compressor) against an independent numpy
model, on shapes that are no tile multiples: plain windows (HCA), overlapping
windows (CSA: the previous window's first half and this window's second
half; entry 0 without the first), entries past the tokens, a negative entry
(zeros), f16 inputs."""

import numpy as np

from mnemo_numerics import Case, rng, run_cases


def reference(kv, gate, bias, entries, rate, overlapping):
    b, length, _ = kv.shape
    slots, d = bias.shape
    out = np.zeros((b, entries.shape[1], d))
    kv, gate = kv.astype(np.float64), gate.astype(np.float64)
    for bi in range(b):
        for n, w in enumerate(entries[bi]):
            if w < 0:
                continue
            vals, gates = [], []
            for j in range(slots):
                if overlapping:
                    token = (w - 1) * rate + j if j < rate else w * rate + j - rate
                    ch = slice(0, d) if j < rate else slice(d, 2 * d)
                else:
                    token, ch = w * rate + j, slice(0, d)
                if 0 <= token < length:
                    vals.append(kv[bi, token, ch])
                    gates.append(gate[bi, token, ch] + bias[j])
            if not vals:
                continue
            g = np.stack(gates)
            e = np.exp(g - g.max(0))
            out[bi, n] = (e * np.stack(vals)).sum(0) / e.sum(0)
    return out


def cases():
    r = rng(53)
    out = []

    def case(name, b, length, d, rate, overlapping, entries, dtype=np.float32,
             atol=2e-5):
        width = 2 * d if overlapping else d
        slots = 2 * rate if overlapping else rate
        kv = r.standard_normal((b, length, width)).astype(dtype)
        gate = (2 * r.standard_normal((b, length, width))).astype(dtype)
        bias = r.standard_normal((slots, d)).astype(np.float32)
        attrs = f" rate({rate})" + (" overlapping" if overlapping else "")
        body = ("%result = mnemo.gated_pool %kv, %g, %bias, %e" + attrs +
                " : {T:kv}, {T:g}, {T:bias}, {T:e} -> {R}")
        out.append(Case(name, body,
                        {"kv": kv, "g": gate, "bias": bias, "e": entries.astype(np.int64)},
                        reference(kv, gate, bias, entries, rate, overlapping),
                        atol=atol, dynamic={"kv": [0, 1], "g": [0, 1], "e": [0, 1]},
                        result_dynamic=[0, 1]))

    # A forward: every closed window of 45 tokens.
    case("plain rate 8, 45 tokens", 2, 45, 12, 8, False,
         np.tile(np.arange(45 // 8), (2, 1)))
    case("overlapping rate 4, 30 tokens", 1, 30, 10, 4, True,
         np.arange(30 // 4)[None])
    # A step: the entries its tokens close, -1 for none, one past the
    # tokens (only its existing slots count).
    case("overlapping, step rows", 2, 24, 6, 4, True,
         np.array([[-1, 2, 5], [0, -1, 6]]))
    case("plain, a window past the end", 1, 20, 5, 8, False, np.array([[0, 1, 2]]))
    case("f16 rows", 1, 17, 9, 2, True, np.arange(8)[None], dtype=np.float16,
         atol=2e-3)
    return out


run_cases("gated pool", cases())

# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: experts: [[N:[0-9]+]] of [[N]] cases passed
# CHECK: experts, CPU forms: [[N]] of [[N]] cases passed
# CHECK: experts, CPU forms and GEMM kernel: [[N]] of [[N]] cases passed
# CHECK: experts, GEMM form: [[N]] of [[N]] cases passed
# CHECK: grouped_linear: 2 of 2 cases passed
"""mnemo.experts against an independent numpy model: each token through its
selected SwiGLU experts only, weighted, on shapes that are no tile
multiples; an index outside the experts skipped; i32 indices; f16 expert
weights (widened as read). Run twice: the reference lowering, and the CPU
targets' forms with the weights constant (a prefill's tokens grouped by
expert, mnemo-group-experts, whose products are mnemo.linear ops, run
plain and as the register-tiled GEMM; a decode row token by token,
experts-along-outputs)."""

import numpy as np

from mnemo_numerics import Case, rng, run_cases


def experts_ref(x, gate, up, down, idx, w, limit=None):
    b, s, h = x.shape
    out = np.zeros((b, s, h))
    for bi in range(b):
        for si in range(s):
            for j, e in enumerate(idx[bi, si]):
                if not 0 <= e < gate.shape[0]:
                    continue
                xv = x[bi, si].astype(np.float64)
                g = gate[e].astype(np.float64) @ xv
                u = up[e].astype(np.float64) @ xv
                if limit:  # the clamped SwiGLU (DeepSeek-V4)
                    g, u = np.minimum(g, limit), np.clip(u, -limit, limit)
                a = g / (1.0 + np.exp(-g)) * u
                out[bi, si] += w[bi, si, j] * (down[e].astype(np.float64) @ a)
    return out


def cases():
    r = rng(61)
    b, s, h, e, inter, k = 2, 5, 13, 6, 7, 3
    x = r.standard_normal((b, s, h)).astype(np.float32)
    gate = (0.3 * r.standard_normal((e, inter, h))).astype(np.float32)
    up = (0.3 * r.standard_normal((e, inter, h))).astype(np.float32)
    down = (0.3 * r.standard_normal((e, h, inter))).astype(np.float32)
    idx = np.stack([np.stack([r.choice(e, k, replace=False) for _ in range(s)])
                    for _ in range(b)]).astype(np.int64)
    w = r.random((b, s, k)).astype(np.float32)
    skipped = idx.copy()
    skipped[0, 2, 1] = -1
    skipped[1, 4, 0] = e
    xl = r.standard_normal((2, 55, h)).astype(np.float32)
    idxl = np.stack([np.stack([r.choice([0, 0, 0, 1, 3, 4, 5], k, replace=False)
                               for _ in range(55)]) for _ in range(2)]).astype(np.int64)
    idxl[1, 7, 2] = -3
    wl = r.random((2, 55, k)).astype(np.float32)
    body = ("%result = mnemo.experts %x, %g, %u, %d, %i, %w : {T:x}, {T:g}, "
            "{T:u}, {T:d}, {T:i}, {T:w} -> {R}")
    half = {n: a.astype(np.float16) for n, a in (("g", gate), ("u", up), ("d", down))}
    return [
        Case("b2 s5 h13 e6 i7 k3", body,
             {"x": x, "g": gate, "u": up, "d": down, "i": idx, "w": w},
             experts_ref(x, gate, up, down, idx, w), atol=2e-5,
             dynamic={"x": [0, 1], "i": [0, 1], "w": [0, 1]}, result_dynamic=[0, 1]),
        Case("skipped indices, i32", body,
             {"x": x, "g": gate, "u": up, "d": down, "i": skipped.astype(np.int32), "w": w},
             experts_ref(x, gate, up, down, skipped, w), atol=2e-5),
        Case("limit 0.25 (clamped SwiGLU)",
             body.replace("%w :", "%w limit(2.5e-01) :"),
             {"x": x, "g": gate, "u": up, "d": down, "i": idx, "w": w},
             experts_ref(x, gate, up, down, idx, w, limit=0.25), atol=2e-5),
        Case("f16 weights", body,
             {"x": x, "g": half["g"], "u": half["u"], "d": half["d"], "i": idx, "w": w},
             experts_ref(x, half["g"], half["u"], half["d"], idx, w), atol=2e-5),
        # 330 pairs: the GEMM form's sort over two chunks of 256; one
        # expert takes most of them (several blocks), one none.
        Case("b2 s55 k3, skewed", body,
             {"x": xl, "g": gate, "u": up, "d": down, "i": idxl, "w": wl},
             experts_ref(xl, gate, up, down, idxl, wl), atol=2e-5,
             dynamic={"x": [1], "i": [1], "w": [1]}, result_dynamic=[1]),
        # Two pairs, fewer than the experts: the GEMM form's blocks bound
        # by the pairs (ceil(P / A) + min(P, E + 1)).
        Case("two pairs", body,
             {"x": x[:1, :2], "g": gate, "u": up, "d": down, "i": idx[:1, :2, :1],
              "w": w[:1, :2, :1]},
             experts_ref(x[:1, :2], gate, up, down, idx[:1, :2, :1], w[:1, :2, :1]),
             atol=2e-5),
        # One token per sequence (a decode step), an expert two rows share.
        Case("decode rows, shared expert", body,
             {"x": x[:, :1], "g": gate, "u": up, "d": down,
              "i": skipped[:, 2:3], "w": w[:, :1]},
             experts_ref(x[:, :1], gate, up, down, skipped[:, 2:3], w[:, :1]),
             atol=2e-5, dynamic={"x": [0], "i": [0], "w": [0]},
             result_dynamic=[0]),
    ]


run_cases("experts", cases())
CPU = "canonicalize,mnemo-group-experts,"
LOWER = "convert-mnemo-to-linalg{experts-along-outputs=true}"
run_cases("experts, CPU forms", cases(), passes=CPU + LOWER)
run_cases("experts, CPU forms and GEMM kernel", cases(),
          passes=CPU + "func.func(mnemo-cpu-linear-kernel{lanes=8 vectors=2 "
                       "rows=6})," + LOWER)
# The GPU targets' form (blocks of 4 rows here): the parallel sort and the
# mnemo.grouped_linear products, through their reference lowering.
run_cases("experts, GEMM form", cases(),
          passes="canonicalize,mnemo-group-experts{group-rows=4}," + LOWER)


def grouped_linear_cases():
    """mnemo.grouped_linear alone: 11 rows in blocks of 4 (the last one
    short), a block naming no group (-1) and one past the groups (3)."""
    r = rng(62)
    x = r.standard_normal((11, 9)).astype(np.float32)
    w = (0.5 * r.standard_normal((3, 5, 9))).astype(np.float32)
    g = np.array([2, -1, 3], np.int32)
    exp = np.zeros((11, 5))
    for row in range(11):
        e = g[row // 4]
        if 0 <= e < 3:
            exp[row] = w[e].astype(np.float64) @ x[row].astype(np.float64)
    body = ("%result = mnemo.grouped_linear %x, %w groups(%g) rows(4) : "
            "{T:x}, {T:w}, {T:g} -> {R}")
    half = w.astype(np.float16)
    exph = np.zeros((11, 5))
    for row in range(11):
        e = g[row // 4]
        if 0 <= e < 3:
            exph[row] = half[e].astype(np.float64) @ x[row].astype(np.float64)
    return [
        Case("r11 k9 n5, blocks of 4", body, {"x": x, "w": w, "g": g}, exp,
             atol=1e-5, dynamic={"x": [0], "g": [0]}, result_dynamic=[0]),
        Case("f16 weights, i64 groups", body,
             {"x": x, "w": half, "g": g.astype(np.int64)}, exph, atol=1e-5),
    ]


run_cases("grouped_linear", grouped_linear_cases())

# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: masked paged attention: 3 of 3 cases passed
# CHECK: kv cache gather: 2 of 2 cases passed
# CHECK: attention over a gathered past: 2 of 2 cases passed
# CHECK: attention over the pages: 2 of 2 cases passed
"""A paged cache read as an ONNX decoder's past, against numpy, on shapes
that are no tile or page multiples: mnemo.paged_attention with an additive
mask (batch-wide and per head, with causality, -inf and finite entries,
lengths below the table's capacity); mnemo.kv_cache_gather (right-aligned,
zeros before, a sequence with no tokens); and a decode step written as the
exports write it, attention over concat(gathered past, new token) with the
graph's own mask, both as it is (the gather a generic) and rewritten into a
paged attention over the pools the writes return
(mnemo-attend-over-pages{paged-attention=true}): the rewrite must give the
graph's numbers."""

import numpy as np

from mnemo_numerics import Case, rng, run_cases

NEG_INF = -np.inf


def attention_ref(q, k, v, mask, scale):
    """q [B, Hq, S, d], k/v [B, Hkv, T, d], mask broadcast to [B, Hq, S, T]."""
    group = q.shape[1] // k.shape[1]
    k = np.repeat(k, group, axis=1).astype(np.float64)
    v = np.repeat(v, group, axis=1).astype(np.float64)
    s = scale * np.einsum("bhsd,bhtd->bhst", q.astype(np.float64), k) + mask
    m = s.max(-1, keepdims=True)
    p = np.where(np.isfinite(s), np.exp(s - np.where(np.isfinite(m), m, 0)), 0)
    den = p.sum(-1, keepdims=True)
    return np.where(den > 0, np.einsum("bhst,bhtd->bhsd", p, v) / np.where(den > 0, den, 1), 0)


def contiguous(pool, table, b):
    """Sequence b's pages as [Hkv, MaxPages * P, d]."""
    rows = pool[table[b]]
    return rows.transpose(1, 0, 2, 3).reshape(pool.shape[1], -1, pool.shape[3])


def masked_cases():
    r = rng(71)
    b, hq, hkv, s, d, page, pages = 2, 4, 2, 2, 8, 4, 7
    cap = 3 * page
    q = r.standard_normal((b, hq, s, d)).astype(np.float32)
    kp = r.standard_normal((pages, hkv, page, d)).astype(np.float32)
    vp = r.standard_normal((pages, hkv, page, d)).astype(np.float32)
    table = np.array([[4, 0, 6], [2, 5, 1]], dtype=np.int32)
    lens = np.array([10, 7], dtype=np.int64)
    pos = np.array([[8, 9], [5, -1]], dtype=np.int64)
    k = np.stack([contiguous(kp, table, i) for i in range(b)])
    v = np.stack([contiguous(vp, table, i) for i in range(b)])
    t = np.arange(cap)
    seen = (t[None, None, :] < lens[:, None, None]) & (pos[:, :, None] >= 0)
    causal = seen & (t[None, None, :] <= pos[:, :, None])

    def case(name, mask, visible, attrs):
        built = np.where(visible, 0.0, NEG_INF)[:, None]
        expected = attention_ref(q, k, v, built + mask, 0.35)
        body = ("%result = mnemo.paged_attention %q, %kp, %vp table %t lengths %l "
                f"positions %p{attrs} scale(0.35) mask(%m : {{T:m}}) : {{T:q}}, {{T:kp}}, "
                "{T:vp}, {T:t}, {T:l}, {T:p} -> {R}")
        inputs = {"q": q, "kp": kp, "vp": vp, "t": table, "l": lens, "p": pos, "m": mask}
        # A dim of 1 broadcasts when the type says so (static).
        mdyn = [i for i in (0, 3) if mask.shape[i] != 1]
        return Case(name, body, inputs, expected, atol=2e-5,
                    dynamic={"q": [0], "t": [0, 1], "l": [0], "p": [0], "m": mdyn},
                    result_dynamic=[0])

    shared = r.standard_normal((b, 1, s, cap)).astype(np.float32)
    shared[0, 0, 1, 3] = NEG_INF
    shared[1, 0, 0, :4] = NEG_INF
    heads = r.standard_normal((1, hq, s, cap)).astype(np.float32)
    heads[0, 2, 0, 5] = NEG_INF
    return [case("[B, 1, Sq, T] mask", shared, seen, ""),
            case("[1, Hq, Sq, T] mask, causal", heads, causal, " causal"),
            case("f32's lowest masks a row's keys", np.where(
                t[None, None, None, :] < 6, np.float32(np.finfo(np.float32).min),
                np.float32(0)).astype(np.float32) + np.zeros((b, 1, s, 1), np.float32),
                seen, "")]


def step_inputs(seed):
    r = rng(seed)
    b, hq, hkv, d, page, pages = 3, 4, 2, 8, 4, 10
    cap = 3 * page
    q = r.standard_normal((b, hq, 1, d)).astype(np.float32)
    knew = r.standard_normal((b, hkv, 1, d)).astype(np.float32)
    vnew = r.standard_normal((b, hkv, 1, d)).astype(np.float32)
    kp = r.standard_normal((pages, hkv, page, d)).astype(np.float32)
    vp = r.standard_normal((pages, hkv, page, d)).astype(np.float32)
    table = np.array([[3, 7, 0], [9, 1, 4], [5, 8, 2]], dtype=np.int32)
    cached = np.array([5, 11, 0], dtype=np.int64)
    return dict(q=q, knew=knew, vnew=vnew, kp=kp, vp=vp, t=table, l=cached,
                p=cached[:, None].copy()), cap


def right_aligned(pool, table, cached, tokens):
    b = table.shape[0]
    out = np.zeros((b, pool.shape[1], tokens, pool.shape[3]), np.float32)
    for i in range(b):
        n = int(cached[i])
        if n:
            out[i, :, tokens - n:] = contiguous(pool, table, i)[:, :n]
    return out


def gather_cases():
    x, cap = step_inputs(73)
    cases = []
    for tokens in (cap, 13):
        body = (f"%n = arith.constant {tokens} : index\n"
                "%result = mnemo.kv_cache_gather %kp table %t lengths %l tokens %n "
                ": {T:kp}, {T:t}, {T:l} -> {R}")
        cases.append(Case(f"T {tokens}", body, {"kp": x["kp"], "t": x["t"], "l": x["l"]},
                          right_aligned(x["kp"], x["t"], x["l"], tokens),
                          dynamic={"t": [0, 1], "l": [0]}, result_dynamic=[0, 2]))
    return cases


def step_cases():
    """A decode step as an export computes it: past [B, Hkv, T, d] gathered
    right-aligned, concat with the new token, the graph's mask [B, 1, 1,
    T + 1] (left padding -inf, a finite bias on the seen keys so that a
    shifted column shows), the new keys written into the pools."""
    cases = []
    for seed, heads in ((75, 1), (77, 4)):
        x, cap = step_inputs(seed)
        r = rng(seed + 1)
        b = x["q"].shape[0]
        cached = x["l"]
        j = np.arange(cap + 1)
        visible = (j[None, :] >= cap - cached[:, None])  # the past and the new token
        mask = r.standard_normal((b, heads, 1, cap + 1)).astype(np.float32)
        mask = np.where(visible[:, None, None, :], mask, NEG_INF).astype(np.float32)
        k = np.concatenate([right_aligned(x["kp"], x["t"], cached, cap), x["knew"]], 2)
        v = np.concatenate([right_aligned(x["vp"], x["t"], cached, cap), x["vnew"]], 2)
        expected = attention_ref(x["q"], k, v, mask, 0.4)
        body = f"""
%c0 = arith.constant 0 : index
%c1 = arith.constant 1 : index
%ps = arith.constant 4 : index
%b = tensor.dim %t, %c0 : {{T:t}}
%w = tensor.dim %t, %c1 : {{T:t}}
%n = arith.muli %w, %ps : index
%kpast = mnemo.kv_cache_gather %kp table %t lengths %l tokens %n : {{T:kp}}, {{T:t}}, {{T:l}} -> tensor<?x2x?x8xf32>
%vpast = mnemo.kv_cache_gather %vp table %t lengths %l tokens %n : {{T:vp}}, {{T:t}}, {{T:l}} -> tensor<?x2x?x8xf32>
%all = arith.addi %n, %c1 : index
%e = tensor.empty(%b, %all) : tensor<?x2x?x8xf32>
%k0 = tensor.insert_slice %kpast into %e[0, 0, 0, 0] [%b, 2, %n, 8] [1, 1, 1, 1] : tensor<?x2x?x8xf32> into tensor<?x2x?x8xf32>
%k = tensor.insert_slice %knew into %k0[0, 0, %n, 0] [%b, 2, 1, 8] [1, 1, 1, 1] : {{T:knew}} into tensor<?x2x?x8xf32>
%v0 = tensor.insert_slice %vpast into %e[0, 0, 0, 0] [%b, 2, %n, 8] [1, 1, 1, 1] : tensor<?x2x?x8xf32> into tensor<?x2x?x8xf32>
%v = tensor.insert_slice %vnew into %v0[0, 0, %n, 0] [%b, 2, 1, 8] [1, 1, 1, 1] : {{T:vnew}} into tensor<?x2x?x8xf32>
%result = mnemo.attention %q, %k, %v scale(0.4) mask(%m : {{T:m}}) : {{T:q}}, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> {{R}}
%kw = mnemo.kv_cache_write %knew into %kp at %p table %t : {{T:knew}}, {{T:kp}}, {{T:p}}, {{T:t}} -> {{T:kp}}
%vw = mnemo.kv_cache_write %vnew into %vp at %p table %t : {{T:vnew}}, {{T:vp}}, {{T:p}}, {{T:t}} -> {{T:vp}}
"""
        inputs = dict(x, m=mask)
        cases.append(Case(f"mask with {heads} head(s)", body, inputs, expected, atol=2e-5,
                          dynamic={"q": [0], "knew": [0], "vnew": [0], "t": [0, 1],
                                   "l": [0], "p": [0], "m": [0, 3]},
                          result_dynamic=[0]))
    return cases


run_cases("masked paged attention", masked_cases(),
          passes="func.func(mnemo-decompose-paged-cache)")
run_cases("kv cache gather", gather_cases(), passes="mnemo-attend-over-pages")
run_cases("attention over a gathered past", step_cases(),
          passes="mnemo-attend-over-pages")
run_cases("attention over the pages", step_cases(),
          passes="mnemo-attend-over-pages{paged-attention=true},"
                 "func.func(mnemo-decompose-paged-cache)")

# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: lightning indexer: [[N:[0-9]+]] of [[N]] cases passed
# CHECK: top-k: [[M:[0-9]+]] of [[M]] cases passed
# CHECK: indexer top-k: [[J:[0-9]+]] of [[J]] cases passed
# CHECK: indexer top-k, chunks of 2 rows: [[J]] of [[J]] cases passed
# CHECK: indexer top-k, chunks of 1 row: [[J]] of [[J]] cases passed
# CHECK: sparse attention: [[P:[0-9]+]] of [[P]] cases passed
# CHECK: paged sparse attention: 2 of 2 cases passed
# CHECK: sparse mla reference: [[Q:[0-9]+]] of [[Q]] cases passed
# CHECK: sparse mla expanded: [[Q]] of [[Q]] cases passed
# CHECK: sparse mla absorbed: [[Q]] of [[Q]] cases passed
"""DeepSeek sparse attention's ops against independent numpy models on
shapes that are no tile multiples: mnemo.lightning_indexer (causal, at given
positions, with lengths and a padding query), mnemo.top_k (both tie orders
on tie-heavy rows, lengths, -inf entries, the heap-select path, introselect's depth-limit fallback, k past the
row), mnemo.sparse_attention (GQA, skipped and out-of-range indices, a row
without keys) and mnemo.mla_attention with indices through both forms."""

import numpy as np

from mnemo_numerics import Case, rng, run_cases
from topk_reference import adversarial_row, heap_fallbacks, top_k

NEG_INF = -np.inf


def indexer_ref(q, k, w, scale, positions=None, lengths=None):
    b, s, h, d = q.shape
    t = k.shape[1]
    dot = np.einsum("bshd,btd->bsht", q.astype(np.float64), k.astype(np.float64))
    score = np.einsum("bsh,bsht->bst", w.astype(np.float64),
                      np.maximum(scale * dot, 0.0))
    pos = positions if positions is not None else np.broadcast_to(np.arange(s), (b, s))
    for bi in range(b):
        for si in range(s):
            for ti in range(t):
                if ti > pos[bi, si] or (lengths is not None and ti >= lengths[bi]):
                    score[bi, si, ti] = NEG_INF
    return score


def indexer_inputs(seed):
    """Queries, keys, weights (2 sequences of 7 queries, 3 heads of 5, 9
    keys), positions with a padding query, lengths, and the keys cut to 7."""
    r = rng(seed)
    b, s, h, d, t = 2, 7, 3, 5, 9
    q = r.standard_normal((b, s, h, d)).astype(np.float32)
    k = r.standard_normal((b, t, d)).astype(np.float32)
    w = r.standard_normal((b, s, h)).astype(np.float32)
    pos = np.array([[2, 3, 4, 5, 6, 7, 8], [-1, 0, 1, 2, 3, 4, 5]], np.int64)
    lens = np.array([9, 6], np.int64)
    return q, k, w, pos, lens, k[:, :s]


def indexer_cases():
    q, k, w, pos, lens, ks = indexer_inputs(31)
    b, s, h, d = q.shape
    t = k.shape[1]
    cases = [
        Case("causal S7 T7 default scale",
             "%result = mnemo.lightning_indexer %q, %k, %w causal : "
             "{T:q}, {T:k}, {T:w} -> {R}",
             {"q": q, "k": ks, "w": w}, indexer_ref(q, ks, w, d ** -0.5),
             atol=2e-5, dynamic={"q": [1], "k": [1], "w": [1]},
             result_dynamic=[1, 2]),
        Case("positions lengths scale 0.3",
             "%result = mnemo.lightning_indexer %q, %k, %w positions(%p : {T:p})"
             " lengths(%l : {T:l}) causal scale(0.3) : {T:q}, {T:k}, {T:w} -> {R}",
             {"q": q, "k": k, "w": w, "p": pos, "l": lens},
             indexer_ref(q, k, w, 0.3, pos, lens), atol=2e-5,
             dynamic={"q": [0, 1], "k": [0, 1], "w": [0, 1], "p": [0, 1], "l": [0]},
             result_dynamic=[0, 1, 2]),
        Case("no mask",
             "%result = mnemo.lightning_indexer %q, %k, %w : {T:q}, {T:k}, {T:w} -> {R}",
             {"q": q, "k": k, "w": w}, indexer_ref(q, k, w, d ** -0.5,
                                                  np.full((b, s), t, np.int64)),
             atol=2e-5),
    ]
    return cases


def indexer_topk_cases():
    """top_k(lightning_indexer(...)): the pair mnemo-chunk-indexer-top-k cuts
    into chunks of query rows (scores with ReLU zeros that tie, masked
    keys, padding rows, positions given or the row index)."""
    q, k, w, pos, lens, ks = indexer_inputs(37)
    d = q.shape[3]
    cases = []
    for ties in ("introselect", "lowest_index"):
        scores = indexer_ref(q, k, w, 0.3, pos, lens).astype(np.float32)
        cases.append(Case(
            f"positions lengths {ties} k4",
            "%scores = mnemo.lightning_indexer %q, %k, %w positions(%p : {T:p})"
            " lengths(%l : {T:l}) causal scale(0.3) : {T:q}, {T:k}, {T:w}"
            " -> tensor<?x?x?xf32>\n"
            f"%result = mnemo.top_k %scores lengths(%l : {{T:l}}) k(4) ties({ties})"
            " : tensor<?x?x?xf32> -> {R}",
            {"q": q, "k": k, "w": w, "p": pos, "l": lens},
            top_k(scores, 4, ties, lens), dtype=np.int64, atol=0,
            dynamic={"q": [0, 1], "k": [0, 1], "w": [0, 1], "p": [0, 1],
                     "l": [0]},
            result_dynamic=[0, 1]))
    scores = indexer_ref(q, ks, w, d ** -0.5).astype(np.float32)
    cases.append(Case(
        "row positions k3",
        "%scores = mnemo.lightning_indexer %q, %k, %w causal"
        " : {T:q}, {T:k}, {T:w} -> tensor<?x?x?xf32>\n"
        "%result = mnemo.top_k %scores k(3) ties(introselect)"
        " : tensor<?x?x?xf32> -> {R}",
        {"q": q, "k": ks, "w": w}, top_k(scores, 3, "introselect"),
        dtype=np.int64, atol=0, dynamic={"q": [1], "k": [1], "w": [1]},
        result_dynamic=[1]))
    return cases


def tie_scores(r, shape):
    """Scores with many equal values: ReLU zeros, small integers, -inf."""
    choice = r.integers(0, 10, shape)
    vals = np.where(choice < 4, 0.0,
                    np.where(choice < 6, NEG_INF, r.integers(-3, 4, shape)))
    return vals.astype(np.float32)


def topk_cases():
    r = rng(47)
    cases = []
    for ties in ("lowest_index", "introselect"):
        a = tie_scores(r, (2, 3, 37))
        lens = np.array([37, 20], np.int64)
        cases.append(Case(
            f"{ties} 2x3x37 k5", f"%result = mnemo.top_k %s k(5) ties({ties}) : {{T:s}} -> {{R}}",
            {"s": a}, top_k(a, 5, ties), dtype=np.int64, atol=0,
            dynamic={"s": [1, 2]}, result_dynamic=[1]))
        cases.append(Case(
            f"{ties} lengths 37/20 k6",
            f"%result = mnemo.top_k %s lengths(%l : {{T:l}}) k(6) ties({ties}) : {{T:s}} -> {{R}}",
            {"s": a, "l": lens}, top_k(a, 6, ties, lens), dtype=np.int64, atol=0,
            dynamic={"s": [0, 2]}, result_dynamic=[0]))
        h = tie_scores(r, (1, 4, 300))
        cases.append(Case(
            f"{ties} heap path 1x4x300 k3",
            f"%result = mnemo.top_k %s k(3) ties({ties}) : {{T:s}} -> {{R}}",
            {"s": h}, top_k(h, 3, ties), dtype=np.int64, atol=0))
        wide = tie_scores(r, (1, 2, 9))
        cases.append(Case(
            f"{ties} k past the row 1x2x9 k12",
            f"%result = mnemo.top_k %s k(12) ties({ties}) : {{T:s}} -> {{R}}",
            {"s": wide}, top_k(wide, 12, ties), dtype=np.int64, atol=0))
        dist = r.standard_normal((2, 5, 83)).astype(np.float32)
        cases.append(Case(
            f"{ties} distinct 2x5x83 k8",
            f"%result = mnemo.top_k %s k(8) ties({ties}) : {{T:s}} -> {{R}}",
            {"s": dist}, top_k(dist, 8, ties), dtype=np.int64, atol=0))
    # Rows on which introselect exhausts its partition rounds and falls back
    # to the heap select (checked here, so the case keeps testing that path).
    for n, k in ((100, 50), (90, 89)):
        row = adversarial_row(n, k)
        assert heap_fallbacks(row, k) == 1, (n, k)
        a = row.reshape(1, 1, n)
        cases.append(Case(
            f"introselect depth-limit fallback n{n} k{k}",
            f"%result = mnemo.top_k %s k({k}) ties(introselect) : {{T:s}} -> {{R}}",
            {"s": a}, top_k(a, k, "introselect"), dtype=np.int64, atol=0))
    return cases


def sparse_ref(q, k, v, idx, scale, sink=None):
    b, hq, s, d = q.shape
    hkv, t = k.shape[1], k.shape[2]
    g = hq // hkv
    out = np.zeros((b, hq, s, v.shape[3]))
    for bi in range(b):
        for h in range(hq):
            for i in range(s):
                keys = [j for j in idx[bi, i] if 0 <= j < t]
                if not keys:
                    continue
                sc = np.array([scale * np.dot(q[bi, h, i], k[bi, h // g, j]) for j in keys])
                m = sc.max() if sink is None else max(sc.max(), sink[h])
                p = np.exp(sc - m)
                p /= p.sum() + (0.0 if sink is None else np.exp(sink[h] - m))
                out[bi, h, i] = sum(pj * v[bi, h // g, j] for pj, j in zip(p, keys))
    return out


def sparse_cases():
    r = rng(53)
    b, hq, hkv, s, t, d, dv, kk = 2, 6, 2, 5, 11, 7, 3, 4
    q = r.standard_normal((b, hq, s, d)).astype(np.float32)
    k = r.standard_normal((b, hkv, t, d)).astype(np.float32)
    v = r.standard_normal((b, hkv, t, dv)).astype(np.float32)
    idx = r.integers(0, t, (b, s, kk)).astype(np.int64)
    idx[0, 1, 2] = -1
    idx[1, 3, 0] = 11      # out of range: skipped
    idx[1, 2, :] = -1      # no key: zeros
    idx[0, 4, :] = [3, 3, 5, -1]  # a key listed twice counts twice
    mqa_k, mqa_v = k[:, :1], v[:, :1]
    sink = r.standard_normal(hq).astype(np.float32)
    sink[2] = 4.0
    return [
        Case("gqa 6/2 default scale",
             "%result = mnemo.sparse_attention %q, %k, %v, %i : "
             "{T:q}, {T:k}, {T:v}, {T:i} -> {R}",
             {"q": q, "k": k, "v": v, "i": idx}, sparse_ref(q, k, v, idx, d ** -0.5),
             atol=2e-5, dynamic={"q": [0, 2], "k": [0, 2], "v": [0, 2], "i": [0, 1]},
             result_dynamic=[0, 2]),
        Case("mqa i32 indices scale 0.25",
             "%result = mnemo.sparse_attention %q, %k, %v, %i scale(0.25) : "
             "{T:q}, {T:k}, {T:v}, {T:i} -> {R}",
             {"q": q, "k": mqa_k, "v": mqa_v, "i": idx.astype(np.int32)},
             sparse_ref(q, mqa_k, mqa_v, idx, 0.25), atol=2e-5),
        # A sink per head (one large enough to take most of the mass): it
        # joins each row's denominator only; the row without keys stays 0.
        Case("gqa 6/2 sink",
             "%result = mnemo.sparse_attention %q, %k, %v, %i sink(%sk : {T:sk}) : "
             "{T:q}, {T:k}, {T:v}, {T:i} -> {R}",
             {"q": q, "k": k, "v": v, "i": idx, "sk": sink},
             sparse_ref(q, k, v, idx, d ** -0.5, sink), atol=2e-5,
             dynamic={"q": [0, 2], "k": [0, 2], "v": [0, 2], "i": [0, 1]},
             result_dynamic=[0, 2]),
    ]


def paged_sparse_cases():
    """mnemo.paged_attention with indices: pages of 4 named by a shuffled
    block table, lengths below the table's capacity (entries at or past
    them skipped, as negative ones), a duplicate, a padding query (zeros);
    the values as their own pool and as the key pool's leading features."""
    r = rng(61)
    b, hq, hkv, s, d, dv, kk, page, pages = 2, 6, 2, 3, 8, 5, 6, 4, 9
    q = r.standard_normal((b, hq, s, d)).astype(np.float32)
    kp = r.standard_normal((pages, hkv, page, d)).astype(np.float32)
    vp = r.standard_normal((pages, hkv, page, dv)).astype(np.float32)
    table = np.array([[5, 1, 7, 2], [0, 8, 3, 6]], dtype=np.int32)
    lens = np.array([14, 9], dtype=np.int64)
    pos = np.array([[11, 12, 13], [6, 7, -1]], dtype=np.int64)
    idx = r.integers(0, 16, (b, s, kk)).astype(np.int64)
    idx[0, 0, :2] = [-1, 13]
    idx[1, 1, :] = [2, 2, 8, 9, 15, -3]

    def gathered(pool, bi):
        rows = pool[table[bi]]  # [pages, Hkv, P, d]
        return rows.transpose(1, 0, 2, 3).reshape(hkv, -1, pool.shape[3])

    def expected(values_of):
        k = np.stack([gathered(kp, bi) for bi in range(b)])
        v = np.stack([gathered(values_of, bi) for bi in range(b)])
        named = idx.copy()
        for bi in range(b):
            named[bi][(named[bi] >= lens[bi])] = -1
            named[bi][pos[bi] < 0] = -1
        return sparse_ref(q, k, v, named, 0.3)

    body = ("%result = mnemo.paged_attention %q, %kp, {values} table %t lengths %l "
            "positions %p scale(0.3) indices(%i : {{T:i}}) : {{T:q}}, {{T:kp}}, {vt}, "
            "{{T:t}}, {{T:l}}, {{T:p}} -> {{R}}")
    lead = f"tensor<{pages}x{hkv}x{page}x{dv}xf32>"
    inputs = {"q": q, "kp": kp, "vp": vp, "t": table, "l": lens, "p": pos, "i": idx}
    shared = {k: v for k, v in inputs.items() if k != "vp"}
    return [
        Case("gqa 6/2 pages of 4", body.format(values="%vp", vt="{T:vp}"), inputs,
             expected(vp), atol=2e-5, dynamic={"q": [0, 2], "i": [0, 1], "p": [0, 1]},
             result_dynamic=[0, 2]),
        Case("values in the keys",
             f"%vs = tensor.extract_slice %kp[0, 0, 0, 0] [{pages}, {hkv}, {page}, {dv}] "
             f"[1, 1, 1, 1] : {{T:kp}} to {lead}\n"
             + body.format(values="%vs", vt=lead), shared,
             expected(kp[..., :dv]), atol=2e-5),
    ]


def mla_sparse_cases():
    r = rng(59)
    b, h, s, t, dn, dr, rank, dv, kk = 2, 3, 5, 9, 6, 4, 7, 5, 3
    qn = r.standard_normal((b, h, s, dn)).astype(np.float32)
    qp = r.standard_normal((b, h, s, dr)).astype(np.float32)
    c = r.standard_normal((b, t, rank)).astype(np.float32)
    kp = r.standard_normal((b, t, dr)).astype(np.float32)
    wk = (0.4 * r.standard_normal((h, dn, rank))).astype(np.float32)
    wv = (0.4 * r.standard_normal((h, dv, rank))).astype(np.float32)
    idx = np.stack([np.stack([r.choice(t, kk, replace=False) for _ in range(s)])
                    for _ in range(b)]).astype(np.int64)
    idx[1, 0, 1] = -1
    kn = np.einsum("btc,hec->bhte", c, wk)
    vv = np.einsum("btc,hec->bhte", c, wv)
    qf = np.concatenate([qn, qp], -1)
    kf = np.concatenate([kn, np.broadcast_to(kp[:, None], (b, h, t, dr))], -1)
    scale = (dn + dr) ** -0.5
    return [Case(
        "h3 s5 t9 k3",
        "%result = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv "
        "indices(%i : {T:i}) : {T:qn}, {T:qp}, {T:c}, {T:kp}, {T:wk}, {T:wv} -> {R}",
        {"qn": qn, "qp": qp, "c": c, "kp": kp, "wk": wk, "wv": wv, "i": idx},
        sparse_ref(qf, kf, vv, idx, scale), atol=3e-5,
        dynamic={"qn": [2], "qp": [2], "c": [1], "kp": [1], "i": [1]},
        result_dynamic=[2])]


run_cases("lightning indexer", indexer_cases())
run_cases("top-k", topk_cases())
run_cases("indexer top-k", indexer_topk_cases())
run_cases("indexer top-k, chunks of 2 rows", indexer_topk_cases(),
          passes="mnemo-chunk-indexer-top-k{head-rows=6}")
run_cases("indexer top-k, chunks of 1 row", indexer_topk_cases(),
          passes="mnemo-chunk-indexer-top-k{head-rows=1}")
run_cases("sparse attention", sparse_cases())
run_cases("paged sparse attention", paged_sparse_cases(),
          passes="func.func(mnemo-decompose-paged-cache)")
run_cases("sparse mla reference", mla_sparse_cases())
for form in ("expanded", "absorbed"):
    run_cases(f"sparse mla {form}", mla_sparse_cases(),
              passes=f"mnemo-decompose-mla{{form={form}}}")

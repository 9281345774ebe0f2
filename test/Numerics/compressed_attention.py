# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: compressed attention: [[N:[0-9]+]] of [[N]] cases passed
# CHECK: compressed attention, chunks of 5: [[N]] of [[N]] cases passed
# CHECK: compressed attention, selected keys: [[N]] of [[N]] cases passed
# CHECK: compressed attention, chunks of 16, tiled q3/kv5: [[N]] of [[N]] cases passed
"""mnemo.compressed_attention (DeepSeek-V4's attention over a window of raw
keys and compressed entries) against an independent numpy model, on shapes
that are no tile multiples: HCA (every closed entry), CSA (listed entries,
-1, out-of-range and repeated indices), GQA, a padding query, a query that
sees nothing, a scale, no sink, raw keys that start later (raw_start: a
generation step's window), and decode rows (one static query row: the
listed entries gathered rather than masked). The same cases run through
mnemo-decompose-compressed-attention's query chunks (each chunk over the raw
keys its windows reach; with indices, each query over its own window and
listings), alone and tiled, at chunk sizes that divide none of the
lengths."""

import numpy as np

from mnemo_numerics import Case, rng, run_cases


def reference(q, raw, entries, positions, window, rate, indices=None,
              sink=None, scale=None, raw_start=None):
    b, h, s, d = q.shape
    hkv, r, t = raw.shape[1], raw.shape[2], entries.shape[2]
    scale = d ** -0.5 if scale is None else scale
    out = np.zeros((b, h, s, d))
    for bi in range(b):
        for hi in range(h):
            keys = np.concatenate([raw[bi, hi // (h // hkv)],
                                   entries[bi, hi // (h // hkv)]]).astype(np.float64)
            for si in range(s):
                p = positions[bi, si]
                seen = np.zeros(r + t, bool)
                if p >= 0:
                    j = np.arange(r) + (0 if raw_start is None
                                        else raw_start[bi])
                    seen[:r] = (j <= p) & (p - j < window)
                    w = np.arange(t)
                    ok = w < (p + 1) // rate
                    if indices is not None:
                        listed = np.zeros(t, bool)
                        for x in indices[bi, si]:
                            if 0 <= x < t:
                                listed[x] = True
                        ok &= listed
                    seen[r:] = ok
                logits = scale * keys @ q[bi, hi, si].astype(np.float64)
                logits = np.where(seen, logits, -np.inf)
                extra = [] if sink is None else [float(sink[hi])]
                m = max([logits.max()] + extra)
                if not np.isfinite(m):
                    continue
                e = np.exp(logits - m)
                den = e.sum() + sum(np.exp(x - m) for x in extra)
                out[bi, hi, si] = (e / den) @ keys
    return out


def cases():
    r = rng(41)
    out = []

    def case(name, b, h, hkv, s, rn, t, d, window, rate, positions, indices=None,
             sink=True, scale=None, raw_start=None, static_rows=False, page=None,
             topk=None):
        q = r.standard_normal((b, h, s, d)).astype(np.float32)
        raw = r.standard_normal((b, hkv, rn, d)).astype(np.float32)
        entries = r.standard_normal((b, hkv, t, d)).astype(np.float32)
        sk = r.standard_normal(h).astype(np.float32) if sink else None
        inputs = {"q": q, "raw": raw, "e": entries, "pos": positions.astype(np.int64)}
        attrs = ""
        if raw_start is not None:
            inputs["start"] = raw_start.astype(np.int64)
            attrs += " raw_start(%start : {T:start})"
        pre = ""
        if topk:
            # Listings a mnemo.top_k makes (distinct, as the decomposition
            # knows): the top `topk` of random scores, in ascending order.
            scores = r.standard_normal((b, s, t)).astype(np.float32)
            indices = np.sort(np.argsort(-scores, axis=2)[:, :, :topk], axis=2)
            inputs["sc"] = scores
            itype = f"tensor<{b}x{s}x{topk}xi64>"
            pre = f"%idx = mnemo.top_k %sc k({topk}) : {{T:sc}} -> {itype}\n"
            attrs += f" indices(%idx : {itype})"
        elif indices is not None:
            inputs["idx"] = indices
            attrs += " indices(%idx : {T:idx})"
        if page:
            # Paged entries: sequence b's pages scattered over a pool with
            # a spare page, entry w at row w % P of page table[b, w / P].
            assert t % page == 0
            width = t // page
            order = r.permutation(b * width + 1)
            table = order[:b * width].reshape(b, width).astype(np.int32)
            pool = r.standard_normal((b * width + 1, hkv, page, d)).astype(np.float32)
            for bi in range(b):
                for w in range(t):
                    pool[table[bi, w // page], :, w % page] = entries[bi, :, w]
            inputs["e"] = pool
            inputs["tab"] = table
            attrs += " entry_table(%tab : {T:tab})"
        if sink:
            inputs["sk"] = sk
            attrs += " sink(%sk : {T:sk})"
        attrs += f" window({window}) rate({rate})"
        if scale is not None:
            attrs += f" scale({scale:.17e})"
        body = pre + (f"%result = mnemo.compressed_attention %q, %raw, %e positions(%pos){attrs}"
                " : {T:q}, {T:raw}, {T:e}, {T:pos} -> {R}")
        out.append(Case(name, body, inputs,
                        reference(q, raw, entries, positions, window, rate, indices, sk,
                                  scale, raw_start),
                        atol=2e-5,
                        dynamic={"q": [0] if static_rows else [0, 2], "raw": [0, 2],
                                 "e": [0] if page else [0, 2],
                                 "pos": [0] if static_rows else [0, 1],
                                 "start": [0], "idx": [0], "tab": [0, 1]},
                        result_dynamic=[0] if static_rows else [0, 2]))

    # A forward's layout: queries at 0..S-1 over their own raw keys.
    s = 37
    case("HCA rate 8, window 11", 2, 4, 1, s, s, s // 8, 24, 11, 8,
         np.tile(np.arange(s), (2, 1)))
    # A step's layout: queries at later positions, a padding row (-1), a
    # row at position 0 (no entry closed yet).
    pos = np.array([[40, 41, 42], [0, 57, -1]])
    case("HCA step rows, padding, GQA 6/2", 2, 6, 2, 3, 64, 16, 20, 9, 4, pos)
    # CSA: listed entries with -1, out-of-range, repeated and not-yet-closed
    # indices.
    s = 29
    t = s // 4
    idx = r.integers(-1, t + 2, size=(1, s, 5)).astype(np.int64)
    idx[0, 20, :] = [3, 3, 3, -1, 99]
    case("CSA rate 4, top 5 listed", 1, 3, 1, s, s, t, 16, 7, 4,
         np.arange(s)[None], indices=idx, scale=0.3)
    idx32 = r.integers(-1, 6, size=(2, 5, 3)).astype(np.int32)
    case("CSA step rows, i32 indices, no sink", 2, 2, 1, 5, 48, 12, 12, 16, 4,
         np.array([[23, 24, 25, 26, 27], [3, 4, 5, 30, -1]]), indices=idx32, sink=False)
    # A step over its window's raw keys only: sequence 0's keys start at
    # position 32 (its queries at 40-42 see 33-42 with window 10), sequence
    # 1's at 16 (a padding row); keys before a query's window and after it
    # in the gathered rows are masked.
    case("raw_start, HCA step rows", 2, 4, 1, 3, 24, 10, 16, 10, 4,
         np.array([[40, 41, 42], [30, 31, -1]]), raw_start=np.array([32, 16]))
    idx = r.integers(-1, 12, size=(1, 4, 3)).astype(np.int64)
    case("raw_start, CSA", 1, 2, 1, 4, 13, 12, 8, 7, 4,
         np.array([[45, 46, 47, 48]]), indices=idx, raw_start=np.array([40]))
    # Decode rows (S = 1, static): the listed entries are gathered. Rows
    # with -1, out-of-range (12, 40), repeated (5 twice) and not yet
    # closed (entry 11 at position 30: 31 // 4 = 7 closed) listings, a
    # padding row, and raw keys from raw_start.
    idx = np.array([[[5, -1, 5, 2, 12, 0]], [[11, 6, 40, 1, 3, 3]],
                    [[0, 1, 2, 3, 4, 5]], [[7, 6, 5, 4, 3, 2]]], np.int64)
    case("CSA decode rows, gathered", 4, 4, 2, 1, 20, 12, 16, 8, 4,
         np.array([[47], [30], [-1], [44]]), indices=idx, static_rows=True,
         raw_start=np.array([32, 16, 0, 30]))
    case("CSA decode rows, gathered, i32, no sink", 4, 2, 1, 1, 20, 12, 8, 8, 4,
         np.array([[47], [30], [-1], [44]]), indices=idx.astype(np.int32),
         sink=False, static_rows=True, raw_start=np.array([32, 16, 0, 30]))
    # A window of 1 and no closed entry: the first query sees only itself.
    case("window 1, rate 64", 1, 2, 1, 9, 9, 1, 8, 1, 64, np.arange(9)[None])
    # Longer prompts, several chunks each: a window wider than a chunk, a
    # padded tail inside a chunk, a window wider than the raw keys.
    s = 71
    pos = np.tile(np.arange(s), (2, 1))
    pos[1, 60:] = -1
    case("HCA prompt of 71, window 23, padded tail", 2, 4, 2, s, s, s // 16, 8,
         23, 16, pos)
    idx = r.integers(-1, s // 4 + 1, size=(2, s, 4)).astype(np.int64)
    case("CSA prompt of 71, window 23, padded tail", 2, 2, 1, s, s, s // 4, 8,
         23, 4, pos, indices=idx)
    idx = r.integers(-1, 9, size=(1, 12, 3)).astype(np.int64)
    case("CSA rows, window 40 over 19 raw keys", 1, 2, 1, 12, 19, 9, 8, 40, 4,
         np.arange(24, 36)[None], indices=idx, raw_start=np.array([17]))
    case("HCA rows, window 40 over 19 raw keys", 1, 2, 1, 12, 19, 9, 8, 40, 4,
         np.arange(24, 36)[None], raw_start=np.array([17]))
    # Paged entries (entry_table): decode rows read their listed entries
    # through the table (repeats, -1, out of range, not yet closed); rows
    # of a step and a prompt read the pages whole.
    idx = np.array([[[5, -1, 5, 2, 12, 0]], [[11, 6, 40, 1, 3, 3]],
                    [[0, 1, 2, 3, 4, 5]], [[7, 6, 5, 4, 3, 2]]], np.int64)
    case("CSA decode rows, paged entries", 4, 4, 2, 1, 20, 12, 16, 8, 4,
         np.array([[47], [30], [-1], [44]]), indices=idx, static_rows=True,
         raw_start=np.array([32, 16, 0, 30]), page=4)
    case("HCA step rows, paged entries", 2, 6, 2, 3, 64, 16, 20, 9, 4,
         np.array([[40, 41, 42], [0, 57, -1]]), page=8)
    s = 29
    idx = r.integers(-1, 9, size=(1, s, 5)).astype(np.int64)
    case("CSA prompt, paged entries", 1, 3, 1, s, s, 9, 16, 7, 4,
         np.arange(s)[None], indices=idx, page=3)
    # A prompt's listings from a mnemo.top_k (distinct): the selected form
    # keeps them, over contiguous and over paged entries.
    case("CSA prompt, top-k listings", 2, 2, 1, s, s, 8, 16, 7, 4,
         np.tile(np.arange(s), (2, 1)), topk=3)
    case("CSA prompt, top-k listings, paged entries", 2, 2, 1, s, s, 9, 16, 7, 4,
         np.tile(np.arange(s), (2, 1)), topk=4, page=3)
    return out


CASES = cases()
run_cases("compressed attention", CASES)
run_cases("compressed attention, chunks of 5", CASES,
          passes="mnemo-decompose-compressed-attention{query-chunk=5}")
# Each query's listed keys as one mnemo.sparse_attention (the GPU's form):
# HCA, decode rows (their repeats dropped once), paged entries; a prompt's
# listings that may repeat keep the masked form.
run_cases("compressed attention, selected keys", CASES,
          passes="mnemo-decompose-compressed-attention{selected-group=1}")
run_cases("compressed attention, chunks of 16, tiled q3/kv5", CASES,
          passes="mnemo-decompose-compressed-attention{query-chunk=16},"
                 "func.func(mnemo-tile-attention{block-q=3 block-kv=5 "
                 "group-in-block=true mask-edges-only=true})")

"""An independent Python model of the selections mnemo.top_k reproduces.

`torch_cpu_topk(row, k)` is the set PyTorch's CPU torch.topk returns: the
first k entries after libstdc++'s std::nth_element (introselect), or its
std::partial_sort heap select when 64 k <= n, comparing scores only (NaN
above numbers). Written from the libstdc++ algorithms' definitions and
checked against them on tie-heavy rows; `lowest_index_topk` is the top k
under (score, -index).
"""

import math

import numpy as np


def _before(x, y):
    return (math.isnan(x[0]) and not math.isnan(y[0])) or x[0] > y[0]


def _adjust_heap(q, first, hole, length, value):
    top = child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if _before(q[first + child], q[first + child - 1]):
            child -= 1
        q[first + hole] = q[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        q[first + hole] = q[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and _before(q[first + parent], value):
        q[first + hole] = q[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    q[first + hole] = value


def _heap_select(q, first, middle, last):
    length = middle - first
    if length >= 2:
        for parent in range((length - 2) // 2, -1, -1):
            _adjust_heap(q, first, parent, length, q[first + parent])
    for i in range(middle, last):
        if _before(q[i], q[first]):
            value = q[i]
            q[i] = q[first]
            _adjust_heap(q, first, 0, length, value)


def _nth_element(q, nth):
    first, last = 0, len(q)
    depth = 2 * (len(q).bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(q, first, nth + 1, last)
            q[first], q[nth] = q[nth], q[first]
            return
        depth -= 1
        a, mid, c = first + 1, first + (last - first) // 2, last - 1
        if _before(q[a], q[mid]):
            m = mid if _before(q[mid], q[c]) else (c if _before(q[a], q[c]) else a)
        else:
            m = a if _before(q[a], q[c]) else (c if _before(q[mid], q[c]) else mid)
        q[first], q[m] = q[m], q[first]
        lo, hi, pivot = first + 1, last, q[first]
        while True:
            while _before(q[lo], pivot):
                lo += 1
            hi -= 1
            while _before(pivot, q[hi]):
                hi -= 1
            if lo >= hi:
                break
            q[lo], q[hi] = q[hi], q[lo]
            lo += 1
        if lo <= nth:
            first = lo
        else:
            last = lo
    for i in range(first + 1, last):
        v, j = q[i], i
        if _before(v, q[first]):
            q[first + 1:i + 1] = q[first:i]
            q[first] = v
            continue
        while _before(v, q[j - 1]):
            q[j] = q[j - 1]
            j -= 1
        q[j] = v


def torch_cpu_topk(row, k):
    """Indices (a set, unordered) PyTorch's CPU topk picks from `row`."""
    q = [(float(v), j) for j, v in enumerate(row)]
    k = min(k, len(q))
    if k < len(q):
        if k * 64 <= len(q):
            _heap_select(q, 0, k, len(q))
        else:
            _nth_element(q, k - 1)
    return [j for _, j in q[:k]]


def lowest_index_topk(row, k):
    order = sorted(range(len(row)),
                   key=lambda j: (0 if math.isnan(row[j]) else 1,
                                  -float(row[j]) if not math.isnan(row[j]) else 0,
                                  j))
    return order[:k]


def top_k(scores, k, ties, lengths=None):
    """mnemo.top_k on [B, S, T] scores: ascending indices, -inf never
    selected, -1 fill."""
    b, s, t = scores.shape
    out = np.full((b, s, k), -1, np.int64)
    pick = torch_cpu_topk if ties == "introselect" else lowest_index_topk
    for bi in range(b):
        n = t if lengths is None else max(0, min(int(lengths[bi]), t))
        for si in range(s):
            row = scores[bi, si, :n]
            chosen = sorted(j for j in pick(row, k) if row[j] != -np.inf)
            out[bi, si, :len(chosen)] = chosen
    return out


def adversarial_row(n, k):
    """A row of n distinct scores on which the introselect for the top k
    spends its 2 log2(n) partition rounds and falls back to the heap select
    (McIlroy's adversary: scores are fixed only when the selection first
    compares them, each time against the pivot it is about to use)."""
    gas = float("inf")
    keys = [gas] * n
    state = {"solid": 0, "candidate": None}

    def freeze(i):
        keys[i] = state["solid"]
        state["solid"] += 1

    def before(x, y):
        a, b = x[1], y[1]
        if keys[a] == gas and keys[b] == gas:
            freeze(a if a == state["candidate"] else b)
        if keys[a] == gas:
            state["candidate"] = a
        elif keys[b] == gas:
            state["candidate"] = b
        return keys[a] < keys[b]

    global _before
    saved = _before
    _before = before
    try:
        _nth_element([(0.0, j) for j in range(n)], k - 1)
    finally:
        _before = saved
    for i in range(n):
        if keys[i] == gas:
            freeze(i)
    return np.array([-float(v) for v in keys], np.float32)


def heap_fallbacks(row, k):
    """How many times the introselect for the top k of `row` falls back to
    the heap select."""
    global _heap_select
    count = [0]
    saved = _heap_select

    def counting(*args):
        count[0] += 1
        return saved(*args)

    _heap_select = counting
    try:
        _nth_element([(float(v), j) for j, v in enumerate(row)], k - 1)
    finally:
        _heap_select = saved
    return count[0]

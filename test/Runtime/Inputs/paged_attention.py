"""Runs the paged-cache step of paged-attention.mlir twice, as generation
does, and checks it against numpy.

    paged_attention.py MNEMO_RUN ARTIFACT WORKDIR [--device cpu|cuda]

Prefill: a ragged batch of two prompts (11 and 7 tokens; the second padded
with position -1) is written into bf16 pools of 4-token pages through
scattered block tables, and attends causally over its pages. Decode: the
returned pools take one new token per sequence (positions 11 and 7) that
attends over all of its sequence's cached tokens. Each step's output is
compared row by row with float64 attention over the bf16-rounded keys and
values; the pools must hold each written token at its page and row, and
every other row must keep its earlier contents (pages of no sequence, and
the rows past each sequence's length). Prints one line per check; exits
non-zero on a failure.
"""

import sys

import numpy as np

from paged_reference import attention, run, worst_row

HQ, HKV, D, PAGE, PAGES = 4, 2, 32, 4, 10
TABLE = np.array([[7, 2, 5, 0], [1, 9, 3, 8]], np.int32)  # scattered pages
LENGTHS = [11, 7]


def bf16(x):
    """float32 values rounded to bf16 (nearest even), kept as float32."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def main():
    mnemo_run, artifact, work = sys.argv[1:4]
    device = sys.argv[5] if len(sys.argv) > 5 else "cpu"
    rng = np.random.default_rng(3)
    failures = 0

    def check(what, ok, detail):
        nonlocal failures
        failures += not ok
        print(f"{what}: {'ok' if ok else 'FAIL'} ({detail})")

    # Prefill: 11 and 7 tokens, positions -1 past each prompt.
    s = max(LENGTHS)
    q = rng.standard_normal((2, HQ, s, D)).astype(np.float32)
    k = rng.standard_normal((2, HKV, s, D)).astype(np.float32)
    v = rng.standard_normal((2, HKV, s, D)).astype(np.float32)
    pos = np.array([[t if t < n else -1 for t in range(s)] for n in LENGTHS], np.int64)
    kpool = bf16(rng.standard_normal((PAGES, HKV, PAGE, D)).astype(np.float32))
    vpool = bf16(rng.standard_normal((PAGES, HKV, PAGE, D)).astype(np.float32))
    out, kp, vp = run(mnemo_run, artifact, work, "prefill",
                      {"q": q, "k": k, "v": v, "kpool": kpool, "vpool": vpool,
                       "table": TABLE, "pos": pos, "lens": np.array(LENGTHS, np.int64)},
                      3, device)
    worst = 0.0
    for b, n in enumerate(LENGTHS):
        want = attention(q[b, :, :n], bf16(k[b, :, :n]), bf16(v[b, :, :n]), range(n))
        worst = max(worst, worst_row(out[b, :, :n], want))
    check("prefill output", worst <= 1e-2, f"worst row {worst:.1e}")
    padded = np.abs(out[1, :, LENGTHS[1]:]).max()
    check("prefill padding rows", padded == 0, f"max |out| {padded}")
    # Each written token at its page and row; every other row unchanged.
    expect_k, expect_v = kpool.copy(), vpool.copy()
    for b, n in enumerate(LENGTHS):
        for t in range(n):
            expect_k[TABLE[b, t // PAGE], :, t % PAGE] = bf16(k[b, :, t])
            expect_v[TABLE[b, t // PAGE], :, t % PAGE] = bf16(v[b, :, t])
    check("prefill pools", np.array_equal(kp, expect_k) and np.array_equal(vp, expect_v),
          f"{int((kp != expect_k).sum() + (vp != expect_v).sum())} values differ")

    # Decode: one token per sequence at positions 11 and 7.
    q1 = rng.standard_normal((2, HQ, 1, D)).astype(np.float32)
    k1 = rng.standard_normal((2, HKV, 1, D)).astype(np.float32)
    v1 = rng.standard_normal((2, HKV, 1, D)).astype(np.float32)
    pos1 = np.array([[n] for n in LENGTHS], np.int64)
    out1, kp1, vp1 = run(mnemo_run, artifact, work, "decode",
                         {"q": q1, "k": k1, "v": v1, "kpool": kp, "vpool": vp,
                          "table": TABLE, "pos": pos1,
                          "lens": np.array([n + 1 for n in LENGTHS], np.int64)},
                         3, device)
    worst = 0.0
    for b, n in enumerate(LENGTHS):
        keys = bf16(np.concatenate([k[b, :, :n], k1[b]], axis=1))
        values = bf16(np.concatenate([v[b, :, :n], v1[b]], axis=1))
        want = attention(q1[b], keys, values, [n])
        worst = max(worst, worst_row(out1[b], want))
    check("decode output", worst <= 1e-2, f"worst row {worst:.1e}")
    for b, n in enumerate(LENGTHS):
        expect_k[TABLE[b, n // PAGE], :, n % PAGE] = bf16(k1[b, :, 0])
        expect_v[TABLE[b, n // PAGE], :, n % PAGE] = bf16(v1[b, :, 0])
    check("decode pools", np.array_equal(kp1, expect_k) and np.array_equal(vp1, expect_v),
          f"{int((kp1 != expect_k).sum() + (vp1 != expect_v).sum())} values differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

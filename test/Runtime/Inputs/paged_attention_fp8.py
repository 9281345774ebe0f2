"""Runs the FP8 paged-cache step of paged-attention-fp8.mlir twice (a ragged
prefill, then one decode token per sequence) and checks it against numpy.

    paged_attention_fp8.py MNEMO_RUN ARTIFACT WORKDIR

Every written row must hold, byte for byte, the E4M3 values nearest (ties to
the even code) to the f32 quotients value / scale, with scale =
max(amax / 448, 2^-126) per token and head; the test's keys include a row
whose small values fall in E4M3's subnormals and a row of zeros. Every other
byte and scale must be unchanged. The attention output must match float64
attention over the dequantized keys and values (E4M3 times scale) row by
row. Prints one line per check; exits non-zero on a failure.
"""

import sys

import numpy as np

from paged_reference import attention, run, worst_row

HQ, HKV, D, PAGE, PAGES = 4, 2, 32, 4, 10
TABLE = np.array([[7, 2, 5, 0], [1, 9, 3, 8]], np.int32)
LENGTHS = [11, 7]


def e4m3_values():
    """The f32 value of every E4M3 code 0..255 (NaN for 0x7f and 0xff)."""
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exponent, mantissa = (codes >> 3) & 0xF, codes & 7
    value = np.where(exponent == 0, mantissa / 8.0 * 2.0 ** -6,
                     (1 + mantissa / 8.0) * 2.0 ** (exponent - 7.0))
    value[(codes & 0x7F) == 0x7F] = np.nan
    return (sign * value).astype(np.float32)


VALUES = e4m3_values()
FINITE = np.nonzero(np.isfinite(VALUES))[0]


def encode(y):
    """Codes of the E4M3 values nearest to f32 `y`, ties to the even code."""
    y = y.astype(np.float64)
    candidates = VALUES[FINITE].astype(np.float64)
    distance = np.abs(y[..., None] - candidates)
    best = distance.min(-1, keepdims=True)
    tied = distance == best
    # Among equal distances prefer an even code (mantissa LSB 0), and zero
    # keeps the sign of y (IEEE: a negative value rounds to -0).
    codes = np.broadcast_to(FINITE, distance.shape)
    negative = np.signbit(y)[..., None]
    preference = np.where(tied, (codes & 1) * 2 + ((codes >> 7) != negative), 99)
    pick = preference.argmin(-1)
    return FINITE[pick].astype(np.uint8)


def quantize(row):
    """[Hkv, D] f32 -> (codes [Hkv, D] uint8, scales [Hkv] f32)."""
    amax = np.abs(row).max(-1).astype(np.float32)
    scale = np.maximum(amax / np.float32(448.0), np.float32(2.0 ** -126))
    quotient = (row / scale[:, None]).astype(np.float32)
    return encode(quotient), scale.astype(np.float32)


def dequantize(codes, scales):
    return VALUES[codes].astype(np.float64) * scales[..., None]


def main():
    mnemo_run, artifact, work = sys.argv[1:4]
    rng = np.random.default_rng(5)
    failures = 0

    def check(what, ok, detail):
        nonlocal failures
        failures += not ok
        print(f"{what}: {'ok' if ok else 'FAIL'} ({detail})")

    s = max(LENGTHS)
    q = rng.standard_normal((2, HQ, s, D)).astype(np.float32)
    k = rng.standard_normal((2, HKV, s, D)).astype(np.float32)
    v = rng.standard_normal((2, HKV, s, D)).astype(np.float32)
    k[0, 1, 3] = 1e-5 * rng.standard_normal(D)  # subnormal quotients but one
    k[0, 1, 3, 0] = 1.0
    v[1, 0, 2] = 0.0                             # a row of zeros
    pos = np.array([[t if t < n else -1 for t in range(s)] for n in LENGTHS], np.int64)
    kbytes = rng.integers(0, 0x7F, (PAGES, HKV, PAGE, D)).astype(np.int8)
    vbytes = rng.integers(0, 0x7F, (PAGES, HKV, PAGE, D)).astype(np.int8)
    kscales = rng.random((PAGES, HKV, PAGE)).astype(np.float32)
    vscales = rng.random((PAGES, HKV, PAGE)).astype(np.float32)
    lens = np.array(LENGTHS, np.int64)
    out, kb, ks, vb, vs = run(mnemo_run, artifact, work, "prefill", {
        "q": q, "k": k, "v": v, "kbytes": kbytes, "kscales": kscales,
        "vbytes": vbytes, "vscales": vscales, "table": TABLE, "pos": pos,
        "lens": lens}, 5)

    want = {"kb": kbytes.view(np.uint8).copy(), "ks": kscales.copy(),
            "vb": vbytes.view(np.uint8).copy(), "vs": vscales.copy()}

    def expect(x, b, t, codes, scales):
        page, row = TABLE[b, t // PAGE], t % PAGE
        codes[page, :, row], scales[page, :, row] = quantize(x[b, :, t])

    for b, n in enumerate(LENGTHS):
        for t in range(n):
            expect(k, b, t, want["kb"], want["ks"])
            expect(v, b, t, want["vb"], want["vs"])
    subnormal = want["kb"][TABLE[0, 0], 1, 3]
    check("subnormal row encoded", ((subnormal & 0x78) == 0).sum() >= D - 1,
          f"{int(((subnormal & 0x78) == 0).sum())} of {D} codes subnormal")

    def compare_pools(what, got_kb, got_ks, got_vb, got_vs):
        bad = int((got_kb.view(np.uint8) != want["kb"]).sum() +
                  (got_vb.view(np.uint8) != want["vb"]).sum())
        bad_scales = int((got_ks != want["ks"]).sum() + (got_vs != want["vs"]).sum())
        check(what, bad == 0 and bad_scales == 0,
              f"{bad} bytes and {bad_scales} scales differ")

    compare_pools("prefill pools", kb, ks, vb, vs)

    def reference(b, n_keys, queries, positions):
        keys = np.stack([dequantize(want["kb"][TABLE[b, t // PAGE], :, t % PAGE],
                                    want["ks"][TABLE[b, t // PAGE], :, t % PAGE])
                         for t in range(n_keys)], axis=1)
        values = np.stack([dequantize(want["vb"][TABLE[b, t // PAGE], :, t % PAGE],
                                      want["vs"][TABLE[b, t // PAGE], :, t % PAGE])
                           for t in range(n_keys)], axis=1)
        return attention(queries, keys, values, positions)

    worst = max(worst_row(out[b, :, :n], reference(b, n, q[b, :, :n], range(n)))
                for b, n in enumerate(LENGTHS))
    check("prefill output", worst <= 1e-4, f"worst row {worst:.1e}")

    q1 = rng.standard_normal((2, HQ, 1, D)).astype(np.float32)
    k1 = rng.standard_normal((2, HKV, 1, D)).astype(np.float32)
    v1 = rng.standard_normal((2, HKV, 1, D)).astype(np.float32)
    pos1 = np.array([[n] for n in LENGTHS], np.int64)
    out1, kb1, ks1, vb1, vs1 = run(mnemo_run, artifact, work, "decode", {
        "q": q1, "k": k1, "v": v1, "kbytes": kb, "kscales": ks, "vbytes": vb,
        "vscales": vs, "table": TABLE, "pos": pos1, "lens": lens + 1}, 5)
    for b, n in enumerate(LENGTHS):
        page, row = TABLE[b, n // PAGE], n % PAGE
        want["kb"][page, :, row], want["ks"][page, :, row] = quantize(k1[b, :, 0])
        want["vb"][page, :, row], want["vs"][page, :, row] = quantize(v1[b, :, 0])
    compare_pools("decode pools", kb1, ks1, vb1, vs1)
    worst = max(worst_row(out1[b], reference(b, n + 1, q1[b], [n]))
                for b, n in enumerate(LENGTHS))
    check("decode output", worst <= 1e-4, f"worst row {worst:.1e}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

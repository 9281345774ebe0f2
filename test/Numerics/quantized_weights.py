# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: dequantize, reference: [[N:[0-9]+]] of [[N]] cases passed
# CHECK: quantized linear, reference: [[M:[0-9]+]] of [[M]] cases passed
# CHECK: quantized linear, kernel 16x2x12: [[M]] of [[M]] cases passed
# CHECK: quantized linear, kernel 4x3x8: [[M]] of [[M]] cases passed
# CHECK: quantized linear, kernel 8x2x6: [[M]] of [[M]] cases passed
# CHECK: quantized linear, kernel 16x2x5, small tiles: [[M]] of [[M]] cases passed
"""mnemo.dequantize (int8, int4, nf4; symmetric and with zero points) against
an independent numpy decoder, element by element: its own lowering, a
quantized embedding table, and mnemo.linear over quantized constant weights
both through the reference lowering and through the CPU GEMM that decodes
codes where it loads them (mnemo-cpu-linear-kernel at the micro-tile shapes
of AVX-512, NEON and AVX2). Shapes are not tile multiples: odd column counts
(a half-used last byte), partial last groups, N past the panel width."""

import numpy as np

from mnemo_numerics import Case, rng, run_cases
from quant_reference import NF4

class Quantized:
    """Random codes, scales (f16 or f32) and zero points for a [rows, cols]
    weight, and the f32 values mnemo.dequantize must give."""

    def __init__(self, r, rows, cols, fmt, group, zeros, scale_dtype):
        self.fmt, self.group, self.cols = fmt, group, cols
        groups = -(-cols // group)
        levels = 256 if fmt == "int8" else 16
        q = r.integers(0, levels, size=(rows, cols))
        if fmt == "int8":
            self.codes = q.astype(np.uint8).view(np.int8)
        else:
            padded = np.zeros((rows, 2 * (-(-cols // 2))), dtype=np.uint8)
            padded[:, :cols] = q
            self.codes = (padded[:, 0::2] | (padded[:, 1::2] << 4)).view(np.int8)
        self.scales = (r.uniform(0.01, 0.1, size=(rows, groups))
                       .astype(scale_dtype))
        self.zeros = (r.integers(0, levels, size=(rows, groups))
                      .astype(np.uint8).view(np.int8) if zeros else None)
        # The decoded values: codes read signed without zero points.
        if fmt == "nf4":
            value = NF4[q]
        elif zeros:
            value = q.astype(np.float32)
        else:
            value = np.where(q >= levels // 2, q - levels, q).astype(np.float32)
        col_group = np.arange(cols) // group
        scale = self.scales.astype(np.float32)[:, col_group]
        if zeros:
            value = value - self.zeros.view(np.uint8).astype(np.float32)[:, col_group]
        self.values = (value * scale).astype(np.float32)

    def op(self, result_type):
        zp = " zero_points(%z : {T:z})" if self.zeros is not None else ""
        return (f"mnemo.dequantize %codes, %scales{zp} format({self.fmt}) "
                f"group({self.group}) : {{T:codes}}, {{T:scales}} -> "
                f"{result_type}")

    def inputs(self):
        d = {"codes": self.codes, "scales": self.scales}
        if self.zeros is not None:
            d["z"] = self.zeros
        return d


VARIANTS = [
    # (format, group, zero points, scale dtype)
    ("int8", 16, False, np.float16),
    ("int8", 32, True, np.float32),
    ("int4", 16, False, np.float16),
    ("int4", 32, True, np.float16),
    ("nf4", 16, False, np.float32),
    ("nf4", 64, False, np.float16),
]


def dequantize_case(i, variant):
    fmt, group, zeros, sdt = variant
    w = Quantized(rng(100 + i), 5, 45, fmt, group, zeros, sdt)
    body = f"%result = {w.op('tensor<5x45xf32>')}"
    return Case(f"{fmt}_g{group}{'_zp' if zeros else ''}", body, w.inputs(),
                w.values, atol=0.0)


def embedding_case(i, variant):
    fmt, group, zeros, sdt = variant
    r = rng(200 + i)
    w = Quantized(r, 11, 37, fmt, group, zeros, sdt)
    ids = r.integers(-2, 13, size=(2, 7)).astype(np.int64)
    inputs = w.inputs()
    inputs["ids"] = ids
    valid = (ids >= 0) & (ids < 11)
    expected = np.where(valid[..., None], w.values[np.clip(ids, 0, 10)], 0.0)
    body = (f"%table = {w.op('tensor<11x37xf32>')}\n"
            f"%result = mnemo.embedding %table[%ids] : tensor<11x37xf32>, "
            f"{{T:ids}} -> {{R}}")
    return Case(f"embedding_{fmt}_g{group}{'_zp' if zeros else ''}", body,
                inputs, expected, atol=0.0)


def linear_case(i, variant, lead, k, n, bias=False, dynamic=None):
    fmt, group, zeros, sdt = variant
    r = rng(300 + i)
    w = Quantized(r, n, k, fmt, group, zeros, sdt)
    x = r.standard_normal(lead + (k,)).astype(np.float32)
    inputs = {"x": x, **w.inputs()}
    expected = x.astype(np.float64) @ w.values.astype(np.float64).T
    extra = ""
    if bias:
        inputs["b"] = r.standard_normal((n,)).astype(np.float32)
        expected = expected + inputs["b"]
        extra = " bias(%b : {T:b})"
    body = (f"%w = {w.op(f'tensor<{n}x{k}xf32>')}\n"
            f"%result = mnemo.linear %x, %w layout(out_in){extra} : "
            f"{{T:x}}, tensor<{n}x{k}xf32> -> {{R}}")
    scale = float(np.abs(w.values).max())
    return Case(f"{fmt}_g{group}{'_zp' if zeros else ''}_{'x'.join(map(str, lead))}"
                f"_k{k}_n{n}", body, inputs, expected,
                atol=3e-6 * np.sqrt(k) * max(scale, 1e-3),
                dynamic=dynamic, result_dynamic=tuple(dynamic["x"]) if dynamic else ())


run_cases("dequantize, reference",
          [dequantize_case(i, v) for i, v in enumerate(VARIANTS)] +
          [embedding_case(i, v) for i, v in enumerate(VARIANTS)])

linears = []
shapes = [((37,), 45, 71, False, None), ((2, 13), 33, 40, True, None),
          ((5, 1), 64, 35, False, None), ((3, 11), 50, 29, True, {"x": [0, 1]}),
          ((), 31, 19, False, None)]
for i, v in enumerate(VARIANTS):
    for j, (lead, k, n, bias, dyn) in enumerate(shapes):
        if (i + j) % 2 == 0 or j == 0:
            linears.append(linear_case(10 * i + j, v, lead, k, n, bias, dyn))

run_cases("quantized linear, reference", linears)
for lanes, vectors, rows, extra, label in [
        (16, 2, 12, "", ""), (4, 3, 8, "", ""), (8, 2, 6, "", ""),
        (16, 2, 5, " cache-bytes=1", ", small tiles")]:
    run_cases(f"quantized linear, kernel {lanes}x{vectors}x{rows}{label}",
              linears,
              passes=f"func.func(mnemo-cpu-linear-kernel{{lanes={lanes} "
                     f"vectors={vectors} rows={rows}{extra}}})")

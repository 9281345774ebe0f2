# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: cpu linear kernel 16x2x12: [[N:[0-9]+]] of [[N]] cases passed
# CHECK: cpu linear kernel 4x3x8: [[N]] of [[N]] cases passed
# CHECK: cpu linear kernel 8x2x6: [[N]] of [[N]] cases passed
# CHECK: cpu linear kernel 16x2x5, small tiles: [[N]] of [[N]] cases passed
# CHECK: raised products: [[M:[0-9]+]] of [[M]] cases passed
"""The CPU's register-tiled GEMM (mnemo-cpu-linear-kernel) against numpy,
element by element, at the micro-tile shapes of AVX-512 (16 lanes, 2 vectors,
12 rows), NEON (4 x 3 x 8) and AVX2 (8 x 2 x 6): rows, K and N that are not
tile multiples, batch dims, dynamic rows, one row per batch position
(the batch taken as the rows), a vector input, bias, constant
(packed) and computed weights of both layouts, bf16 and f16 weights. Then
matrix products written as linalg contractions, raised by
mnemo-raise-contractions (with a non-zero accumulator and a unit-batch B)."""

import numpy as np

from mnemo_numerics import Case, rng, run_cases


def round_to_bf16(a):
    """f32 values rounded to the nearest bf16 (ties to even), as f32."""
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def linear_case(name, lead, k, n, seed, layout="out_in", bias=False,
                wdtype=np.float32, dynamic=None, result_dynamic=(),
                computed=False):
    r = rng(seed)
    x = r.standard_normal(lead + (k,)).astype(np.float32)
    w_nk = r.standard_normal((n, k)).astype(np.float32)
    if wdtype == "bf16":
        w_nk = round_to_bf16(w_nk)
    elif wdtype == np.float16:
        w_nk = w_nk.astype(np.float16).astype(np.float32)
    w = w_nk if layout == "out_in" else np.ascontiguousarray(w_nk.T)
    expected = x.astype(np.float64) @ w_nk.astype(np.float64).T
    inputs = {"x": x, "w": w.astype(np.float16) if wdtype == np.float16 else w}
    wtype = "{T:w}"
    pre = ""
    if wdtype == "bf16":
        # bf16 weights: truncating f32 values that are already bf16 is exact.
        shape = "x".join(str(d) for d in w.shape)
        pre = (f"%wb_e = tensor.empty() : tensor<{shape}xbf16>\n"
               f"%wb = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, "
               f"affine_map<(i, j) -> (i, j)>], iterator_types = [\"parallel\", \"parallel\"]}} "
               f"ins(%w : {{T:w}}) outs(%wb_e : tensor<{shape}xbf16>) {{\n"
               f"^bb0(%a: f32, %o: bf16):\n  %t = arith.truncf %a : f32 to bf16\n"
               f"  linalg.yield %t : bf16\n}} -> tensor<{shape}xbf16>\n")
        wtype = f"tensor<{shape}xbf16>"
    if computed:
        # A weight the kernel cannot pack: computed from a function input.
        shape = "x".join(str(d) for d in w.shape)
        pre += (f"%w_e = tensor.empty() : tensor<{shape}xf32>\n"
                f"%w_n = linalg.negf ins(%w : {{T:w}}) outs(%w_e : tensor<{shape}xf32>) "
                f"-> tensor<{shape}xf32>\n"
                f"%w_computed = linalg.negf ins(%w_n : tensor<{shape}xf32>) outs(%w_e : "
                f"tensor<{shape}xf32>) -> tensor<{shape}xf32>\n")
    wname = "%wb" if wdtype == "bf16" else ("%w_computed" if computed else "%w")
    extra = ""
    if bias:
        b = r.standard_normal((n,)).astype(np.float32)
        inputs["b"] = b
        expected = expected + b
        extra = " bias(%b : {T:b})"
    body = pre + (f"%result = mnemo.linear %x, {wname} layout({layout}){extra} "
                  f": {{T:x}}, {wtype} -> {{R}}")
    return Case(name, body, inputs, expected, atol=3e-5 * np.sqrt(k),
                dynamic=dynamic, result_dynamic=result_dynamic)


cases = [
    linear_case("rows_37_k45_n71", (37,), 45, 71, 1),
    linear_case("in_out_bias", (2, 13), 33, 40, 2, layout="in_out", bias=True),
    linear_case("batch_4d", (2, 3, 5), 16, 33, 3, bias=True),
    linear_case("vector_input", (), 29, 19, 4, bias=True),
    linear_case("one_row", (1,), 64, 96, 5),
    linear_case("rows_24_exact", (24,), 32, 64, 6),
    linear_case("dynamic_rows", (3, 11), 32, 50, 7,
                dynamic={"x": [0, 1]}, result_dynamic=(0, 1)),
    linear_case("bf16_weight", (9,), 40, 35, 8, wdtype="bf16"),
    linear_case("f16_weight_in_out", (6,), 24, 17, 9, layout="in_out",
                wdtype=np.float16),
    linear_case("computed_out_in", (13,), 20, 37, 10, computed=True),
    linear_case("computed_in_out_bias", (2, 7), 12, 29, 11, layout="in_out",
                bias=True, computed=True),
    linear_case("narrow_n3", (17,), 8, 3, 12),
    # One row per batch position (a decode step): the batch dim is the rows.
    linear_case("unit_rows_batch_13", (13, 1), 40, 37, 13, bias=True),
    linear_case("unit_rows_dynamic_batch", (14, 1), 24, 33, 14,
                layout="in_out", dynamic={"x": [0]}, result_dynamic=(0,)),
    linear_case("unit_rows_4d", (2, 5, 1), 16, 20, 15, computed=True),
]

for lanes, vectors, rows, extra, label in [
        (16, 2, 12, "", ""), (4, 3, 8, "", ""), (8, 2, 6, "", ""),
        (16, 2, 5, " cache-bytes=1", ", small tiles")]:
    run_cases(f"cpu linear kernel {lanes}x{vectors}x{rows}{label}", cases,
              passes=f"func.func(mnemo-cpu-linear-kernel{{lanes={lanes} "
                     f"vectors={vectors} rows={rows}{extra}}})")


def product_case(name, shape_a, shape_b, a_map, b_map, out_shape, seed,
                 accumulate, b_transposed=False, subscripts=None):
    """C = A B (+ C0) written as the linalg.generic of an ONNX MatMul or an
    attention tile, for mnemo-raise-contractions then the kernel; with
    `subscripts`, C = einsum(subscripts, A, B) (+ C0)."""
    r = rng(seed)
    a = r.standard_normal(shape_a).astype(np.float32)
    bm = r.standard_normal(shape_b).astype(np.float32)
    c0 = r.standard_normal(out_shape).astype(np.float32)
    rank = len(out_shape) + 1
    dims = ", ".join(f"d{i}" for i in range(rank))
    out_map = ", ".join(f"d{i}" for i in range(rank - 1))
    iters = ", ".join(['"parallel"'] * (rank - 1) + ['"reduction"'])
    ostr = "x".join(str(d) for d in out_shape)
    init = ("%c0" if accumulate else "%z")
    body = (f"%zero = arith.constant 0.0 : f32\n"
            f"%e = tensor.empty() : tensor<{ostr}xf32>\n"
            f"%z = linalg.fill ins(%zero : f32) outs(%e : tensor<{ostr}xf32>) -> tensor<{ostr}xf32>\n"
            f"%result = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({a_map})>, "
            f"affine_map<({dims}) -> ({b_map})>, affine_map<({dims}) -> ({out_map})>], "
            f"iterator_types = [{iters}]}} ins(%a, %b : {{T:a}}, {{T:b}}) outs({init} : tensor<{ostr}xf32>) {{\n"
            f"^bb0(%x: f32, %y: f32, %acc: f32):\n  %p = arith.mulf %x, %y : f32\n"
            f"  %s = arith.addf %acc, %p : f32\n  linalg.yield %s : f32\n}} -> tensor<{ostr}xf32>")
    a64 = a.astype(np.float64)
    if subscripts:
        expected = np.einsum(subscripts, a64, bm.astype(np.float64))
    else:
        b2 = bm.reshape(bm.shape[-2:]).astype(np.float64)
        expected = a64 @ (b2.T if b_transposed else b2)
    expected = expected + (c0 if accumulate else 0)
    inputs = {"a": a, "b": bm}
    if accumulate:
        inputs["c0"] = c0
    return Case(name, body, inputs, expected, atol=1e-4)


products = [
    # ONNX MatMul [2, 9, 20] x [20, 31]: d0 batch, d1 m, d2 n, d3 k.
    product_case("matmul_in_out", (2, 9, 20), (20, 31), "d0, d1, d3", "d3, d2",
                 (2, 9, 31), 20, False),
    # Gemm transB: B read as [n, k].
    product_case("matmul_out_in", (7, 18), (23, 18), "d0, d2", "d1, d2",
                 (7, 23), 21, False, b_transposed=True),
    # Attention PV: [1, 2, 5, 12] x [1, 1, 12, 9] into an accumulator.
    product_case("tile_pv_accumulate", (1, 2, 5, 12), (1, 1, 12, 9),
                 "d0, d1, d2, d4", "d0, 0, d4, d3", (1, 2, 5, 9), 22, True),
]


# Weights per head that every row of A shares (the expanded MLA's keys,
# [b, s, k] x [h, n, k]): one linear over the stacked heads, then C's order.
products += [
    # MLA's latent to keys: [b, s, k] x [h, n, k] -> [b, h, s, n].
    product_case("heads_mla", (2, 7, 20), (3, 11, 20), "d0, d2, d4",
                 "d1, d3, d4", (2, 3, 7, 11), 23, False,
                 subscripts="bsk,hnk->bhsn"),
    # C already [b, s, h, n], into an accumulator.
    product_case("heads_rows_first", (2, 5, 16), (4, 6, 16),
                 "d0, d1, d4", "d2, d3, d4", (2, 5, 4, 6), 24, True,
                 subscripts="bsk,hnk->bshn"),
    # Two head dims around the rows.
    product_case("heads_two_dims", (6, 9), (2, 3, 5, 9), "d1, d4",
                 "d0, d2, d3, d4", (2, 6, 3, 5), 25, False,
                 subscripts="mk,ghnk->gmhn"),
]
run_cases("raised products", products,
          passes="mnemo-raise-contractions,func.func(mnemo-cpu-linear-kernel{"
                 "lanes=8 vectors=2 rows=3})")

#!/usr/bin/env python3
"""Writes the GPU correctness cases: for each, a static-shape model, its
artifact (NAME.mnemo: mnemoc --target=..., the PTX and any weights), the
artifact's launch plan as JSON (NAME.plan.json: `mnemo-run NAME.mnemo
--dump-plan`, read by plan.py) and a manifest entry in cases.json (keys
"artifact" and "plan") saying how to make its inputs and its float64
reference. scripts/gpu/check_ptx.py runs them on a GPU. A case that mnemoc
cannot compile, or whose plan cannot be dumped or read, stops the run.

    scripts/gpu/make_cases.py OUT_DIR [--mnemoc build/bin/mnemoc] [--target sm_90a]
        [--mnemo-run MNEMOC_DIR/mnemo-run] [--models ... [--model-dtype bf16]]
        [--models-only]

Attention: non-tile-multiple lengths, GQA/MQA, causal with offset, sliding
window, softcap, D != Dv. Layers: linear, rms_norm, rope, swiglu, embedding,
add, a row max. The tiny decoder (examples/tiny-decoder) at the prompt's length, its
weights passed as inputs, against its stored reference logits. With
--models, the reference models (checkpoint directories and ONNX files with
input_ids.npy and logits.npy beside them) compiled for their prompt's shape
(`--input-shape input_ids=BxS`), weights in the artifact (the plan's
weight buffers), against their logits.
"""

import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plan import PlanError, default_mnemo_run, dump_plan  # noqa: E402


def ttype(shape, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dtype + ">"


def attention(name, b, hq, hkv, sq, skv, d, dv, dtype="f32", **opts):
    """An attention case; bf16 ones are checked by relative error (2e-2)."""
    q, k, v, r = (b, hq, sq, d), (b, hkv, skv, d), (b, hkv, skv, dv), (b, hq, sq, dv)
    attrs, pre = [], ""
    if opts.get("causal"):
        attrs.append("causal")
    if opts.get("window") is not None:
        attrs.append(f"window({opts['window']})")
    if opts.get("softcap") is not None:
        attrs.append(f"softcap({opts['softcap']!r})")
    # mask=(shape, dtype[, "lowest"]): an additive mask broadcast to
    # [B, Hq, Sq, Skv] (check_ptx.py fills it with normal values, a fifth of
    # them -inf, or f32's lowest as exports write "masked", and its first
    # query row all so).
    mask = opts.pop("mask", None)
    if mask:
        attrs.append(f"mask(%mask : {ttype(mask[0], mask[1])})")
    sink = opts.pop("sink", False)
    if sink:
        attrs.append(f"sink(%sink : {ttype((hq,))})")
    if opts.get("offset"):
        pre = f"  %off = arith.constant {opts['offset']} : index\n"
        attrs.append("q_offset(%off)")
    t = {x: ttype(x, dtype) for x in (q, k, v, r)}
    extra = f", %mask: {ttype(mask[0], mask[1])}" if mask else ""
    extra += f", %sink: {ttype((hq,))}" if sink else ""
    # rope=dict(on="q"|"qk", theta, r, interleaved, scaling=(mlir, ref) or
    # tables=True): Q (and K) rotated first, at positions offset + [0, S),
    # from a positions input or from cos/sin table inputs [S, r].
    rope = opts.pop("rope", None)
    names = {"q": "%q", "k": "%k"}
    if rope:
        width = rope.get("r", d)
        if rope.get("tables"):
            tt = ttype((skv, width))
            extra += f", %cos: {tt}, %sin: {tt}"
        else:
            extra += f", %pos: {ttype((skv,), 'i64')}"
        for x in rope["on"]:
            shape, out = (q, "%qr") if x == "q" else (k, "%kr")
            inter = " interleaved" if rope.get("interleaved") else ""
            if rope.get("tables"):
                # Queries sit at the last sq positions of the tables.
                tab = ("%cos", "%sin") if x == "k" or sq == skv else ("%cq", "%sq")
                if tab[0] == "%cq":
                    for src, dst in (("%cos", "%cq"), ("%sin", "%sq")):
                        pre += (f"  {dst} = tensor.extract_slice {src}[{skv - sq}, 0] [{sq}, {width}] [1, 1]"
                                f" : {tt} to {ttype((sq, width))}\n")
                pre += (f"  {out} = mnemo.rope_tables %{x}, {tab[0]}, {tab[1]}{inter} : "
                        f"{t[shape]}, {ttype((sq if tab[0] == '%cq' else skv, width))} -> {t[shape]}\n")
            else:
                pos = "%pos"
                if x == "q" and sq != skv:
                    pos = "%pq"
                    pre += (f"  %pq = tensor.extract_slice %pos[{skv - sq}] [{sq}] [1]"
                            f" : {ttype((skv,), 'i64')} to {ttype((sq,), 'i64')}\n")
                scaling = f" scaling({rope['scaling'][0]})" if rope.get("scaling") else ""
                rd = f" rotary_dim({width})" if width != d else ""
                pre += (f"  {out} = mnemo.rope %{x}, {pos} theta({rope['theta']!r}){inter}{rd}{scaling} : "
                        f"{t[shape]}, {ttype((sq if pos == '%pq' else skv,), 'i64')} -> {t[shape]}\n")
            names[x] = out
    mlir = (f"func.func @main(%q: {t[q]}, %k: {t[k]}, %v: {t[v]}{extra}) -> {t[r]} {{\n"
            f"{pre}  %r = mnemo.attention {names['q']}, {names['k']}, %v {' '.join(attrs)} : "
            f"{t[q]}, {t[k]}, {t[v]} -> {t[r]}\n  return %r : {t[r]}\n}}\n")
    inputs = [{"name": n, "shape": s, "dtype": dtype} for n, s in (("q", q), ("k", k), ("v", v))]
    if mask:
        inputs.append({"name": "mask", "shape": mask[0], "dtype": mask[1],
                       "additive_mask": mask[2] if len(mask) > 2 else "-inf"})
        if len(mask) > 2:
            opts["mask_lowest"] = True
    if sink:
        inputs.append({"name": "sink", "shape": (hq,)})
    if rope:
        if rope.get("tables"):
            inputs += [{"name": n, "shape": (skv, rope.get("r", d))} for n in ("cos", "sin")]
        else:
            inputs.append({"name": "pos", "shape": (skv,), "positions": True})
        opts["rope"] = {key: rope[key] for key in ("on", "theta", "r", "interleaved", "tables")
                        if key in rope}
        if rope.get("scaling"):
            opts["rope"]["scaling"] = rope["scaling"][1]
    flags = opts.pop("flags", [])
    if dtype in ("bf16", "f16"):
        return name, mlir, inputs, {"op": "attention", "rel": 2e-2, **opts}, None, flags
    if "rel" in opts:  # f32 checked row by row by relative error
        return name, mlir, inputs, {"op": "attention", **opts}, None, flags
    return name, mlir, inputs, {"op": "attention", **opts}, 1e-3, flags


def layer(name, op, shapes, body, result, ref, ids=None):
    args = ", ".join(f"%{n}: {ttype(s, 'i64' if n in (ids or {}) else 'f32')}"
                     for n, s in shapes)
    mlir = (f"func.func @main({args}) -> {ttype(result)} {{\n  {body}\n"
            f"  return %r : {ttype(result)}\n}}\n")
    inputs = [{"name": n, "shape": s, **({"ints": ids[n]} if n in (ids or {}) else {})}
              for n, s in shapes]
    return name, mlir, inputs, {"op": op, **ref}, 1e-4


def linear(name, m_shape, k, n, layout="out_in", x="bf16", w="bf16", bias=None, swiglu=False,
           norm=None, residual=False, rel=2e-2, flags=()):
    """A linear case on the tensor-core GEMM: 16-bit weights, or f32 ones as
    TF32 (three products a term by default; `flags` such as
    --precision=tf32 go to mnemoc): M rows of shape m_shape, checked by
    relative error per row (`rel`); with swiglu, its input
    is silu(g) * u of two inputs, with norm (the norm weight's dtype) it is
    rms_norm(x, nw) (both fused into the kernel's loads; a norm named with
    "+1" has a unit offset; with residual, a tensor of the result's
    shape and type is added to it, in the kernel's epilogue)."""
    xs, ys = (*m_shape, k), (*m_shape, n)
    ws = (n, k) if layout == "out_in" else (k, n)
    out = x  # the result has the input's type
    names = ("g", "u") if swiglu else ("x",)
    args = ", ".join(f"%{a}: {ttype(xs, x)}" for a in names) + f", %w: {ttype(ws, w)}"
    pre = f"  %x = mnemo.swiglu %g, %u : {ttype(xs, x)}\n" if swiglu else ""
    if norm:
        nd = norm.removesuffix("+1")
        offset = " unit_offset" if norm.endswith("+1") else ""
        names = ("x0",)
        args = f"%x0: {ttype(xs, x)}, %nw: {ttype((k,), nd)}, %w: {ttype(ws, w)}"
        pre = (f"  %x = mnemo.rms_norm %x0, %nw eps(1.0e-05){offset} : {ttype(xs, x)}, "
               f"{ttype((k,), nd)} -> {ttype(xs, x)}\n")
    attr = ""
    if bias:
        args += f", %b: {ttype((n,), bias)}"
        attr = f" bias(%b : {ttype((n,), bias)})"
    post = ""
    if residual:
        args += f", %res: {ttype(ys, out)}"
        post = (f"  %e = tensor.empty() : {ttype(ys, out)}\n"
                f"  %r = linalg.add ins(%y, %res : {ttype(ys, out)}, {ttype(ys, out)}) "
                f"outs(%e : {ttype(ys, out)}) -> {ttype(ys, out)}\n")
    mlir = (f"func.func @main({args}) -> {ttype(ys, out)} {{\n{pre}"
            f"  %{'y' if residual else 'r'} = mnemo.linear %x, %w layout({layout}){attr} : "
            f"{ttype(xs, x)}, {ttype(ws, w)} -> {ttype(ys, out)}\n{post}"
            f"  return %r : {ttype(ys, out)}\n}}\n")
    inputs = [{"name": a, "shape": xs, "dtype": x} for a in names]
    if norm:
        inputs.append({"name": "nw", "shape": (k,), "dtype": norm.removesuffix("+1")})
    inputs.append({"name": "w", "shape": ws, "dtype": w})
    if bias:
        inputs.append({"name": "b", "shape": (n,), "dtype": bias})
    if residual:
        inputs.append({"name": "res", "shape": ys, "dtype": out})
    ref = {"op": "linear", "layout": layout, "rel": rel}
    if swiglu:
        ref["swiglu"] = True
    if norm:
        ref["rms_norm"] = {"eps": 1e-5, "unit_offset": norm.endswith("+1")}
    return name, mlir, inputs, ref, None, list(flags)


def linear_cases():
    # Rows, K and N off the tiles; each tiling (decode rows, 64x64, 64x128,
    # 128x128), both weight layouts, f32 and 16-bit inputs, bias.
    yield linear("lin_bf16w_f32in_bias_2x37", (2, 37), 136, 200, x="f32", bias="f32")
    yield linear("lin_bf16_in_out_decode_3x1", (3, 1), 72, 136, layout="in_out")
    yield linear("lin_f16_decode_bias_5", (5,), 264, 520, x="f16", w="f16", bias="f16")
    yield linear("lin_bf16_1500x520_to_1536", (1500,), 520, 1536)
    yield linear("lin_bf16_in_out_1100x256_to_2056", (1100,), 256, 2056, layout="in_out")
    yield linear("lin_bf16w_f32in_1100x192_to_1024", (1100,), 192, 1024, x="f32")
    # Split-K (few output tiles, long K): partials summed by a second kernel
    # that adds the bias; uneven last range.
    yield linear("lin_bf16w_f32in_splitk_2x1032_bias", (2,), 1032, 264, x="f32", bias="bf16")
    yield linear("lin_bf16_in_out_splitk_40x2056", (40,), 2056, 136, layout="in_out")
    # wgmma with TMA and split-K together (64-row tiles, 2 K ranges).
    yield linear("lin_bf16_tma_splitk_100x4096_to_8448", (100,), 4096, 8448)
    # SwiGLU computed on the input loads (an MLP's down projection): f32
    # decode rows, and bf16 through registers with wgmma on sm_90a.
    yield linear("lin_swiglu_bf16w_f32in_2x37", (2, 37), 200, 72, x="f32", swiglu=True)
    yield linear("lin_swiglu_bf16_1100x344_to_1032", (1100,), 344, 1032, layout="in_out",
                 swiglu=True)
    # rms_norm folded in (x * weight staged, rows scaled at the end): decode
    # rows with f32 activations, and bf16 with a unit offset through wgmma.
    yield linear("lin_rmsnorm_bf16w_f32in_2x37", (2, 37), 200, 72, x="f32", norm="f32")
    yield linear("lin_rmsnorm_bf16_1100x328_to_1040", (1100,), 328, 1040, norm="bf16+1")
    # rms_norm with split-K (decode rows, few output tiles): each split's
    # sums of squares, the rows scaled by the reduction; an uneven last
    # range (33 steps in 7 splits of 5).
    yield linear("lin_rmsnorm_bf16w_f32in_splitk_2x1032_bias", (2,), 1032, 264, x="f32",
                 norm="f32", bias="bf16")
    yield linear("lin_rmsnorm_bf16_splitk_3x1x2056_to_136", (3, 1), 2056, 136,
                 norm="bf16+1")
    # A decode tile's residual, added in the epilogue (one K range) or by
    # the split-K reduction, after the bias; a prefill's stays an add.
    yield linear("lin_residual_bf16w_f32in_decode_3", (3,), 200, 72, x="f32", residual=True)
    yield linear("lin_residual_bf16w_f32in_2x37", (2, 37), 200, 72, x="f32", residual=True)
    yield linear("lin_residual_bf16w_f32in_splitk_2x1032_bias", (2,), 1032, 264, x="f32",
                 bias="bf16", residual=True)
    # f32 weights as TF32 (--precision=3xtf32, the default: rows within
    # 1e-5 of float64 as the CUDA cores' kernel, --precision=f32, is): a prefill's 128 x 128
    # tiles, a 64 x 64 one with a bias, decode rows with split-K and a
    # residual; one product (--precision=tf32, 10-bit mantissas): wgmma and
    # TMA on sm_90a, and decode rows.
    x3 = ["--precision=3xtf32"]
    yield linear("lin_f32_3xtf32_bias_2x37", (2, 37), 136, 200, x="f32", w="f32", bias="f32",
                 rel=1e-5, flags=x3)
    yield linear("lin_f32_3xtf32_1500x520_to_1536", (1500,), 520, 1536, x="f32", w="f32",
                 rel=1e-5, flags=x3)
    yield linear("lin_f32_3xtf32_splitk_2x1032_residual", (2,), 1032, 264, x="f32", w="f32",
                 bias="f32", residual=True, rel=1e-5, flags=x3)
    yield linear("lin_f32_tf32_1500x520_to_1536", (1500,), 520, 1536, x="f32", w="f32",
                 rel=5e-3, flags=["--precision=tf32"])
    yield linear("lin_f32_tf32_decode_3x1x1032", (3, 1), 1032, 264, x="f32", w="f32",
                 rel=5e-3, flags=["--precision=tf32"])
    # A small model's layers (DeepSeek-V4's test checkpoint: hidden 128),
    # for a prompt's rows and a decode step's: the 8 stream-mix weights of
    # hyper-connections, K of one or two 32-element steps, on the TF32
    # kernel; a router's 4 experts and the head's 2, which it refuses (N not
    # a multiple of 8), on the CUDA cores beside them.
    for m_shape, tag in (((2, 37), "2x37"), ((3, 1), "decode_3x1")):
        for k, n in ((128, 4), (256, 8), (256, 2), (64, 128), (32, 136)):
            yield linear(f"lin_f32_3xtf32_small_{tag}_k{k}_n{n}", m_shape, k, n, x="f32",
                         w="f32", rel=1e-5, flags=x3)
    # Its experts: rows sorted by expert in blocks of 64 (the last one
    # short), each block through its expert's f32 weight as 3xTF32 (wgmma on
    # sm_90a, its tiles rounded in shared memory), as mnemo-group-experts
    # leaves them: gate/up [4, 64, 128] and down [4, 128, 64].
    for e, n, k in ((4, 64, 128), (4, 128, 64)):
        yield grouped_linear(f"grouped_f32_3xtf32_r150_e{e}_n{n}_k{k}", 150, k, n, e,
                             flags=x3)


def grouped_linear(name, r, k, n, e, rows=64, flags=(), groups=None, out=None):
    """A mnemo.grouped_linear of R rows in blocks of `rows`, checked per row
    within 1e-5: each block's expert drawn at random in [0, E) (i64), or
    the given i32 `groups`, saved in `out`."""
    x, w = (r, k), (e, n, k)
    g = (-(-r // rows),)
    gtype = "i64" if groups is None else "i32"
    gin = {"name": "g", "shape": g, "ints": e}
    if groups is not None:
        np.save(os.path.join(out, f"{name}.g.npy"), np.asarray(groups, np.int32))
        gin = {"name": "g", "shape": g, "file": f"{name}.g.npy"}
    mlir = (f"func.func @main(%x: {ttype(x)}, %w: {ttype(w)}, %g: {ttype(g, gtype)}) -> "
            f"{ttype((r, n))} {{\n  %r = mnemo.grouped_linear %x, %w groups(%g) rows({rows}) : "
            f"{ttype(x)}, {ttype(w)}, {ttype(g, gtype)} -> {ttype((r, n))}\n"
            f"  return %r : {ttype((r, n))}\n}}\n")
    inputs = [{"name": "x", "shape": x}, {"name": "w", "shape": w}, gin]
    return (name, mlir, inputs, {"op": "grouped_linear", "rows": rows, "rel": 1e-5}, 1e-4,
            list(flags))


def layer_cases():
    x, w = (2, 7, 48), (40, 48)
    yield layer("linear", "linear", [("x", x), ("w", w)],
                f"%r = mnemo.linear %x, %w layout(out_in) : {ttype(x)}, {ttype(w)} -> {ttype((2, 7, 40))}",
                (2, 7, 40), {})
    x = (3, 5, 40)
    yield layer("rms_norm", "rms_norm", [("x", x), ("w", (40,))],
                f"%r = mnemo.rms_norm %x, %w eps(1.0e-05) : {ttype(x)}, {ttype((40,))} -> {ttype(x)}",
                x, {"eps": 1e-5})
    x, pos = (2, 4, 9, 16), (2, 9)
    yield layer("rope", "rope", [("x", x), ("pos", pos)],
                f"%r = mnemo.rope %x, %pos theta(10000.0) : {ttype(x)}, {ttype(pos, 'i64')} -> {ttype(x)}",
                x, {"theta": 10000.0}, ids={"pos": 64})
    # Dynamic NTK: the base follows the largest position (here above the
    # original 4).
    x, pos = (1, 4, 9, 64), (9,)
    yield layer("rope_dynamic_ntk", "rope", [("x", x), ("pos", pos)],
                f"%r = mnemo.rope %x, %pos theta(10000.0) scaling(<dynamic, factor = 2.0, "
                f"original_max_position = 4>) : {ttype(x)}, {ttype(pos, 'i64')} -> {ttype(x)}",
                x, {"theta": 10000.0, "scaling": {"kind": "dynamic", "factor": 2.0,
                                                  "original_max_position": 4}},
                ids={"pos": 64})
    x = (2, 5, 24)
    yield layer("swiglu", "swiglu", [("g", x), ("u", x)],
                f"%r = mnemo.swiglu %g, %u : {ttype(x)}", x, {})
    t, ids = (50, 16), (2, 7)
    yield layer("embedding", "embedding", [("t", t), ("ids", ids)],
                f"%r = mnemo.embedding %t[%ids] : {ttype(t)}, {ttype(ids, 'i64')} -> {ttype((2, 7, 16))}",
                (2, 7, 16), {}, ids={"ids": 50})
    # Reductions spread over a warp's lanes (mnemo-gpu-warp-reductions):
    # rows of 1000 (not a multiple of the 32 lanes), f32 linear layers on
    # the CUDA cores over an [N, K] weight (one output a warp) and a
    # [K, N] one (8 outputs a warp, each over 4 slices), and a row max.
    # Sums of 1000 and more products are checked per row, relative 1e-5.
    x = (3, 5, 1000)
    yield layer("rms_norm_wide", "rms_norm", [("x", x), ("w", (1000,))],
                f"%r = mnemo.rms_norm %x, %w eps(1.0e-05) : {ttype(x)}, {ttype((1000,))} -> {ttype(x)}",
                x, {"eps": 1e-5})
    for layout, w in (("out_in", (77, 1000)), ("in_out", (1000, 300))):
        x, n = (3, 1000), w[0] if layout == "out_in" else w[1]
        yield layer(f"linear_f32_{layout}_3x1000_to_{n}", "linear", [("x", x), ("w", w)],
                    f"%r = mnemo.linear %x, %w layout({layout}) : {ttype(x)}, {ttype(w)} -> "
                    f"{ttype((3, n))}", (3, n), {"layout": layout, "rel": 1e-5})
    # At DeepSeek-V3's MLA decode dims: the absorbed form's per-head
    # products by W_UK ([H, nope, latent]: 8 outputs a warp) and W_UV
    # ([H, value, latent]: one output a warp), the latent's rms_norm, and
    # an f32 decode projection of each weight layout (time_kernels.py
    # times them).
    for name, w, out, spec in (("wuk", (128, 128, 512), (2, 128, 1, 512), "bhsk,hko->bhso"),
                               ("wuv", (128, 128, 512), (2, 128, 1, 128), "bhsk,hok->bhso")):
        x = out[:3] + (w[1] if name == "wuk" else w[2],)
        wmap = "(d1, d4, d3)" if name == "wuk" else "(d1, d3, d4)"
        yield layer(f"mla_{name}_decode", "einsum", [("x", x), ("w", w)],
                    f"%z = arith.constant 0.0 : f32\n"
                    f"  %e = tensor.empty() : {ttype(out)}\n"
                    f"  %f = linalg.fill ins(%z : f32) outs(%e : {ttype(out)}) -> {ttype(out)}\n"
                    f"  %r = linalg.generic {{indexing_maps = ["
                    f"affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, "
                    f"affine_map<(d0, d1, d2, d3, d4) -> {wmap}>, "
                    f"affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], "
                    f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"parallel\", "
                    f"\"reduction\"]}} ins(%x, %w : {ttype(x)}, {ttype(w)}) outs(%f : {ttype(out)}) {{\n"
                    f"  ^bb0(%a: f32, %b: f32, %acc: f32):\n"
                    f"    %p = arith.mulf %a, %b : f32\n"
                    f"    %s = arith.addf %acc, %p : f32\n"
                    f"    linalg.yield %s : f32\n"
                    f"  }} -> {ttype(out)}", out, {"spec": spec, "rel": 1e-5})
    x = (2, 1, 512)
    yield layer("rms_norm_decode_2x512", "rms_norm", [("x", x), ("w", (512,))],
                f"%r = mnemo.rms_norm %x, %w eps(1.0e-06) : {ttype(x)}, {ttype((512,))} -> {ttype(x)}",
                x, {"eps": 1e-6})
    for layout, w in (("out_in", (2048, 2048)), ("in_out", (2048, 2048))):
        x = (2, 1, 2048)
        yield layer(f"linear_f32_{layout}_decode_2x2048_to_2048", "linear",
                    [("x", x), ("w", w)],
                    f"%r = mnemo.linear %x, %w layout({layout}) : {ttype(x)}, {ttype(w)} -> "
                    f"{ttype((2, 1, 2048))}", (2, 1, 2048), {"layout": layout, "rel": 1e-5})
    x = (7, 1000)
    yield layer("row_max", "max", [("x", x)],
                f"%e = tensor.empty() : {ttype((7,))}\n"
                f"  %ninf = arith.constant 0xFF800000 : f32\n"
                f"  %f = linalg.fill ins(%ninf : f32) outs(%e : {ttype((7,))}) -> {ttype((7,))}\n"
                f"  %r = linalg.reduce ins(%x : {ttype(x)}) outs(%f : {ttype((7,))}) dimensions = [1]\n"
                f"    (%in: f32, %acc: f32) {{\n"
                f"      %m = arith.maximumf %in, %acc : f32\n"
                f"      linalg.yield %m : f32\n"
                f"    }}", (7,), {})
    x = (3, 33)
    yield layer("add", "add", [("a", x), ("b", x)],
                f"%e = tensor.empty() : {ttype(x)}\n  %r = linalg.add ins(%a, %b : {ttype(x)}, {ttype(x)}) "
                f"outs(%e : {ttype(x)}) -> {ttype(x)}", x, {})


def attention_cases():
    yield attention("att_bf16_gqa4_causal_s77_d128", 2, 8, 2, 77, 77, 128, 128, "bf16",
                    causal=True)
    yield attention("att_bf16_noncausal_33x45_d256", 1, 4, 4, 33, 45, 256, 256, "bf16")
    # 16-bit cases of the tensor-core kernel: lengths off the 64-row tiles,
    # GQA groups that do not divide the block (12/4), MQA, decode.
    yield attention("att_bf16_mha_100x130_d64", 2, 4, 4, 100, 130, 64, 64, "bf16")
    yield attention("att_bf16_mqa8_causal_s129_d128", 1, 8, 1, 129, 129, 128, 128, "bf16",
                    causal=True)
    yield attention("att_bf16_gqa3_causal_s70_d64", 1, 12, 4, 70, 70, 64, 64, "bf16",
                    causal=True)
    yield attention("att_bf16_decode_gqa4_kv1000_d128", 2, 32, 8, 1, 1000, 128, 128, "bf16",
                    causal=True, offset=999)
    yield attention("att_bf16_prefill_offset_5x300_d128", 1, 8, 2, 5, 300, 128, 128, "bf16",
                    causal=True, offset=295)
    yield attention("att_bf16_window40_s200_d64", 1, 4, 2, 200, 200, 64, 64, "bf16",
                    causal=True, window=40)
    yield attention("att_bf16_softcap_37x45_d64", 1, 4, 2, 37, 45, 64, 64, "bf16", softcap=2.0)
    yield attention("att_bf16_sink_causal_s50_d64", 1, 4, 2, 50, 50, 64, 64, "bf16",
                    causal=True, sink=True)
    yield attention("att_bf16_dv_ne_d_40x70_d96", 1, 4, 2, 40, 70, 96, 64, "bf16", causal=True)
    # Additive masks, read in the kernel: [B, 1, Sq, Skv] in f32 beside
    # bf16 tiles (an ONNX export's), a 2-D bf16 one with a softcap, a
    # per-head one over a split-KV decode.
    yield attention("att_bf16_mask_b1ss_gqa4_causal_s77_d128", 2, 8, 2, 77, 77, 128, 128,
                    "bf16", causal=True, mask=((2, 1, 77, 77), "f32"))
    yield attention("att_bf16_mask_2d_softcap_37x45_d64", 1, 4, 2, 37, 45, 64, 64, "bf16",
                    softcap=2.0, mask=((37, 45), "bf16"))
    yield attention("att_bf16_mask_heads_split_decode_kv700_d64", 1, 8, 2, 1, 700, 64, 64,
                    "bf16", causal=True, offset=699, mask=((1, 8, 1, 700), "f32"))
    yield attention("att_bf16_mask_lowest_gqa4_s50_d64", 2, 8, 2, 50, 50, 64, 64, "bf16",
                    mask=((2, 1, 50, 50), "f32", "lowest"))
    yield attention("att_bf16_d32_1x2048", 1, 8, 8, 1, 2048, 32, 32, "bf16")
    # Head dims above 128: wgmma with one N = Dv product (Gemma's 256,
    # DeepSeek's expanded MLA 192 / 128), mma.sync where D is no multiple of
    # 64 (160); split-KV decode and a window with a softcap at D 256.
    yield attention("att_bf16_gqa2_causal_s150_d256", 1, 8, 4, 150, 150, 256, 256, "bf16",
                    causal=True)
    yield attention("att_bf16_mla_causal_s100_d192_dv128", 2, 4, 4, 100, 100, 192, 128,
                    "bf16", causal=True)
    yield attention("att_bf16_d160_70x90", 1, 4, 2, 70, 90, 160, 160, "bf16")
    yield attention("att_bf16_split_decode_kv900_d256", 2, 8, 2, 1, 900, 256, 256, "bf16",
                    causal=True, offset=899)
    yield attention("att_bf16_window50_softcap_s130_d256", 1, 4, 2, 130, 130, 256, 256,
                    "bf16", causal=True, window=50, softcap=30.0)
    yield attention("att_f16_dv256_d64_45x77", 1, 4, 1, 45, 77, 64, 256, "f16")
    yield attention("att_f16_gqa4_causal_s77_d128", 2, 8, 2, 77, 77, 128, 128, "f16",
                    causal=True)
    # Split-KV (few blocks, many KV tiles): partials and their combine, with
    # a sink counted once, and causal splits that get no tile.
    yield attention("att_bf16_split_decode_sink_kv700_d64", 1, 8, 2, 1, 700, 64, 64, "bf16",
                    causal=True, offset=699, sink=True)
    yield attention("att_bf16_split_causal_s300_d64", 1, 2, 2, 300, 300, 64, 64, "bf16",
                    causal=True)
    # RoPE applied by the kernel on its Q tiles (and K tiles, where one query
    # tile reads them): decode and short prefill, GQA, prefill with K's
    # rope left alone, llama3 and YaRN scaling, interleaved partial rotary,
    # tables.
    yield attention("att_bf16_rope_qk_gqa4_s9_d128", 2, 8, 2, 9, 9, 128, 128, "bf16",
                    causal=True, rope={"on": "qk", "theta": 10000.0})
    yield attention("att_bf16_rope_qk_decode_kv300_d64", 1, 8, 2, 1, 300, 64, 64, "bf16",
                    causal=True, offset=299,
                    rope={"on": "qk", "theta": 500000.0,
                          "scaling": ("<llama3, factor = 8.0, original_max_position = 64, "
                                      "low_freq_factor = 1.0, high_freq_factor = 4.0>",
                                      {"kind": "llama3", "factor": 8.0, "original_max_position": 64,
                                       "low_freq_factor": 1.0, "high_freq_factor": 4.0})})
    yield attention("att_bf16_rope_qk_prefill_s100_d128", 1, 8, 2, 100, 100, 128, 128, "bf16",
                    causal=True, rope={"on": "qk", "theta": 10000.0,
                                       "scaling": ("<yarn, factor = 4.0, original_max_position = 32>",
                                                   {"kind": "yarn", "factor": 4.0,
                                                    "original_max_position": 32})})
    yield attention("att_bf16_rope_interleaved_r32_s20_d64", 1, 4, 4, 20, 20, 64, 64, "bf16",
                    causal=True, rope={"on": "qk", "theta": 10000.0, "r": 32, "interleaved": True})
    yield attention("att_bf16_rope_tables_q_40x70_d64", 1, 4, 2, 40, 70, 64, 64, "bf16",
                    causal=True, offset=30, rope={"on": "qk", "tables": True})
    # f32 attention on the TF32 kernel (3xTF32, the default: rows within
    # 2e-5 of float64 as f32's are; one product, --precision=tf32, 5e-3):
    # lengths off the tiles, GQA, split-KV decode with a sink, a window
    # with a softcap, D != Dv, D 256.
    x3 = {"rel": 2e-5}
    yield attention("att_f32_3xtf32_gqa4_causal_s100_d128", 2, 16, 4, 100, 100, 128, 128,
                    causal=True, **x3)
    yield attention("att_f32_3xtf32_split_decode_sink_kv700_d64", 1, 8, 2, 1, 700, 64, 64,
                    causal=True, offset=699, sink=True, **x3)
    yield attention("att_f32_3xtf32_window50_softcap_s130_d64", 1, 4, 2, 130, 130, 64, 64,
                    causal=True, window=50, softcap=30.0, **x3)
    yield attention("att_f32_3xtf32_dv_ne_d_40x70_d96", 1, 4, 2, 40, 70, 96, 64, causal=True,
                    **x3)
    yield attention("att_f32_3xtf32_d256_33x45", 1, 4, 4, 33, 45, 256, 256, **x3)
    yield attention("att_f32_3xtf32_mask_causal_s100_d128", 1, 8, 2, 100, 100, 128, 128,
                    causal=True, mask=((1, 1, 100, 100), "f32"), **x3)
    yield attention("att_f32_tf32_gqa4_causal_s77_d128", 2, 8, 2, 77, 77, 128, 128, causal=True,
                    rel=5e-3, flags=["--precision=tf32"])
    yield attention("att_gqa4_causal_s37_d32", 1, 8, 2, 37, 37, 32, 32, causal=True)
    yield attention("att_mha_noncausal_5x7_d8", 2, 2, 2, 5, 7, 8, 8)
    yield attention("att_mqa_19x23_d40", 2, 4, 1, 19, 23, 40, 40)
    yield attention("att_decode_offset44_d128", 2, 8, 2, 1, 45, 128, 128, causal=True, offset=44)
    yield attention("att_offset16_3x19_d64", 1, 4, 2, 3, 19, 64, 64, causal=True, offset=16)
    yield attention("att_window16_s67_d40", 1, 4, 2, 67, 67, 40, 40, causal=True, window=16)
    yield attention("att_softcap_11x13_d48", 1, 4, 2, 11, 13, 48, 48, softcap=2.0)
    yield attention("att_dv_ne_d_13x17", 2, 4, 1, 13, 17, 96, 64, causal=True)
    yield attention("att_gqa4_causal_s150_d64", 1, 8, 2, 150, 150, 64, 64, causal=True)


def grouped_linear_skips(out):
    """The grouped GEMM as a model's step gives it: i32 groups, blocks
    naming no expert (-1 and E, whose rows are 0) between valid ones, 300
    rows (the last block of 44), f32 weights as 3xTF32 (wgmma on sm_90a)."""
    return grouped_linear("grouped_f32_3xtf32_i32_skips_r300_e4_n64_k128", 300, 128, 64, 4,
                          flags=["--precision=3xtf32"], groups=[2, -1, 4, 0, 3], out=out)


def e4m3_values(codes):
    """The f32 values of E4M3 bytes (mnemo.dequantize's fp8_e4m3), decoded
    from their fields."""
    u = codes.view(np.uint8).astype(np.int64)
    e, m = (u >> 3) & 15, u & 7
    v = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1.0 + m / 8.0) * 2.0 ** (e - 7))
    return np.where(u & 0x80, -v, v)


def quantized_linear(out, name, rows, k, n, fmt, group, bias=False, rel=1e-5, flags=()):
    """A mnemo.linear of f32 rows through a mnemo.dequantize (int8 codes,
    E4M3 bytes or int4 codes two a byte, the even column in the low nibble;
    f32 scales in groups of `group` along K) against float64
    (codes decoded by e4m3_values, independent of the compiler's): decode
    rows read the codes in the tile, more rows the weight decoded whole."""
    rng = np.random.default_rng(sum(map(ord, name)))
    groups = -(-k // group)
    x = rng.standard_normal((*rows, k)).astype(np.float32)
    if fmt == "fp8_e4m3":  # every byte but the NaN codes 0x7f and 0xff
        codes = rng.integers(0, 255, size=(n, k)).astype(np.uint8)
        codes[(codes & 0x7F) == 0x7F] = 0x7E
        codes = codes.view(np.int8)
        values = e4m3_values(codes)
    elif fmt == "int4":
        values = rng.integers(-8, 8, size=(n, k)).astype(np.float64)
        nib = values.astype(np.int64) & 15
        codes = (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8).view(np.int8)
    else:
        codes = rng.integers(-128, 128, size=(n, k)).astype(np.int8)
        values = codes.astype(np.float64)
    scales = (rng.random((n, groups)) * 0.02 + 1e-3).astype(np.float32)
    w = values * np.repeat(scales.astype(np.float64), group, axis=1)[:, :k]
    ref = x.astype(np.float64) @ w.T
    ins = {"x": x, "c": codes, "s": scales}
    attr, extra = "", ""
    if bias:
        ins["b"] = rng.standard_normal(n).astype(np.float32)
        ref = ref + ins["b"]
        attr, extra = f" bias(%b : {ttype((n,))})", f", %b: {ttype((n,))}"
    np.save(os.path.join(out, f"{name}.reference.npy"), ref)
    inputs = []
    for key, v in ins.items():
        np.save(os.path.join(out, f"{name}.{key}.npy"), v)
        inputs.append({"name": key, "shape": v.shape, "file": f"{name}.{key}.npy"})
    xt, ct, st = ttype(x.shape), ttype(codes.shape, "i8"), ttype((n, groups))
    yt, wt = ttype((*rows, n)), ttype((n, k))
    mlir = (f"func.func @main(%x: {xt}, %c: {ct}, %s: {st}{extra}) -> {yt} {{\n"
            f"  %w = mnemo.dequantize %c, %s format({fmt}) group({group}) : {ct}, {st} -> {wt}\n"
            f"  %r = mnemo.linear %x, %w layout(out_in){attr} : {xt}, {wt} -> {yt}\n"
            f"  return %r : {yt}\n}}\n")
    return name, mlir, inputs, {"op": "stored", "file": f"{name}.reference.npy", "rel": rel}, \
        None, list(flags)


def quantized_linear_cases(out):
    # Decode rows reading E4M3 or int8 codes and their scales in the tile
    # (3xTF32: rows within 1e-5 of float64), or int4 codes two a byte:
    # K off the 32-code steps and
    # the groups (a partial last group), N off the tiles, split-K, a bias;
    # one TF32 product; and 100 rows, whose GEMM reads the weight decoded
    # whole.
    yield quantized_linear(out, "lin_fp8w_f32in_splitk_3x1x1040_to_264", (3, 1), 1040, 264,
                           "fp8_e4m3", 128)
    yield quantized_linear(out, "lin_int8w_f32in_bias_5x208_to_136", (5,), 208, 136, "int8", 32,
                           bias=True)
    yield quantized_linear(out, "lin_fp8w_tf32_2x1040_to_264", (2,), 1040, 264, "fp8_e4m3", 128,
                           rel=5e-3, flags=["--precision=tf32"])
    yield quantized_linear(out, "lin_int4w_f32in_splitk_2x1x256_to_136", (2, 1), 256, 136, "int4",
                           64)
    yield quantized_linear(out, "lin_int8w_f32in_100x208_to_136", (100,), 208, 136, "int8", 64)


def tiny_decoder(out):
    """The tiny decoder at the prompt's length, its constants as inputs."""
    src = open(os.path.join(ROOT, "examples/tiny-decoder/model.mlir")).read()
    ids = np.load(os.path.join(ROOT, "examples/tiny-decoder/prompt_ids.npy"))
    s = ids.shape[1]
    weights, args = [], []
    pat = re.compile(r'^  %(\w+) = arith\.constant dense<"0x([0-9A-F]+)"> : tensor<([0-9x]+)xf32>\n',
                     re.M)
    for m in pat.finditer(src):
        shape = tuple(int(d) for d in m.group(3).split("x"))
        data = np.frombuffer(bytes.fromhex(m.group(2)), "<f4").reshape(shape)
        np.save(os.path.join(out, f"tiny_decoder.{m.group(1)}.npy"), data)
        weights.append({"name": m.group(1), "shape": shape, "file": f"tiny_decoder.{m.group(1)}.npy"})
        args.append(f"%{m.group(1)}: {ttype(shape)}")
    src = pat.sub("", src)
    src = src.replace("tensor<1x?xi64> {mnemo.name = \"input_ids\"}",
                      f"tensor<1x{s}xi64> {{mnemo.name = \"input_ids\"}}, " + ", ".join(args))
    src = re.sub(r"^  %seq = tensor\.dim.*\n", "", src, flags=re.M)
    src = src.replace("tensor.empty(%seq)", "tensor.empty()").replace("%seq", str(s))
    src = src.replace("x?x", f"x{s}x").replace("x?x", f"x{s}x")
    np.save(os.path.join(out, "tiny_decoder.input_ids.npy"), ids)
    np.save(os.path.join(out, "tiny_decoder.reference.npy"),
            np.load(os.path.join(ROOT, "examples/tiny-decoder/reference_logits.npy")))
    inputs = [{"name": "input_ids", "shape": ids.shape, "file": "tiny_decoder.input_ids.npy"}] + weights
    return "tiny_decoder", src, inputs, {"op": "stored", "file": "tiny_decoder.reference.npy"}, 1e-4


def reference_model(out, path, dtype=None, precision=None):
    """A checkpoint directory or ONNX file with input_ids.npy and logits.npy
    beside it: compiled for the prompt's shape, checked against the logits
    (with `dtype`, a checkpoint's weight matrices stored in it: relative
    error within 2e-2; with `precision`, an f32 checkpoint's linear layers
    as TF32: 3xtf32 within 1e-4 as f32, tf32 relative 2e-2)."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    kind = "checkpoint" if os.path.isdir(path) else "onnx"
    name = f"{kind}_{os.path.basename(os.path.normpath(folder))}" + "".join(
        f"_{v}" for v in (dtype, precision) if v)
    ids = np.load(os.path.join(folder, "input_ids.npy")).astype(np.int64)
    np.save(os.path.join(out, f"{name}.input_ids.npy"), ids)
    np.save(os.path.join(out, f"{name}.reference.npy"),
            np.load(os.path.join(folder, "logits.npy")))
    inputs = [{"name": "input_ids", "shape": ids.shape, "file": f"{name}.input_ids.npy"}]
    shape = "x".join(str(d) for d in ids.shape)
    flags = [f"--input-shape=input_ids={shape}"]
    ref = {"op": "stored", "file": f"{name}.reference.npy"}
    if dtype:
        return name, path, inputs, {**ref, "rel": 2e-2}, None, flags + [f"--dtype={dtype}"]
    if precision:
        flags.append(f"--precision={precision}")
        if precision == "tf32":
            return name, path, inputs, {**ref, "rel": 2e-2}, None, flags
    return name, path, inputs, ref, 1e-4, flags


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--mnemoc", default=os.path.join(ROOT, "build/bin/mnemoc"))
    p.add_argument("--mnemo-run", help="the mnemo-run that dumps each artifact's plan "
                   "(default: beside --mnemoc)")
    p.add_argument("--target", default="sm_90a")
    p.add_argument("--models", nargs="*", default=[],
                   help="reference checkpoint directories / ONNX files")
    p.add_argument("--model-dtype", choices=["bf16", "f16"],
                   help="also compile the checkpoints with --dtype=this")
    p.add_argument("--model-precision", choices=["3xtf32", "tf32", "f32"],
                   help="also compile the f32 checkpoints with --precision=this "
                   "(3xtf32, the default, or tf32: their linear layers on the tensor "
                   "cores; f32: on the CUDA cores; logits within 1e-4, relative 2e-2 "
                   "per row for tf32)")
    p.add_argument("--weights-reference", action="store_true",
                   help="compile the checkpoints with --weights=reference: the artifacts "
                   "read their weights from the checkpoint files in place (which must be "
                   "at the same place relative to the artifact where the cases run)")
    p.add_argument("--models-only", action="store_true",
                   help="only the --models cases (no attention, layer or tiny-decoder case)")
    p.add_argument("--only", help="only the cases whose name this regular expression finds")
    a = p.parse_args()
    mnemo_run = a.mnemo_run or default_mnemo_run(a.mnemoc)
    os.makedirs(a.out, exist_ok=True)
    cases = [] if a.models_only else [
        c if len(c) == 6 else c + ([],)
        for c in list(attention_cases()) + list(linear_cases())
        + list(layer_cases()) + list(quantized_linear_cases(a.out))
        + [grouped_linear_skips(a.out), tiny_decoder(a.out)]]
    cases += [reference_model(a.out, m) for m in a.models]
    if a.model_dtype:
        cases += [reference_model(a.out, m, a.model_dtype) for m in a.models if os.path.isdir(m)]
    if a.model_precision:
        cases += [reference_model(a.out, m, precision=a.model_precision)
                  for m in a.models if os.path.isdir(m)]
    if a.weights_reference:
        cases = [c[:-1] + (c[-1] + ["--weights=reference"],)
                 if "\n" not in c[1] and os.path.isdir(c[1]) else c for c in cases]
    if a.only:
        cases = [c for c in cases if re.search(a.only, c[0])]
    manifest = []
    for name, source, inputs, ref, tol, flags in cases:
        if "\n" not in source:  # a model file or directory
            path = source
        else:
            path = os.path.join(a.out, name + ".mlir")
            open(path, "w").write(source)
        # The artifact holds the PTX; the model's weights become plan
        # buffers that the runtime (and check_ptx.py) upload once.
        artifact = os.path.join(a.out, name + ".mnemo")
        r = subprocess.run([a.mnemoc, path, f"--target={a.target}", "-o", artifact] + flags,
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"{name}: mnemoc failed:\n{r.stderr}")
        try:
            plan_json, _ = dump_plan(mnemo_run, artifact)
        except PlanError as e:
            sys.exit(f"{name}: {e}")
        manifest.append({"name": name, "artifact": os.path.basename(artifact),
                         "plan": os.path.basename(plan_json), "inputs": inputs,
                         "reference": ref, "tolerance": tol})
    json.dump(manifest, open(os.path.join(a.out, "cases.json"), "w"), indent=1)
    print(f"{len(manifest)} cases in {a.out}")


if __name__ == "__main__":
    main()

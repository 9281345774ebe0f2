#!/usr/bin/env python3
"""Executed AArch64 instructions of one GEMM, NEON and SVE, under qemu.

    scripts/count_gemm_a64.py [--rows 96] [--k 512] [--n 512] [--int8 | --int4]

A `mnemo.linear` of ROWS x K inputs and a constant K x N weight (out_in,
f32; with --int8 or --int4, signed codes with a scale per 32 inputs
behind `mnemo.dequantize`, decoded in the GEMM's loop; int4 two codes a
byte along K) is compiled by mnemoc for `aarch64` (NEON: 128-bit vectors, weights
packed in 12-column panels) and for `aarch64-sve` (scalable vectors,
weights read as [K, N]), and run once under qemu-aarch64 with one thread:
the NEON artifact on a CPU without SVE, the SVE one at 128, 256 and 512
bits. Each output is checked against numpy (float64, 1e-3), and the
instructions executed are counted (scripts/lib/qemu_counts.py); a run of
one input row, subtracted from each, stands for the process's fixed cost. The instruction counts are a proxy for speed
that does not depend on the machine; they do not see memory.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from qemu_counts import count  # noqa: E402

BIN = os.path.join(ROOT, "build", "bin")
A64 = os.path.join(ROOT, "build", "aarch64", "bin", "mnemo-run")


def hexed(a):
    return np.ascontiguousarray(a).tobytes().hex().upper()


def compile_model(work, target, k, n, weight, scales=None, fmt="int8"):
    src = os.path.join(work, "gemm.mlir")
    art = os.path.join(work, f"{target}.mnemo")
    if scales is None:
        w = (f'  %w = arith.constant dense<"0x{hexed(weight.astype(np.float32))}">'
             f' : tensor<{n}x{k}xf32>\n')
    else:
        g, kc = scales.shape[1], weight.shape[1]
        w = (f'  %c = arith.constant dense<"0x{hexed(weight)}"> : tensor<{n}x{kc}xi8>\n'
             f'  %s = arith.constant dense<"0x{hexed(scales)}"> : tensor<{n}x{g}xf32>\n'
             f'  %w = mnemo.dequantize %c, %s format({fmt}) group(32) : '
             f'tensor<{n}x{kc}xi8>, tensor<{n}x{g}xf32> -> tensor<{n}x{k}xf32>\n')
    with open(src, "w") as f:
        f.write(f'func.func @gemm(%x: tensor<?x{k}xf32> {{mnemo.name = "x"}})'
                f' -> (tensor<?x{n}xf32> {{mnemo.name = "y"}}) {{\n' + w +
                f'  %y = mnemo.linear %x, %w layout(out_in) : tensor<?x{k}xf32>,'
                f' tensor<{n}x{k}xf32> -> tensor<?x{n}xf32>\n'
                f'  return %y : tensor<?x{n}xf32>\n}}\n')
    subprocess.run([os.path.join(BIN, "mnemoc"), src, "-o", art,
                    f"--target={target}", "--max-batch=4096"], check=True)
    return art


def run(work, art, x, qemu, tag):
    xs = os.path.join(work, f"x-{tag}.npy")
    np.save(xs, x)
    out = os.path.join(work, tag)
    total, _ = count([A64, art, "--threads", "1", "--input", f"x={xs}",
                         "--output-dir", out], qemu)
    return total, np.load(os.path.join(out, "y.npy"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=96)
    ap.add_argument("--k", type=int, default=512)
    ap.add_argument("--n", type=int, default=512)
    codes = ap.add_mutually_exclusive_group()
    codes.add_argument("--int8", action="store_true")
    codes.add_argument("--int4", action="store_true")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((a.rows, a.k)).astype(np.float32)
    scales = None
    fmt = "int4" if a.int4 else "int8"
    if a.int8 or a.int4:
        bound = 8 if a.int4 else 128
        codes = rng.integers(-bound, bound, (a.n, a.k))
        scales = (0.01 * rng.random((a.n, -(-a.k // 32)))).astype(np.float32)
        dense = codes.astype(np.float64) * np.repeat(scales, 32, axis=1)[:, :a.k]
        w = codes.astype(np.int8)
        if a.int4:
            # Two codes a byte along K: column 2j low, 2j + 1 high.
            nib = np.pad(codes, ((0, 0), (0, a.k % 2))) & 15
            w = (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8)
    else:
        w = rng.standard_normal((a.n, a.k)).astype(np.float32)
        dense = w.astype(np.float64)
    want = x.astype(np.float64) @ dense.T
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for target, cpus in (("aarch64", ["cortex-a57"]),
                             ("aarch64-sve", ["max,sve128=on", "max,sve256=on",
                                              "max,sve512=on"])):
            art = compile_model(work, target, a.k, a.n, w, scales, fmt)
            for cpu in cpus:
                qemu = ["-cpu", cpu]
                base, _ = run(work, art, x[:1], qemu, "base")
                total, got = run(work, art, x, qemu, "gemm")
                err = float(np.abs(got - want).max())
                if err > 1e-3:
                    sys.exit(f"{target} on {cpu}: max |diff| {err:.3g}")
                rows.append((target, cpu, total - base, err))
    neon = rows[0][2]
    kind = f"{fmt}, scale per 32" if scales is not None else "f32"
    print(f"GEMM {a.rows}x{a.k} by {a.k}x{a.n} ({kind}) under qemu, one thread, "
          "the one-row run subtracted:")
    print("| target | qemu -cpu | instructions | vs NEON | max abs diff |")
    print("|---|---|---:|---:|---:|")
    for target, cpu, total, err in rows:
        print(f"| {target} | {cpu} | {total:,} | {total / neon:.3f} | {err:.2g} |")


if __name__ == "__main__":
    main()

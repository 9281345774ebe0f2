#!/usr/bin/env python3
"""Executed AArch64 instructions of one attention, tiled and plain, under qemu.

    scripts/count_attention_a64.py [--seq 512] [--heads 4] [--dim 64]
        [--target aarch64|aarch64-sve] [--sve-bits 128|256|512]

A causal `mnemo.attention` (batch 1, query and key length SEQ, HEADS heads of
DIM) is compiled by mnemoc for AArch64 twice: the FlashAttention tiling
(the default) and the reference decomposition (`--tile-attention=false`:
the whole score matrix, then softmax, then P V). Each runs once under
qemu-aarch64 with one thread; its output is checked against numpy
(float64, 1e-4), and the instructions the process executed are counted
(scripts/lib/qemu_counts.py), as is a run of the same program with an
input of one query row, which the script subtracts from both as the
process's fixed cost (loading, reading inputs). The ratio tiled / plain is
a proxy for AArch64 speed that does not depend on the machine.
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
SVE_BITS = [256]  # qemu's vector length for an SVE target (--sve-bits)
A64 = os.path.join(ROOT, "build", "aarch64", "bin", "mnemo-run")


def model(path, heads, seq, dim):
    t = f"tensor<1x{heads}x{seq}x{dim}xf32>"
    with open(path, "w") as f:
        f.write(f'func.func @attn(%q: {t} {{mnemo.name = "q"}}, %k: {t} {{mnemo.name = "k"}}, '
                f'%v: {t} {{mnemo.name = "v"}}) -> ({t} {{mnemo.name = "y"}}) {{\n'
                f'  %y = mnemo.attention %q, %k, %v causal : {t}, {t}, {t} -> {t}\n'
                f'  return %y : {t}\n}}\n')


def reference(q, k, v):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    n = s.shape[-1]
    s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def measure(work, name, heads, seq, dim, target, tiled):
    src = os.path.join(work, f"{name}.mlir")
    art = os.path.join(work, f"{name}.mnemo")
    model(src, heads, seq, dim)
    flags = [] if tiled else ["--tile-attention=false"]
    subprocess.run([os.path.join(BIN, "mnemoc"), src, "-o", art,
                    f"--target={target}", *flags], check=True)
    rng = np.random.default_rng(seq)
    ins = {n: rng.standard_normal((1, heads, seq, dim)).astype(np.float32)
           for n in "qkv"}
    args = [A64, art, "--threads", "1", "--output-dir", os.path.join(work, name)]
    for n, a in ins.items():
        np.save(os.path.join(work, f"{name}-{n}.npy"), a)
        args += ["--input", f"{n}={os.path.join(work, f'{name}-{n}.npy')}"]
    qemu = ["-cpu", f"max,sve{SVE_BITS[0]}=on"] if target.endswith("sve") else []
    total, _ = count(args, qemu)
    got = np.load(os.path.join(work, name, "y.npy"))
    err = float(np.abs(got - reference(*ins.values())).max())
    if err > 1e-4:
        sys.exit(f"{name}: max |diff| {err:.3g} against numpy")
    return total, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--target", default="aarch64")
    ap.add_argument("--sve-bits", type=int, default=256, choices=(128, 256, 512),
                    help="qemu's SVE vector length (an SVE target)")
    a = ap.parse_args()
    SVE_BITS[0] = a.sve_bits
    with tempfile.TemporaryDirectory() as work:
        base, _ = measure(work, "base", a.heads, 1, a.dim, a.target, True)
        tiled, e1 = measure(work, "tiled", a.heads, a.seq, a.dim, a.target, True)
        plain, e2 = measure(work, "plain", a.heads, a.seq, a.dim, a.target, False)
    t, p = tiled - base, plain - base
    print(f"causal attention 1x{a.heads}x{a.seq}x{a.dim} on {a.target} under qemu "
          f"(fixed cost {base} instructions subtracted):")
    print(f"  tiled: {t} instructions (max |diff| {e1:.2g})")
    print(f"  plain: {p} instructions (max |diff| {e2:.2g})")
    print(f"  tiled / plain: {t / p:.3f}")


if __name__ == "__main__":
    main()

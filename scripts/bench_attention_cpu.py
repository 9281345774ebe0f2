#!/usr/bin/env python3
"""CPU attention benchmark: FlashAttention-tiled vs the reference
decomposition, both compiled by mnemoc for the same target and run by
mnemo-run on the same random inputs.

    scripts/bench_attention_cpu.py [--target host] [--seq 128 2048] [--repeat 5]

FLOPs are counted as 4*B*Hq*Sq*Skv*D, halved for causal attention (the
convention of ../BASELINES.md), whether or not a kernel skips masked work.
Outputs of the two paths are compared with each other in the same run.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def model(b, hq, hkv, s, d):
    q = f"tensor<{b}x{hq}x{s}x{d}xf32>"
    kv = f"tensor<{b}x{hkv}x{s}x{d}xf32>"
    return f"""func.func @attention(%q: {q} {{mnemo.name = "q"}}, %k: {kv} {{mnemo.name = "k"}},
                     %v: {kv} {{mnemo.name = "v"}}) -> ({q} {{mnemo.name = "o"}}) {{
  %o = mnemo.attention %q, %k, %v causal : {q}, {kv}, {kv} -> {q}
  return %o : {q}
}}
"""


def run(cmd, runner=()):
    proc = subprocess.run(list(runner) + cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n{proc.stderr}")
    return proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="host")
    ap.add_argument("--seq", type=int, nargs="+", default=[128, 2048])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", default="8/2")
    ap.add_argument("--dim", type=int, default=128)
    args = ap.parse_args()
    hq, hkv = (int(x) for x in args.heads.split("/"))
    runner = []
    mnemo_run = os.environ.get("MNEMO_RUN", os.path.join(BIN, "mnemo-run"))
    if args.target == "aarch64":
        runner = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
        mnemo_run = os.path.join(ROOT, "build", "aarch64", "bin", "mnemo-run")

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in args.seq:
            src = os.path.join(tmp, f"attn{s}.mlir")
            with open(src, "w") as f:
                f.write(model(args.batch, hq, hkv, s, args.dim))
            rng = np.random.default_rng(s)
            inputs = []
            for name, heads in (("q", hq), ("k", hkv), ("v", hkv)):
                path = os.path.join(tmp, f"{name}{s}.npy")
                np.save(path, rng.standard_normal(
                    (args.batch, heads, s, args.dim)).astype(np.float32))
                inputs += ["--input", f"{name}={path}"]
            flops = 4 * args.batch * hq * s * s * args.dim / 2
            result = {}
            for label, flag in (("tiled", "--tile-attention=true"),
                                ("decomposed", "--tile-attention=false")):
                art = os.path.join(tmp, f"{label}{s}.mnemo")
                run([os.path.join(BIN, "mnemoc"), src, "-o", art,
                     f"--target={args.target}", flag])
                out = os.path.join(tmp, label)
                text = run([mnemo_run, art, *inputs, "--output-dir", out,
                            "--repeat", str(args.repeat)], runner)
                ms = float(re.search(r"latency: ([0-9.]+) ms", text).group(1))
                result[label] = (ms, np.load(os.path.join(out, "o.npy")))
            diff = float(np.abs(result["tiled"][1] - result["decomposed"][1]).max())
            t_ms, d_ms = result["tiled"][0], result["decomposed"][0]
            rows.append((s, t_ms, flops / t_ms / 1e6, d_ms, flops / d_ms / 1e6,
                         d_ms / t_ms, diff))

    print(f"attention B{args.batch} Hq/Hkv {hq}/{hkv} D{args.dim} causal f32, "
          f"target {args.target}, median of {args.repeat}")
    print("| S | tiled ms | tiled GFLOP/s | decomposed ms | decomposed GFLOP/s "
          "| speed-up | max abs diff |")
    print("|---|---|---|---|---|---|---|")
    for s, t, tg, dd, dg, up, diff in rows:
        print(f"| {s} | {t:.2f} | {tg:.2f} | {dd:.2f} | {dg:.2f} | {up:.2f}x "
              f"| {diff:.2e} |")


if __name__ == "__main__":
    main()

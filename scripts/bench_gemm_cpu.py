#!/usr/bin/env python3
"""Single-thread f32 GEMM on the CPU against the core's FMA peak.

    scripts/bench_gemm_cpu.py [--size 1024] [--repeat 30] [--aarch64-size 256]

The GEMM is one `mnemo.linear` (x [S, S] times a constant [S, S] weight)
compiled by mnemoc for the host and run by mnemo-run with one thread; its
output is checked against numpy (float64). The peak is measured the same
way: a kernel of 24 independent chains of vector FMAs on registers (no
memory traffic), written in the vector dialect at the host's vector width
and compiled by mnemoc. GFLOP/s = 2 S^3 / time; the ratio is the GEMM's
share of that peak.

With --aarch64-size N (default 256; 0 skips it), the GEMM is also compiled
for AArch64 and run under qemu-aarch64 with `-d in_asm,exec,nochain`: the
executed instructions of the whole process are counted from qemu's log,
with the `fmla` among them. On a core with two 128-bit FMA pipes and a
4-wide issue (Cortex-A76, Neoverse N1), the instruction mix bounds the FMA
pipes' useful work at (S^3 / 4 / 2) / max(fmla / 2, all / 4).
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
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from qemu_counts import count  # noqa: E402


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode:
        sys.exit(f"bench_gemm_cpu: {' '.join(cmd)} failed:\n{proc.stderr}")
    return proc.stdout


def latency_ms(out):
    m = re.search(r"latency: ([0-9.e+-]+) ms", out)
    if not m:
        sys.exit(f"bench_gemm_cpu: no latency in:\n{out}")
    return float(m.group(1))


def gemm_model(path, size, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((size, size)).astype(np.float32)
    x = rng.standard_normal((size, size)).astype(np.float32)
    t = f"tensor<{size}x{size}xf32>"
    with open(path, "w") as f:
        f.write(f'func.func @gemm(%x: {t} {{mnemo.name = "x"}}) -> ({t} {{mnemo.name = "y"}}) {{\n'
                f'  %w = arith.constant dense<"0x{w.tobytes().hex().upper()}"> : {t}\n'
                f'  %y = mnemo.linear %x, %w layout(in_out) : {t}, {t} -> {t}\n'
                f'  return %y : {t}\n}}\n')
    return x, (x.astype(np.float64) @ w.astype(np.float64))


def peak_model(path, lanes, chains=24, iters=10_000_000):
    v = f"vector<{lanes}xf32>"
    lines = [f'func.func @peak(%x: tensor<{lanes}xf32> {{mnemo.name = "x"}}) -> (tensor<{lanes}xf32> {{mnemo.name = "y"}}) {{',
             "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
             f"  %n = arith.constant {iters} : index", "  %pad = arith.constant 0.0 : f32",
             f"  %a = vector.transfer_read %x[%c0], %pad : tensor<{lanes}xf32>, {v}",
             f"  %b = arith.constant dense<0.999999> : {v}"]
    inits = ", ".join(f"%i{k} = %a" for k in range(chains))
    types = ", ".join([v] * chains)
    lines.append(f"  %r:{chains} = scf.for %i = %c0 to %n step %c1 iter_args({inits}) -> ({types}) {{")
    lines += [f"    %f{k} = vector.fma %i{k}, %b, %a : {v}" for k in range(chains)]
    lines.append("    scf.yield " + ", ".join(f"%f{k}" for k in range(chains)) + f" : {types}")
    lines.append("  }")
    acc = "%r#0"
    for k in range(1, chains):
        lines.append(f"  %s{k} = arith.addf {acc}, %r#{k} : {v}")
        acc = f"%s{k}"
    lines += [f"  %e = tensor.empty() : tensor<{lanes}xf32>",
              f"  %y = vector.transfer_write {acc}, %e[%c0] : {v}, tensor<{lanes}xf32>",
              f"  return %y : tensor<{lanes}xf32>", "}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 2.0 * chains * lanes * iters


def host_lanes():
    flags = open("/proc/cpuinfo").read()
    return 16 if " avx512f" in flags else 8 if " avx2" in flags else 4


def qemu_counts(work, size):
    model = os.path.join(work, "a64.mlir")
    x, _ = gemm_model(model, size, seed=1)
    np.save(os.path.join(work, "ax.npy"), x)
    art = os.path.join(work, "a64.mnemo")
    run([os.path.join(BIN, "mnemoc"), model, "-o", art, "--target=aarch64"])
    return count([os.path.join(ROOT, "build", "aarch64", "bin", "mnemo-run"), art,
                  "--input", f"x={os.path.join(work, 'ax.npy')}", "--threads", "1"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=20,
                    help="timed GEMM runs per round (their median)")
    ap.add_argument("--rounds", type=int, default=7,
                    help="rounds of GEMM and peak measurements")
    ap.add_argument("--aarch64-size", type=int, default=256)
    args = ap.parse_args()
    mnemoc, mnemo_run = os.path.join(BIN, "mnemoc"), os.path.join(BIN, "mnemo-run")
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "gemm.mlir")
        x, want = gemm_model(model, args.size)
        np.save(os.path.join(work, "x.npy"), x)
        run([mnemoc, model, "-o", os.path.join(work, "gemm.mnemo"), "--target=host"])
        lanes = host_lanes()
        flops = peak_model(os.path.join(work, "peak.mlir"), lanes)
        np.save(os.path.join(work, "p.npy"), np.ones(lanes, np.float32))
        run([mnemoc, os.path.join(work, "peak.mlir"), "-o", os.path.join(work, "peak.mnemo"),
             "--target=host"])
        # Rounds of GEMM then peak, each ratio taken within its round: the
        # machine's speed drifts between runs more than within one.
        gemms, peaks, rel = [], [], 0.0
        for _ in range(args.rounds):
            out = run([mnemo_run, os.path.join(work, "gemm.mnemo"), "--input",
                       f"x={os.path.join(work, 'x.npy')}", "--output-dir", work,
                       "--repeat", str(args.repeat), "--threads", "1"])
            got = np.load(os.path.join(work, "y.npy")).astype(np.float64)
            rel = max(rel, float(np.max(np.abs(got - want) / (np.abs(want).max()))))
            gemms.append(2.0 * args.size ** 3 / latency_ms(out) / 1e6)
            pout = run([mnemo_run, os.path.join(work, "peak.mnemo"), "--input",
                        f"x={os.path.join(work, 'p.npy')}",
                        "--repeat", "3", "--threads", "1"])
            peaks.append(flops / latency_ms(pout) / 1e6)
        ratios = sorted(100 * g / p for g, p in zip(gemms, peaks))
        gemm, peak = float(np.median(gemms)), float(np.median(peaks))
        print(f"host GEMM {args.size}^3, 1 thread: {gemm:.1f} GFLOP/s, median of "
              f"{args.rounds} rounds (max |diff| / max |y| {rel:.2g})")
        print(f"host FMA peak ({lanes} lanes, 24 chains), 1 thread: {peak:.1f} GFLOP/s")
        print(f"GEMM / peak: {float(np.median(ratios)):.1f}% (median of the rounds' "
              f"ratios; range {ratios[0]:.1f}-{ratios[-1]:.1f}%)")
        if args.aarch64_size:
            total, fmla = qemu_counts(work, args.aarch64_size)
            ideal = args.aarch64_size ** 3 // 4
            bound = (ideal / 2) / max(fmla / 2, total / 4)
            print(f"aarch64 GEMM {args.aarch64_size}^3 under qemu: {total} instructions "
                  f"executed, {fmla} fmla ({100 * fmla / total:.1f}%; {ideal} needed "
                  f"without padding); useful FMAs fill at most {100 * bound:.0f}% of "
                  f"the FMA peak of a 4-wide core with two FMA pipes")


if __name__ == "__main__":
    main()

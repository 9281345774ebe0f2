#!/usr/bin/env python3
"""A mixture-of-experts layer routed sparsely against its dense form.

    scripts/bench_moe.py prepare DIR [--target host|sm_90a] [--experts 256]
        [--top 8] [--hidden 7168] [--inter 2048] [--tokens 256]
        [--constant-weights] [--mnemoc PATH]
    scripts/bench_moe.py run DIR [--device cpu|cuda] [--rounds 3]
        [--repeat 5] [--threads 0 (CPU only)] [--mnemo-run PATH]

`prepare` (where mnemoc is) writes two functions of one `mnemo.experts`
layer, DeepSeek-V3's by default (256 SwiGLU experts of hidden 7168 and
width 2048, 8 per token, 256 tokens, f16 weights), and compiles them for
the target into DIR: `sparse` gives each token its 8 experts; `dense`
gives every token all of them, with routing weights that are zero but for
the same 8, so that it computes the same output with every expert run
(the dense form the sparse one is measured against). The experts'
weights are function inputs: `run` makes them from a fixed seed (the same
values on every machine), so the artifacts stay small.

`run` (where mnemo-run runs: DIR/bin/mnemo-run, else build/bin/mnemo-run)
makes the inputs, runs the two artifacts in alternating rounds with
`mnemo-run --repeat`, checks that their outputs agree (relative L2 1e-3,
the sums' orders differ), and prints each round's medians and the ratio
dense / sparse: the time in proportion to the active experts would give
experts / top (32 for DeepSeek-V3's routing).
"""

import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def expert_weights(e, h, i):
    """gate, up, down from seed 0, scaled as a trained layer's
    (1/sqrt(fan-in)), drawn an expert at a time (f32 draws stay small)."""
    rng = np.random.default_rng(0)
    for name, shape, fan in (("gate", (e, i, h), h), ("up", (e, i, h), h),
                             ("down", (e, h, i), i)):
        yield name, shape, (
            (rng.standard_normal(shape[1:], np.float32) / np.sqrt(fan))
            .astype(np.float16) for _ in range(e))


def model(k, t, h, i, e, width, constants=None):
    x = f"tensor<1x{t}x{h}xf32>"
    gu = f"tensor<{e}x{i}x{h}xf16>"
    dn = f"tensor<{e}x{h}x{i}xf16>"
    idx = f"tensor<1x{t}x{width}xi64>"
    w = f"tensor<1x{t}x{width}xf32>"
    args = [f'%x: {x} {{mnemo.name = "x"}}']
    body = ""
    for name, ty in (("gate", gu), ("up", gu), ("down", dn)):
        if constants is None:
            args.append(f'%{name}: {ty} {{mnemo.name = "{name}"}}')
        else:
            body += (f'  %{name} = arith.constant dense<"0x'
                     f'{constants[name].tobytes().hex().upper()}"> : {ty}\n')
    args += [f'%idx: {idx} {{mnemo.name = "indices"}}',
             f'%w: {w} {{mnemo.name = "weights"}}']
    return (f'func.func @{k}({", ".join(args)}) -> ({x} {{mnemo.name = "y"}}) {{\n'
            + body +
            f'  %y = mnemo.experts %x, %gate, %up, %down, %idx, %w\n'
            f'      : {x}, {gu}, {gu}, {dn}, {idx}, {w} -> {x}\n'
            f'  return %y : {x}\n}}\n')


def prepare(a):
    os.makedirs(a.dir, exist_ok=True)
    mnemoc = a.mnemoc or os.path.join(ROOT, "build", "bin", "mnemoc")
    constants = None
    if a.constant_weights:
        constants = {name: np.stack(list(parts)) for name, _, parts in
                     expert_weights(a.experts, a.hidden, a.inter)}
    for kind, width in (("sparse", a.top), ("dense", a.experts)):
        src = os.path.join(a.dir, f"{kind}.mlir")
        with open(src, "w") as f:
            f.write(model(kind, a.tokens, a.hidden, a.inter, a.experts, width,
                          constants))
        subprocess.run([mnemoc, src, f"--target={a.target}", "-o",
                        os.path.join(a.dir, f"{kind}.mnemo")], check=True)
    with open(os.path.join(a.dir, "shape.json"), "w") as f:
        json.dump({"experts": a.experts, "top": a.top, "hidden": a.hidden,
                   "inter": a.inter, "tokens": a.tokens, "target": a.target,
                   "constant_weights": a.constant_weights}, f)
    print(f"prepared {a.dir}: sparse.mnemo, dense.mnemo ({a.target})")


def inputs(a, s):
    """The inputs' .npy files in DIR/in (made once, from seed 0)."""
    d = os.path.join(a.dir, "in")
    os.makedirs(d, exist_ok=True)
    e, k, h, i, t = s["experts"], s["top"], s["hidden"], s["inter"], s["tokens"]
    names = {}

    def save(name, array):
        path = os.path.join(d, f"{name}.npy")
        if not os.path.exists(path):
            np.save(path, array)
        names[name] = path

    if not s.get("constant_weights"):
        for name, shape, parts in expert_weights(e, h, i):
            path = os.path.join(d, f"{name}.npy")
            if not os.path.exists(path):
                out = np.lib.format.open_memmap(path, "w+", np.float16, shape)
                for x, part in enumerate(parts):
                    out[x] = part
                out.flush()
                del out
            names[name] = path
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, t, h), np.float32)
    save("x", x)
    picked = np.stack([rng.choice(e, k, replace=False) for _ in range(t)])
    logits = rng.standard_normal((t, k)).astype(np.float32)
    weights = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    save("sparse_indices", picked[None].astype(np.int64))
    save("sparse_weights", weights[None].astype(np.float32))
    dense = np.zeros((t, e), np.float32)
    np.put_along_axis(dense, picked, weights, axis=1)
    save("dense_indices", np.tile(np.arange(e, dtype=np.int64), (1, t, 1)))
    save("dense_weights", dense[None])
    return names


def run_one(a, runner, kind, names):
    out = os.path.join(a.dir, f"out_{kind}")
    args = [runner, os.path.join(a.dir, f"{kind}.mnemo"), "--repeat",
            str(a.repeat), "--output-dir", out, "--device", a.device]
    if a.device == "cpu":
        args += ["--threads", str(a.threads)]
    for n in ("x", "gate", "up", "down"):
        if n in names:
            args += ["--input", f"{n}={names[n]}"]
    args += ["--input", f"indices={names[kind + '_indices']}",
             "--input", f"weights={names[kind + '_weights']}"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{kind}: mnemo-run failed (exit {done.returncode}): "
                 f"{done.stderr.strip() or done.stdout.strip()}")
    text = done.stdout
    ms = float(re.search(r"latency: ([0-9.eE+-]+) ms", text).group(1))
    return ms, np.load(os.path.join(out, "y.npy"))


def run(a):
    with open(os.path.join(a.dir, "shape.json")) as f:
        s = json.load(f)
    runner = a.mnemo_run or os.path.join(a.dir, "bin", "mnemo-run")
    if not a.mnemo_run and not os.path.exists(runner):
        runner = os.path.join(ROOT, "build", "bin", "mnemo-run")
    names = inputs(a, s)
    print(f"MoE layer: {s['experts']} experts of hidden {s['hidden']} and "
          f"width {s['inter']}, {s['top']} per token, {s['tokens']} tokens, "
          f"f16 weights ({'constants' if s.get('constant_weights') else 'inputs'}), "
          f"{s['target']} on {a.device} "
          f"(mnemo-run --repeat {a.repeat}, medians)")
    print("| round | sparse ms | dense ms | dense / sparse |")
    print("|---:|---:|---:|---:|")
    ratios = []
    for r in range(a.rounds):
        sparse, ys = run_one(a, runner, "sparse", names)
        dense, yd = run_one(a, runner, "dense", names)
        rel = float(np.linalg.norm(ys - yd) / np.linalg.norm(yd))
        if rel > 1e-3:
            sys.exit(f"round {r + 1}: sparse and dense outputs differ "
                     f"(relative L2 {rel:.3g})")
        ratios.append(dense / sparse)
        print(f"| {r + 1} | {sparse:.3f} | {dense:.3f} | {dense / sparse:.1f} |")
    print(f"dense / sparse: {min(ratios):.1f} to {max(ratios):.1f} "
          f"(proportional to the active experts: "
          f"{s['experts'] / s['top']:.0f}); outputs agree")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("dir")
    p.add_argument("--target", default="host")
    p.add_argument("--experts", type=int, default=256)
    p.add_argument("--top", type=int, default=8)
    p.add_argument("--hidden", type=int, default=7168)
    p.add_argument("--inter", type=int, default=2048)
    p.add_argument("--tokens", type=int, default=256)
    p.add_argument("--constant-weights", action="store_true",
                   help="the weights as constants of the artifacts, as a "
                        "compiled checkpoint has them (small shapes only)")
    p.add_argument("--mnemoc", help="the compiler (default build/bin/mnemoc)")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--device", default="cpu")
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--repeat", type=int, default=5)
    r.add_argument("--threads", type=int, default=0)
    r.add_argument("--mnemo-run", help="the runner (default DIR/bin/mnemo-run, "
                                       "else build/bin/mnemo-run)")
    a = ap.parse_args()
    prepare(a) if a.cmd == "prepare" else run(a)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What an additive mask costs the attention kernel: the same shapes with and without one.

    python3 scripts/gpu/bench_mask.py prepare OUT_DIR [--mnemoc build/bin/mnemoc]
    python3 scripts/gpu/bench_mask.py run OUT_DIR [--only REGEX]

`prepare` (where mnemoc is) writes each case's `mnemo.attention` (bf16 Q,
K, V; a mask of the case's shape and type, or none), its artifact and
launch plan. `run` (on the GPU machine: torch, CuPy) times each plan on four
sets of random inputs by CUDA events behind a sleep kernel (the device's
time alone, bench_attention's `bench(..., queued=True)`) and prints the
time and its ratio to the same shape without a mask. The outputs are not
checked here: check_ptx.py's mask cases check the kernel row by row.
"""

import json
import os
import sys

from bench_cases import main

CASES = [
    # name, B, Hq, Hkv, Sq, Skv, mask shape (None: no mask), mask type
    ("prefill_s1024", 1, 32, 8, 1024, 1024, None, None),
    ("prefill_s1024_mask_f32", 1, 32, 8, 1024, 1024, (1, 1, 1024, 1024), "f32"),
    ("prefill_s1024_mask_bf16", 1, 32, 8, 1024, 1024, (1, 1, 1024, 1024), "bf16"),
    ("prefill_s1024_mask_heads_f32", 1, 32, 8, 1024, 1024, (1, 32, 1024, 1024), "f32"),
    ("decode_b32_kv4096", 32, 32, 8, 1, 4096, None, None),
    ("decode_b32_kv4096_mask_f32", 32, 32, 8, 1, 4096, (32, 1, 1, 4096), "f32"),
]
D = 128


def cases():
    return [dict(name=n, B=b, Hq=hq, Hkv=hkv, Sq=sq, Skv=skv, mask=m, mask_type=t)
            for n, b, hq, hkv, sq, skv, m, t in CASES]


def mlir_of(case):
    q = f"tensor<{case['B']}x{case['Hq']}x{case['Sq']}x{D}xbf16>"
    kv = f"tensor<{case['B']}x{case['Hkv']}x{case['Skv']}x{D}xbf16>"
    arg, attr = "", ""
    if case["mask"]:
        m = f"tensor<{'x'.join(map(str, case['mask']))}x{case['mask_type']}>"
        arg, attr = f", %m: {m}", f" mask(%m : {m})"
    return (f"func.func @main(%q: {q}, %k: {kv}, %v: {kv}{arg}) -> {q} {{\n"
            f"  %r = mnemo.attention %q, %k, %v{attr} : {q}, {kv}, {kv} -> {q}\n"
            f"  return %r : {q}\n}}\n")


def prepare(a):
    from bench_cases import prepare_cases
    prepare_cases(a, cases(), mlir_of)


def run(a):
    import re
    import torch
    from bench_attention import MnemoPlan, bench
    with open(os.path.join(a.dir, "cases.json")) as f:
        todo = [c for c in json.load(f) if not a.only or re.search(a.only, c["name"])]
    dtypes = {"bf16": torch.bfloat16, "f32": torch.float32}
    times, results = {}, []
    for case in todo:
        shapes = [(case["B"], case["Hq"], case["Sq"], D), (case["B"], case["Hkv"], case["Skv"], D),
                  (case["B"], case["Hkv"], case["Skv"], D)]
        types = ["bf16"] * 3
        if case["mask"]:
            shapes.append(tuple(case["mask"]))
            types.append(case["mask_type"])
        sets = [[torch.randn(s, device="cuda").to(dtypes[t]) for s, t in zip(shapes, types)]
                for _ in range(4)]
        plan = MnemoPlan(os.path.join(a.dir, case["name"] + ".plan.json"), sets)
        plan(0)
        torch.cuda.synchronize()
        ms = bench(plan, 5, queued=True)["ms"]
        times[case["name"]] = ms
        base = next((n for n in times if case["name"].startswith(n) and n != case["name"]),
                    None)
        ratio = f"  {times[base] / ms:.2f}x the speed without" if base else ""
        print(f"{case['name']:32} {ms * 1e3:8.1f} us{ratio}", flush=True)
        results.append({"case": case, "ms": ms})
    out = a.out or a.dir
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "bench_mask.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(__doc__.splitlines()[0], prepare, run))

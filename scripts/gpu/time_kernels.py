#!/usr/bin/env python3
"""Times each kernel of a case's launch plan on the GPU.

    python3 scripts/gpu/time_kernels.py CASE_DIR CASE [CASE ...] [--top N]

CASE_DIR is written by scripts/gpu/make_cases.py. Each named case's plan
(CASE.plan.json, plan.py's load_plan) is read, the PTX inside its artifact
loaded with CuPy, its inputs filled as check_ptx.py fills them (stored
files, token ids, positions, normal values), its weights uploaded from the
artifact, its temporaries zeroed, and every launch of the plan timed with
CUDA events (median of --reps runs after one warm-up). Prints the total
and the N slowest kernels with their grid and block: where a model's time
goes.
"""

import argparse
import json
import os
import sys

import numpy as np
import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_ptx  # noqa: E402


def inputs_of(case, case_dir, rng):
    out = {}
    for inp in case["inputs"]:
        shape = tuple(inp["shape"])
        if "file" in inp:
            out[inp["name"]] = np.load(os.path.join(case_dir, inp["file"]))
        elif "ints" in inp:
            out[inp["name"]] = rng.integers(0, inp["ints"], size=shape).astype(np.int64)
        elif inp.get("positions"):
            out[inp["name"]] = np.arange(shape[-1], dtype=np.int64)
        else:
            out[inp["name"]] = rng.standard_normal(shape).astype(np.float32)
    return out


def time_case(case, case_dir, reps, top):
    plan = check_ptx.load_plan(os.path.join(case_dir, case["plan"]))
    module = check_ptx.load_module(plan)
    inputs = inputs_of(case, case_dir, np.random.default_rng(0))
    buffers = check_ptx.upload_buffers(plan, list(inputs.values()), fill=0)
    launches = check_ptx.plan_launches(module, plan, buffers.__getitem__)
    times = np.zeros((reps, len(launches)))
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for rep in range(reps + 1):
        for i, (kernel, grid, block, args, shared) in enumerate(launches):
            start.record()
            kernel(grid, block, args, shared_mem=shared)
            stop.record()
            stop.synchronize()
            if rep:
                times[rep - 1, i] = cp.cuda.get_elapsed_time(start, stop)
    ms = np.median(times, axis=0)
    print(f"== {case['name']}: {len(launches)} launches, {ms.sum():.3f} ms of kernels")
    for i in np.argsort(-ms)[:top]:
        launch = plan["launches"][i]
        grid, block = ("x".join(map(str, launch[k])) for k in ("grid", "block"))
        print(f"  {ms[i]:8.3f} ms  {launch['kernel']:28} grid {grid}  block {block}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cases")
    p.add_argument("names", nargs="+")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--top", type=int, default=8)
    a = p.parse_args()
    manifest = {c["name"]: c for c in json.load(open(os.path.join(a.cases, "cases.json")))}
    for name in a.names:
        if name not in manifest:
            sys.exit(f"time_kernels: no case '{name}' in {a.cases}")
        time_case(manifest[name], a.cases, a.reps, a.top)


if __name__ == "__main__":
    main()

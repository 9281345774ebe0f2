#!/usr/bin/env python3
"""Times each kernel of a case's launch plan on the GPU.

    python3 scripts/gpu/time_kernels.py CASE_DIR CASE [CASE ...] [--top N]

CASE_DIR is written by scripts/gpu/make_cases.py. Each named case's PTX is
loaded with CuPy, its inputs filled as check_ptx.py fills them (stored
files, token ids, positions, normal values), its temporaries zeroed, and
every launch of the plan timed with CUDA events (median of --reps runs
after one warm-up). Prints the total and the N slowest kernels with their
grid and block: where a model's time goes.
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
    ptx = os.path.join(case_dir, case["ptx"])
    plan = check_ptx.parse_plan(open(ptx).read())
    module = cp.RawModule(path=ptx)
    inputs = inputs_of(case, case_dir, np.random.default_rng(0))
    names = list(inputs)
    dtypes = {i["name"]: i.get("dtype", "f32") for i in case["inputs"]}
    buffers = {}
    for idx, (kind, ref, size) in plan["buffers"].items():
        if kind == "input":
            name = names[int(ref)]
            buffers[idx] = check_ptx.device_array(inputs[name], dtypes[name])
        elif kind == "temporary":
            buffers[idx] = cp.zeros(size, dtype=cp.uint8)
        elif kind != "tensormap":
            raise RuntimeError(f"buffer {idx}: {kind} buffers are not supported here")
    for idx in plan["tensormaps"]:
        src, desc = check_ptx.tensor_map_source(plan, idx)
        encoded = check_ptx.encode_tensor_map(desc, buffers[src].data.ptr, buffers[src].nbytes)
        buffers[idx] = cp.asarray(np.frombuffer(encoded, np.uint8))
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
        print(f"  {ms[i]:8.3f} ms  {launch['kernel']:28} grid {'x'.join(launch['grid'])}"
              f"  block {'x'.join(launch['block'])}")


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

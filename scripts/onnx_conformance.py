#!/usr/bin/env python3
"""Runs ONNX's own node test cases (exported by scripts/refgen/onnx_conformance.py
into one folder per case: model.onnx, input_<i>.npy, output_<i>.npy, meta.json)
through mnemoc (host target) and mnemo-run, and compares every output with the
expected one at the case's own tolerances (|got - want| <= atol + rtol*|want|,
NaN only where NaN is expected), as onnx's backend test runner does.

Usage: onnx_conformance.py [--cases DIR] [--tools DIR] [--jobs N] [--verbose]

Prints one line per case that does not pass (or every case with --verbose),
then a summary that puts the count next to ONNX Runtime's on the same cases
(recorded in each meta.json when the cases were exported). Cases with bfloat16
tensors are counted apart: the npy files hold them upcast to float32.
Exit status 0 when every non-bf16 case ran (pass or fail), 1 on a usage error.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def compare(got, want, rtol, atol):
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    nan_want = np.isnan(want64)
    if (np.isnan(got64) != nan_want).any():
        return "NaN where none is expected, or a number where NaN is"
    both = ~nan_want
    g, w = got64[both], want64[both]
    inf = np.isinf(w)
    if (g[inf] != w[inf]).any():
        return "infinity mismatch"
    g, w = g[~inf], w[~inf]
    bad = np.abs(g - w) > atol + rtol * np.abs(w)
    if bad.any():
        return f"{int(bad.sum())} of {w.size} values off, max |diff| " \
               f"{float(np.abs(g - w).max()):.3g}"
    return None


def run_case(folder, tools, work, tolerance):
    meta = json.load(open(os.path.join(folder, "meta.json")))
    name = meta.get("name") or meta.get("case") or os.path.basename(folder)
    if meta.get("bf16"):
        return name, "bf16", "bfloat16 tensors", meta
    art = os.path.join(work, name + ".mnemo")
    res = subprocess.run([os.path.join(tools, "mnemoc"),
                          os.path.join(folder, "model.onnx"), "-o", art],
                         capture_output=True, text=True)
    if res.returncode != 0:
        why = (res.stderr.strip().splitlines() or ["no message"])[-1]
        return name, "not compiled", why, meta
    out = os.path.join(work, name)
    args = [os.path.join(tools, "mnemo-run"), art, "--output-dir", out]
    for i, inp in enumerate(meta["inputs"]):
        args += ["--input", f"{inp['name']}={os.path.join(folder, f'input_{i}.npy')}"]
    res = subprocess.run(args, capture_output=True, text=True)
    if res.returncode != 0:
        why = (res.stderr.strip().splitlines() or ["no message"])[-1]
        return name, "not run", why, meta
    rtol = meta.get("case_rtol", tolerance[0])
    atol = meta.get("case_atol", tolerance[1])
    for i, o in enumerate(meta["outputs"]):
        want = np.load(os.path.join(folder, f"output_{i}.npy"))
        path = os.path.join(out, o["name"] + ".npy")
        if not os.path.exists(path):
            return name, "fail", f"output {o['name']} not written", meta
        why = compare(np.load(path), want, rtol, atol)
        if why:
            return name, "fail", f"output {o['name']}: {why}", meta
    return name, "pass", "", meta


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=os.path.join(
        ROOT, "test", "Frontend", "ONNX", "Conformance", "cases"))
    p.add_argument("--tools", default=os.environ.get(
        "MNEMO_TOOLS_DIR", os.path.join(ROOT, "build", "bin")))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--rtol", type=float, default=1e-3,
                   help="for cases that carry no tolerance of their own")
    p.add_argument("--atol", type=float, default=1e-5,
                   help="for cases that carry no tolerance of their own")
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args()
    folders = sorted(os.path.join(a.cases, d) for d in os.listdir(a.cases)
                     if os.path.isfile(os.path.join(a.cases, d, "meta.json")))
    if not folders:
        sys.exit(f"{a.cases}: no cases")
    with tempfile.TemporaryDirectory() as work, \
            concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(
            lambda f: run_case(f, a.tools, work, (a.rtol, a.atol)), folders))
    counts, ort, ort_plain = {}, 0, 0
    for name, status, why, meta in results:
        counts[status] = counts.get(status, 0) + 1
        ort += bool(meta.get("ort_pass", True))
        if a.verbose or status != "pass":
            print(f"{status:13s} {name}{': ' + why if why else ''}")
    plain = len(results) - counts.get("bf16", 0)
    print(f"cases: {len(results)} ({plain} without bf16 tensors)")
    print(f"mnemo: {counts.get('pass', 0)} pass, {counts.get('fail', 0)} fail, "
          f"{counts.get('not compiled', 0)} not compiled, "
          f"{counts.get('not run', 0)} not run, "
          f"{counts.get('bf16', 0)} bf16 not run")
    print(f"onnxruntime (recorded): {ort} pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs a function of an MLIR model on .npy inputs through Mnemo's host
reference path (the reference decomposition, JIT-executed) and writes or
checks its outputs.

    scripts/run_reference.py MODEL.mlir --input input_ids=ids.npy \\
        [--function forward] [--output-dir DIR] [--expected logits.npy] \\
        [--atol 1e-4] [--top 5]
"""

import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import numpy as np  # noqa: E402

from mnemo_reference import (MLIR_TYPES, ReferenceError, decode, dense,  # noqa: E402
                             execute, print_bits, tensor_type)


def fail(msg):
    sys.exit(f"run_reference: error: {msg}")


def signature(text, function, path):
    m = re.search(r"func\.func @" + re.escape(function) +
                  r"\(((?:[^()]|\([^()]*\))*)\)\s*->\s*(.*?)\s*(?:attributes[^{]*)?\{\s*$",
                  text, re.M | re.S)
    if not m:
        fail(f"{path}: no function @{function}")
    args = [a.strip() for a in re.findall(r"%[\w.$-]+\s*:\s*(tensor<[^>]*>)", m.group(1))]
    results = [r.strip() for r in re.findall(r"tensor<[^>]*>", m.group(2))]
    return args, results


def parse_type(t):
    body = t[len("tensor<"):-1].split("x")
    return body[:-1], body[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    ap.add_argument("--function", default="forward")
    ap.add_argument("--output-dir")
    ap.add_argument("--expected", help="reference .npy for the first output")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--top", type=int, default=0,
                    help="print the top-k entries of the first output's last row")
    args = ap.parse_args()

    try:
        text = open(args.model).read()
    except OSError as e:
        fail(f"{args.model}: {e.strerror}")
    arg_types, result_types = signature(text, args.function, args.model)
    if len(args.input) != len(arg_types):
        fail(f"@{args.function} takes {len(arg_types)} inputs, "
             f"{len(args.input)} given")

    lines = ["func.func @main() {"]
    operands = []
    for i, (spec, ty) in enumerate(zip(args.input, arg_types)):
        name, _, path = spec.partition("=")
        try:
            arr = np.load(path)
        except (OSError, ValueError) as e:
            fail(f"{path}: cannot read input '{name}': {e}")
        dims, elem = parse_type(ty)
        if MLIR_TYPES.get(arr.dtype) != elem or arr.ndim != len(dims) or any(
                d != "?" and int(d) != n for d, n in zip(dims, arr.shape)):
            fail(f"{path}: input '{name}' is {arr.dtype}{list(arr.shape)}, "
                 f"@{args.function} expects {ty}")
        static = tensor_type(arr.shape, elem)
        lines.append(f"  %in{i}_c = arith.constant {dense(arr)} : {static}")
        lines.append(f"  %in{i} = tensor.cast %in{i}_c : {static} to {ty}")
        operands.append(f"%in{i}")
    results = ", ".join(f"%out{i}" for i in range(len(result_types)))
    lines.append(f"  {results} = call @{args.function}({', '.join(operands)}) : "
                 f"({', '.join(arg_types)}) -> ({', '.join(result_types)})")
    for i, ty in enumerate(result_types):
        dims, elem = parse_type(ty)
        dtype = {v: k for k, v in MLIR_TYPES.items()}[elem]
        lines += print_bits(f"%out{i}", dims, dtype, f"r{i}")
    lines += ["  return", "}"]

    start = time.perf_counter()
    try:
        printed = execute(text + "\n" + "\n".join(lines) + "\n")
    except ReferenceError as e:
        fail(str(e))
    elapsed = time.perf_counter() - start

    outputs = []
    for (sizes, ints), ty in zip(printed, result_types):
        dtype = {v: k for k, v in MLIR_TYPES.items()}[parse_type(ty)[1]]
        outputs.append(decode(ints, dtype, sizes))
    print(f"@{args.function}: {len(outputs)} output(s) in {elapsed:.2f} s "
          "(lower + JIT + run)")
    for i, out in enumerate(outputs):
        print(f"  output {i}: {out.dtype}{list(out.shape)}")
        if args.output_dir:
            os.makedirs(args.output_dir, exist_ok=True)
            np.save(os.path.join(args.output_dir, f"output{i}.npy"), out)
    first = outputs[0]
    if args.top:
        row = first.reshape(-1, first.shape[-1])[-1]
        best = np.argsort(-row)[: args.top]
        print("  top next tokens: " + ", ".join(f"{t} ({row[t]:.4f})" for t in best))
    if args.expected:
        ref = np.load(args.expected)
        if ref.shape != first.shape:
            fail(f"{args.expected}: shape {list(ref.shape)} != output {list(first.shape)}")
        diff = float(np.abs(first.astype(np.float64) - ref).max())
        ok = np.isfinite(first).all() and diff <= args.atol
        print(f"  max |diff| vs {os.path.basename(args.expected)}: {diff:.3g} "
              f"(atol {args.atol:g}): {'match' if ok else 'MISMATCH'}")
        if not ok:
            sys.exit(1)


if __name__ == "__main__":
    main()

"""The two phases the GPU benchmarks share: `prepare` (here, where mnemoc
is: each case's MLIR, artifact and launch plan, then cases.json) and `run`
(on the GPU machine), behind one command line.

    prepare OUT_DIR [--mnemoc build/bin/mnemoc] [--target sm_90a] [--only REGEX] ...
    run DIR [--out RESULTS_DIR] [--only REGEX]
"""

import argparse
import json
import os
import re
import subprocess

from plan import default_mnemo_run, dump_plan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def prepare_cases(a, cases, mlir_of, flags=(), annotate=None, shapes_of=None):
    """Writes OUT_DIR/CASE.mlir (mlir_of(case)), compiles it for a.target
    with a.mnemoc (and `flags`, or flags(case) when it is a function),
    dumps its plan (a dynamic one read at
    shapes_of(case)'s input shapes), for every case whose name matches
    a.only; `annotate(case)` may add keys before cases.json is written.
    Returns the cases prepared."""
    os.makedirs(a.out_dir, exist_ok=True)
    mnemo_run = default_mnemo_run(a.mnemoc)
    todo = [c for c in cases if not a.only or re.search(a.only, c["name"])]
    for case in todo:
        stem = os.path.join(a.out_dir, case["name"])
        with open(stem + ".mlir", "w") as f:
            f.write(mlir_of(case))
        extra = flags(case) if callable(flags) else flags
        subprocess.run([a.mnemoc, stem + ".mlir", f"--target={a.target}", *extra, "-o",
                        stem + ".mnemo"], check=True)
        dump_plan(mnemo_run, stem + ".mnemo", stem + ".plan.json",
                  shapes=shapes_of(case) if shapes_of else None)
        if annotate:
            annotate(case)
        print(f"{case['name']}: compiled", flush=True)
    with open(os.path.join(a.out_dir, "cases.json"), "w") as f:
        json.dump(todo, f, indent=1)
    return todo


def main(doc, prepare, run, prepare_options=None):
    """Parses the two phases' command line and runs one: prepare(a) (its
    exit code 0) or run(a)'s exit code. `prepare_options(parser)` adds a
    benchmark's own prepare flags."""
    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("out_dir")
    p.add_argument("--mnemoc", default=os.path.join(ROOT, "build", "bin", "mnemoc"))
    p.add_argument("--target", default="sm_90a")
    p.add_argument("--only", help="prepare the cases whose name matches this regex")
    if prepare_options:
        prepare_options(p)
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--out")
    r.add_argument("--only", help="run the cases whose name matches this regex")
    a = parser.parse_args()
    if a.cmd == "prepare":
        prepare(a)
        return 0
    return run(a)

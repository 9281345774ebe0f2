#!/usr/bin/env python3
"""Compares the code and plans of two folders of GPU artifacts.

    python3 scripts/gpu/compare_artifacts.py BEFORE AFTER

BEFORE and AFTER are folders written by make_cases.py or
bench_attention.py prepare (CASE.mnemo with CASE.plan.json beside it) from
two builds of mnemoc. For every plan in BEFORE, the PTX bytes of the
artifact (where the plan dump says they lie) and the functions' plans must
be equal in AFTER: a refactoring of a kernel generator that should not
change behaviour must leave them byte-identical. Prints the cases that
differ and a summary; exits 1 when any does.
"""

import json
import os
import sys


def load(root, name):
    with open(os.path.join(root, name)) as f:
        doc = json.load(f)
    art = os.path.join(root, os.path.basename(doc["artifact"]))
    with open(art, "rb") as f:
        f.seek(doc["code"]["offset"])
        code = f.read(doc["code"]["size"])
    return code, doc["functions"]


def main():
    before, after = sys.argv[1], sys.argv[2]
    names = sorted(n for n in os.listdir(before) if n.endswith(".plan.json"))
    differ = []
    for name in names:
        if not os.path.exists(os.path.join(after, name)):
            differ.append(f"{name}: missing in {after}")
            continue
        if load(before, name) != load(after, name):
            differ.append(f"{name}: code or plan differs")
    for line in differ:
        print(line)
    print(f"{len(names)} artifacts compared, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

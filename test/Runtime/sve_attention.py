# REQUIRES: aarch64-runtime
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t mnemoc %aarch64_bin/mnemo-run %aarch64_run | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: asm: fmla found
# CHECK: asm: cntw found
# CHECK: aarch64-sve 128: 20 of 20 cases passed
# CHECK: aarch64-sve 256: 20 of 20 cases passed
# CHECK: aarch64-sve 512: 20 of 20 cases passed
# CHECK: aarch64: 20 of 20 cases passed
"""The attention test grid (test/Numerics/attention_cases.py: GQA and MQA,
causal with offsets, windows, softcap, masks with dead rows, sinks, Dv
other than D, dynamic lengths, f16) compiled as one artifact for
--target=aarch64-sve and run under qemu at 128, 256 and 512 bits, and for
--target=aarch64 (NEON): each case's output against the numpy model, row
by row. The CPU pipeline tiles these attentions (FlashAttention form, the
tiles' products in the register-tiled GEMM), so the grid runs the
scalable tile code at every vector length."""

import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Numerics"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "lib"))
from attention_cases import GRID  # noqa: E402

out_dir, mnemoc, runner = sys.argv[1:4]
qemu = sys.argv[4:]


def renamed(text, i):
    """Case `i`'s SSA names made unique in the shared function."""
    return re.sub(r"%([A-Za-z_]\w*)", rf"%c{i}_\1", text)


args, results, body, returns, inputs = [], [], [], [], []
for i, case in enumerate(GRID):
    for name, arr in case.inputs.items():
        args.append(f"%c{i}_{name}: {case.input_type(name)} "
                    f'{{mnemo.name = "c{i}_{name}"}}')
        path = os.path.join(out_dir, f"c{i}_{name}.npy")
        np.save(path, arr)
        inputs += ["--input", f"c{i}_{name}={path}"]
    text = case.body.replace("{R}", str(case.result_type()))
    text = re.sub(r"\{T:(\w+)\}", lambda m: str(case.input_type(m.group(1))),
                  text)
    body.append(renamed(text, i))
    results.append(f'{case.result_type()} {{mnemo.name = "c{i}"}}')
    returns.append((f"%c{i}_result", str(case.result_type())))

model = (f"func.func @grid({', '.join(args)})\n    -> ({', '.join(results)}) {{\n" +
         "\n".join("  " + line for text in body for line in text.splitlines()) +
         f"\n  return {', '.join(r for r, _ in returns)}"
         f" : {', '.join(t for _, t in returns)}\n}}\n")
source = os.path.join(out_dir, "grid.mlir")
with open(source, "w") as f:
    f.write(model)

# Scalable code: FMAs on z registers, steps read from the vector length.
asm = subprocess.run([mnemoc, source, "--target=aarch64-sve", "--emit=asm",
                      "-o", "-"], check=True, capture_output=True,
                     text=True).stdout
for pattern in ("fmla\tz", "cntw\tx"):
    print(f"asm: {pattern.split(chr(9))[0]} "
          f"{'found' if pattern in asm else 'missing FAIL'}")


def check(label, out):
    passed = 0
    for i, case in enumerate(GRID):
        got = np.load(os.path.join(out, f"c{i}.npy")).astype(np.float64)
        want = case.expected
        if got.shape != want.shape:
            print(f"{label} {case.name}: shape {got.shape} != {want.shape} FAIL")
            continue
        # Row by row (the last axis), so that no wrong tile hides in a
        # whole-tensor norm.
        err = np.abs(got - want).reshape(-1, want.shape[-1]).max(axis=1)
        bound = case.atol + case.rtol * np.abs(want).reshape(
            -1, want.shape[-1]).max(axis=1)
        worst = int(np.argmax(err - bound))
        if np.all(err <= bound) and np.all(np.isfinite(got)):
            passed += 1
        else:
            print(f"{label} {case.name}: row {worst} off by {err[worst]:.3g} "
                  f"(bound {bound[worst]:.3g}) FAIL")
    print(f"{label}: {passed} of {len(GRID)} cases passed")


for target, cpus in (("aarch64-sve", ("128", "256", "512")), ("aarch64", (None,))):
    artifact = os.path.join(out_dir, f"{target}.mnemo")
    subprocess.run([mnemoc, source, f"--target={target}", "-o", artifact],
                   check=True)
    for bits in cpus:
        label = f"{target} {bits}" if bits else target
        out = os.path.join(out_dir, label.replace(" ", "_"))
        cpu = ["-cpu", f"max,sve{bits}=on"] if bits else []
        subprocess.run(qemu + cpu + [runner, artifact, *inputs, "--output-dir",
                                     out], check=True, stdout=subprocess.DEVNULL)
        check(label, out)

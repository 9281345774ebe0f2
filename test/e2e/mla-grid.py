# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --target=host --out=%t/host | FileCheck %s
# RUN: %python %s --target=aarch64 --out=%t/aarch64 | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: auto forms: prefill_causal expanded, prefill_chunk_offset expanded, prefill_noncausal expanded, decode_causal absorbed, decode_noncausal absorbed
# CHECK: mla grid on {{.*}}: [[N:[0-9]+]] of [[N]] cases match
"""mnemo.mla_attention through mnemoc artifacts and mnemo-run, natively on
the host and under qemu for AArch64, with each --mla-form (auto: absorbed
for the one-row decode cases, expanded for the others), against the float64
numpy model (max |diff| <= 1e-5). Lengths are not tile multiples; latent
ranks, nope/rope/value dims are not powers of two."""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

import numpy_refs

ROOT = os.environ["MNEMO_SRC"]
TOOLS = os.environ["MNEMO_TOOLS_DIR"]

# name, (B, H, Sq, Skv, dn, dr, r, dv), causal, q_offset
GRID = [
    ("prefill_causal", (2, 4, 37, 37, 48, 16, 40, 48), True, 0),
    ("prefill_chunk_offset", (1, 8, 9, 50, 32, 16, 24, 40), True, 41),
    ("prefill_noncausal", (1, 2, 19, 27, 24, 8, 36, 16), False, 0),
    ("decode_causal", (2, 8, 1, 70, 32, 16, 48, 32), True, 69),
    ("decode_noncausal", (1, 4, 1, 33, 16, 8, 20, 24), False, 0),
]


def tensor(shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


def shapes(b, h, sq, skv, dn, dr, r, dv):
    return {"qn": (b, h, sq, dn), "qp": (b, h, sq, dr), "c": (b, skv, r),
            "kp": (b, skv, dr), "wk": (h, dn, r), "wv": (h, dv, r)}


def build():
    args, body, results = [], [], []
    for n, (name, dims, causal, offset) in enumerate(GRID):
        types = shapes(*dims)
        for t, shape in types.items():
            args.append(f"%{t}{n}: {tensor(shape)} {{mnemo.name = \"{t}{n}\"}}")
        attrs = ["causal"] if causal else []
        if offset:
            body.append(f"  %off{n} = arith.constant {offset} : index")
            attrs.append(f"q_offset(%off{n})")
        b, h, sq, _, _, _, _, dv = dims
        out = tensor((b, h, sq, dv))
        operands = ", ".join(f"%{t}{n}" for t in types)
        body.append(f"  %o{n} = mnemo.mla_attention {operands} {' '.join(attrs)}"
                    f" : {', '.join(tensor(s) for s in types.values())} -> {out}")
        results.append((f"%o{n}", out, f"o{n}"))
    sig = ", ".join(f"{t} {{mnemo.name = \"{name}\"}}" for _, t, name in results)
    return (f"func.func @grid({', '.join(args)}) -> ({sig}) {{\n" + "\n".join(body) +
            f"\n  return {', '.join(r for r, _, _ in results)} : "
            f"{', '.join(t for _, t, _ in results)}\n}}\n")


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{proc.stderr}")
    return proc.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    src = os.path.join(args.out, "grid.mlir")
    with open(src, "w") as f:
        f.write(build())
    mnemoc = os.path.join(TOOLS, "mnemoc")

    fused = run([mnemoc, src, "--emit=fused"])
    forms = re.findall(r"mnemo.mla_attention .* form\((\w+)\)", fused)
    print("auto forms: " + ", ".join(
        f"{name} {form}" for (name, *_), form in zip(GRID, forms)))

    rng = np.random.default_rng(7)
    inputs, expected = [], []
    for n, (name, dims, causal, offset) in enumerate(GRID):
        arrays = {t: rng.standard_normal(s).astype(np.float32)
                  for t, s in shapes(*dims).items()}
        r = dims[6]
        arrays["wk"] /= np.sqrt(r)
        arrays["wv"] /= np.sqrt(r)
        for t, a in arrays.items():
            path = os.path.join(args.out, f"{t}{n}.npy")
            np.save(path, a)
            inputs += ["--input", f"{t}{n}={path}"]
        expected.append(numpy_refs.mla(*arrays.values(), causal=causal,
                                       offset=offset))

    runner, mnemo_run = [], os.path.join(TOOLS, "mnemo-run")
    if args.target == "aarch64":
        runner = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
        mnemo_run = os.path.join(ROOT, "build", "aarch64", "bin", "mnemo-run")
    passed = total = 0
    for form in ("auto", "expanded", "absorbed"):
        art = os.path.join(args.out, f"{form}.mnemo")
        run([mnemoc, src, "-o", art, f"--target={args.target}",
             f"--mla-form={form}", "--block-q=16", "--block-kv=32"])
        odir = os.path.join(args.out, form)
        run(runner + [mnemo_run, art, *inputs, "--output-dir", odir])
        for n, (name, *_) in enumerate(GRID):
            got = np.load(os.path.join(odir, f"o{n}.npy"))
            diff = float(np.abs(got - expected[n]).max())
            ok = np.isfinite(got).all() and diff <= 1e-5
            print(f"{args.target}/{form}/{name}: vs numpy {diff:.2g} "
                  f"{'ok' if ok else 'FAIL'}")
            passed += ok
            total += 1
    print(f"mla grid on {args.target}: {passed} of {total} cases match")
    sys.exit(0 if passed == total else 1)


if __name__ == "__main__":
    main()

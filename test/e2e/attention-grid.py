# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --target=host --out=%t/host | FileCheck %s
# RUN: %python %s --target=aarch64 --out=%t/aarch64 | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: attention grid on {{.*}}: [[N:[0-9]+]] of [[N]] cases match
"""The attention grid through mnemoc artifacts and mnemo-run, natively on the
host and under qemu for AArch64: the FlashAttention-tiled artifact against
the reference decomposition compiled for the same target (max |diff| <= 1e-5)
and both against the float64 numpy model. Lengths are not tile multiples; D
covers 32, 40, 64, 128; Hq/Hkv covers 1, 2, 4, 8 and MQA; causal with an
offset, sliding window, softcap, additive mask, D != Dv."""

import argparse
import os
import subprocess
import sys

import numpy as np

import numpy_refs

ROOT = os.environ["MNEMO_SRC"]
TOOLS = os.environ["MNEMO_TOOLS_DIR"]

# name, (B, Hq, Hkv, Sq, Skv, D, Dv), attention options
GRID = [
    ("mha_d32", (1, 2, 2, 37, 37, 32, 32), dict(causal=True)),
    ("gqa2_d40", (2, 4, 2, 21, 21, 40, 40), dict(causal=True)),
    ("gqa4_d64_offset", (1, 8, 2, 5, 70, 64, 64), dict(causal=True, offset=65)),
    ("gqa8_d128", (1, 8, 1, 45, 45, 128, 128), dict(causal=True)),
    ("mqa_d64_noncausal", (2, 4, 1, 19, 33, 64, 64), dict()),
    ("window_d40", (1, 4, 2, 67, 67, 40, 40), dict(causal=True, window=16)),
    ("softcap_d32", (1, 2, 1, 29, 29, 32, 32), dict(causal=True, softcap=5.0)),
    ("mask_d64", (1, 4, 4, 17, 26, 64, 64), dict(mask=True)),
    ("dv_ne_d", (1, 4, 2, 31, 31, 64, 32), dict(causal=True)),
    ("decode_row_d128", (2, 8, 2, 1, 99, 128, 128), dict(causal=True, offset=98)),
]


def tensor(shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


def build(cases):
    args, body, results = [], [], []
    for n, (name, (b, hq, hkv, sq, skv, d, dv), opt) in enumerate(cases):
        types = {"q": (b, hq, sq, d), "k": (b, hkv, skv, d), "v": (b, hkv, skv, dv)}
        for t, shape in types.items():
            args.append(f"%{t}{n}: {tensor(shape)} {{mnemo.name = \"{t}{n}\"}}")
        attrs = []
        if opt.get("causal"):
            attrs.append("causal")
        if opt.get("window"):
            attrs.append(f"window({opt['window']})")
        if opt.get("softcap"):
            attrs.append(f"softcap({opt['softcap']})")
        if opt.get("mask"):
            args.append(f"%m{n}: {tensor((b, 1, sq, skv))} {{mnemo.name = \"m{n}\"}}")
            attrs.append(f"mask(%m{n} : {tensor((b, 1, sq, skv))})")
        if opt.get("offset"):
            body.append(f"  %off{n} = arith.constant {opt['offset']} : index")
            attrs.append(f"q_offset(%off{n})")
        out = tensor((b, hq, sq, dv))
        body.append(f"  %o{n} = mnemo.attention %q{n}, %k{n}, %v{n} {' '.join(attrs)} : "
                    f"{tensor(types['q'])}, {tensor(types['k'])}, {tensor(types['v'])} -> {out}")
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
        f.write(build(GRID))

    rng = np.random.default_rng(42)
    inputs, expected = [], []
    for n, (name, (b, hq, hkv, sq, skv, d, dv), opt) in enumerate(GRID):
        q = rng.standard_normal((b, hq, sq, d)).astype(np.float32)
        k = rng.standard_normal((b, hkv, skv, d)).astype(np.float32)
        v = rng.standard_normal((b, hkv, skv, dv)).astype(np.float32)
        arrays = {"q": q, "k": k, "v": v}
        mask = None
        if opt.get("mask"):
            mask = rng.standard_normal((b, 1, sq, skv)).astype(np.float32)
            mask[:, :, 3, :] = -np.inf  # a fully masked row
            arrays["m"] = mask
        for t, a in arrays.items():
            path = os.path.join(args.out, f"{t}{n}.npy")
            np.save(path, a)
            inputs += ["--input", f"{t}{n}={path}"]
        expected.append(numpy_refs.attention(
            q, k, v, causal=opt.get("causal", False), offset=opt.get("offset", 0),
            window=opt.get("window"), softcap=opt.get("softcap"), mask=mask))

    runner, mnemo_run = [], os.path.join(TOOLS, "mnemo-run")
    if args.target == "aarch64":
        runner = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
        mnemo_run = os.path.join(ROOT, "build", "aarch64", "bin", "mnemo-run")
    outs = {}
    for label, tile in (("tiled", "true"), ("decomposed", "false")):
        art = os.path.join(args.out, f"{label}.mnemo")
        run([os.path.join(TOOLS, "mnemoc"), src, "-o", art, f"--target={args.target}",
             f"--tile-attention={tile}", "--block-q=16", "--block-kv=32"])
        odir = os.path.join(args.out, label)
        run(runner + [mnemo_run, art, *inputs, "--output-dir", odir])
        outs[label] = [np.load(os.path.join(odir, f"o{n}.npy")) for n in range(len(GRID))]

    passed = 0
    for n, (name, _, _) in enumerate(GRID):
        tiled, dec = outs["tiled"][n], outs["decomposed"][n]
        vs_dec = float(np.abs(tiled - dec).max())
        vs_ref = float(np.abs(tiled - expected[n]).max())
        ok = np.isfinite(tiled).all() and vs_dec <= 1e-5 and vs_ref <= 1e-5
        print(f"{args.target}/{name}: tiled vs decomposed {vs_dec:.2g}, "
              f"vs numpy {vs_ref:.2g} {'ok' if ok else 'FAIL'}")
        passed += ok
    print(f"attention grid on {args.target}: {passed} of {len(GRID)} cases match")
    sys.exit(0 if passed == len(GRID) else 1)


if __name__ == "__main__":
    main()

# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --target=host --out=%t/host | FileCheck %s
# RUN: %python %s --target=aarch64 --out=%t/aarch64 | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: length 4: {{.*}} ok
# CHECK: length 13: {{.*}} ok
"""The bundled decoder (embedding, RMSNorm, linear, RoPE, GQA attention,
SwiGLU, residuals, final norm, LM head) compiled once per target and run
from the one artifact at two sequence lengths, against its float64 numpy
model and the reference decomposition (scripts/run_reference.py)."""

import argparse
import os
import subprocess
import sys

import numpy as np

ROOT = os.environ["MNEMO_SRC"]
TOOLS = os.environ["MNEMO_TOOLS_DIR"]
sys.path.insert(0, os.path.join(ROOT, "examples", "tiny-decoder"))
import generate  # noqa: E402


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{proc.stderr}")
    return proc.stdout


ap = argparse.ArgumentParser()
ap.add_argument("--target", required=True)
ap.add_argument("--out", required=True)
args = ap.parse_args()
os.makedirs(args.out, exist_ok=True)
model = os.path.join(ROOT, "examples", "tiny-decoder", "model.mlir")
art = os.path.join(args.out, "tiny.mnemo")
run([os.path.join(TOOLS, "mnemoc"), model, "-o", art, f"--target={args.target}"])
runner, mnemo_run = [], os.path.join(TOOLS, "mnemo-run")
if args.target == "aarch64":
    runner = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
    mnemo_run = os.path.join(ROOT, "build", "aarch64", "bin", "mnemo-run")

params = generate.weights()
rng = np.random.default_rng(3)
failed = False
for length in (4, 13):
    ids = rng.integers(0, generate.VOCAB, size=(1, length)).astype(np.int64)
    ids_path = os.path.join(args.out, f"ids{length}.npy")
    np.save(ids_path, ids)
    odir = os.path.join(args.out, f"out{length}")
    run(runner + [mnemo_run, art, "--input", f"input_ids={ids_path}",
                  "--output-dir", odir])
    logits = np.load(os.path.join(odir, "logits.npy"))
    ref = generate.forward(params, ids[0])[None]
    ref_dir = os.path.join(args.out, f"ref{length}")
    run([sys.executable, os.path.join(ROOT, "scripts", "run_reference.py"), model,
         "--input", f"input_ids={ids_path}", "--output-dir", ref_dir])
    decomposed = np.load(os.path.join(ref_dir, "output0.npy"))
    vs_numpy = float(np.abs(logits - ref).max())
    vs_dec = float(np.abs(logits - decomposed).max())
    ok = logits.shape == ref.shape and vs_numpy <= 1e-4 and vs_dec <= 1e-4
    failed |= not ok
    print(f"length {length}: logits {list(logits.shape)}, max |diff| vs numpy "
          f"{vs_numpy:.2g}, vs decomposition {vs_dec:.2g} {'ok' if ok else 'FAIL'}")
sys.exit(1 if failed else 0)

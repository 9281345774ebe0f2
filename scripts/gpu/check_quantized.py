"""Quantized-weight artifacts on a CUDA device against the same models on the
host (the host's quantized GEMM is checked against independently
fake-quantized f32 checkpoints by test/Frontend/Checkpoint/quantized.py).

    check_quantized.py DIR MNEMO_RUN

DIR holds, per MODEL (made on the build machine, see docs/Quantization.md):
MODEL.sm_90a.mnemo / MODEL.sm_80.mnemo (mnemoc --dtype=...), ids-MODEL.npy,
host-MODEL/logits.npy (the host artifact's forward) and hostgen-MODEL/
(its `--generate 6`). Each device artifact's forward logits and its six
greedy steps (tokens, step logits) must equal the host's within 1e-4 max
|d|, row by row. Prints one line per check; exits 1 on a failure."""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(mnemo_run, args):
    subprocess.run([mnemo_run, *args], check=True, stdout=subprocess.DEVNULL)


def worst_row(got, want):
    d = np.abs(got.astype(np.float64) - want).reshape(got.shape[0], -1)
    return float(d.max(axis=1).max())


def main(d, mnemo_run):
    failures = 0
    for art in sorted(glob.glob(os.path.join(d, "*.sm_*.mnemo"))):
        name = os.path.basename(art)[:-len(".mnemo")]
        model = name.split(".")[0]
        ids = os.path.join(d, f"ids-{model}.npy")
        with tempfile.TemporaryDirectory() as out:
            run(mnemo_run, [art, "--device=cuda", "--input", f"input_ids={ids}",
                            "--output-dir", out])
            got = np.load(os.path.join(out, "logits.npy"))
        want = np.load(os.path.join(d, f"host-{model}", "logits.npy"))
        err = worst_row(got, want)
        ok = got.shape == want.shape and np.isfinite(got).all() and err <= 1e-4
        print(f"{name} forward: worst row max |d| {err:.3g} {'ok' if ok else 'FAIL'}")
        failures += not ok
        with tempfile.TemporaryDirectory() as out:
            run(mnemo_run, [art, "--device=cuda", "--generate", "6", "--input",
                            f"input_ids={ids}", "--output-dir", out])
            tokens = np.load(os.path.join(out, "tokens.npy"))
            steps = np.load(os.path.join(out, "step_logits.npy"))
        ref = os.path.join(d, f"hostgen-{model}")
        same = np.array_equal(tokens, np.load(os.path.join(ref, "tokens.npy")))
        err = worst_row(steps, np.load(os.path.join(ref, "step_logits.npy")))
        ok = same and err <= 1e-4
        print(f"{name} generate 6: tokens {'equal' if same else 'DIFFER'}, "
              f"worst row max |d| {err:.3g} {'ok' if ok else 'FAIL'}")
        failures += not ok
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

#!/usr/bin/env python3
"""One GPU artifact per model, run at several input shapes.

    python3 scripts/gpu/check_shapes.py prepare OUT [--mnemoc build/bin/mnemoc]
    python3 scripts/gpu/check_shapes.py run OUT [--mnemo-run OUT/bin/mnemo-run]

prepare (where mnemoc is): compiles each refs_public checkpoint once for
sm_90a with a dynamic batch and sequence (no --input-shape), in f32 and with
--dtype=bf16, and the dynamic-shape ONNX exports of the tests
(test/Frontend/ONNX/Inputs/dynamic); copies the checkpoints and exports
beside them for the references, and writes the token ids of every shape
checked (1x7, 1x40, 1x300, 2x40; the 2x40 ids are the stored ones).

run (on the GPU machine): runs every artifact at every shape through
`mnemo-run --device=cuda` (each a separate process, so each shape is the
session's first) and compares the logits row by row with references made
there at the same shape: transformers' eager forward in f32 on the CPU of
the checkpoint (the exports hold the same weights; ONNX Runtime itself
refuses their RotaryEmbedding nodes at batch 2). f32 artifacts
pass with max |diff| <= 1e-4, bf16 ones with every row's max |diff| / max
|ref| <= 2e-2. The 2x40 outputs are also compared with the stored
logits.npy. Prints one line per run and exits non-zero on any failure.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFS = os.path.join(ROOT, "..", "shared", "models", "refs_public")
EXPORTS = os.path.join(ROOT, "test", "Frontend", "ONNX", "Inputs", "dynamic")
MODELS = ["llama_gqa", "qwen3_qknorm", "mistral_swa", "deepseek_mla"]
SHAPES = [(1, 7), (1, 40), (1, 300), (2, 40)]


def prepare(out, mnemoc):
    os.makedirs(out, exist_ok=True)
    cases = []
    for m in MODELS:
        ckpt = os.path.join(out, "ckpt", m)
        os.makedirs(ckpt, exist_ok=True)
        for f in ("config.json", "model.safetensors", "input_ids.npy", "logits.npy"):
            shutil.copy(os.path.join(REFS, m, f), ckpt)
        for dtype in ("f32", "bf16"):
            art = f"{m}.{dtype}.mnemo"
            extra = ["--dtype=bf16"] if dtype == "bf16" else []
            subprocess.run([mnemoc, os.path.join(REFS, m), "--target=sm_90a", *extra,
                            "-o", os.path.join(out, art)], check=True)
            cases.append({"artifact": art, "dtype": dtype, "ref": "transformers",
                          "source": f"ckpt/{m}", "stored": f"ckpt/{m}/logits.npy",
                          "stored_ids": f"ckpt/{m}/input_ids.npy"})
        if os.path.isdir(os.path.join(EXPORTS, m)):
            # The export has the checkpoint's weights: transformers' forward
            # of the checkpoint is its reference too.
            onnx = os.path.join(out, "onnx", m)
            os.makedirs(onnx, exist_ok=True)
            for f in ("input_ids_2x40.npy", "logits_2x40.npy"):
                shutil.copy(os.path.join(EXPORTS, m, f), onnx)
            art = f"{m}.onnx.mnemo"
            r = subprocess.run([mnemoc, os.path.join(EXPORTS, m, "model.onnx"),
                                "--target=sm_90a", "-o", os.path.join(out, art)],
                               capture_output=True, text=True)
            # A model that does not compile is a failure of the run step.
            cases.append({"artifact": art, "dtype": "f32", "ref": "transformers",
                          "source": f"ckpt/{m}",
                          "stored": f"onnx/{m}/logits_2x40.npy",
                          "stored_ids": f"onnx/{m}/input_ids_2x40.npy",
                          **({"error": r.stderr.strip()} if r.returncode else {})})
    rng = np.random.default_rng(0)
    for b, s in SHAPES:
        np.save(os.path.join(out, f"ids_{b}x{s}.npy"),
                rng.integers(0, 64, size=(b, s), dtype=np.int64))
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print(f"{len(cases)} artifacts x {len(SHAPES)} shapes in {out}")


_models = {}


def reference(case, out, ids):
    """Logits (float64) of the case's source at `ids`."""
    src = os.path.join(out, case["source"])
    import torch
    from transformers import AutoModelForCausalLM
    model = _models.get(src)
    if model is None:
        model = AutoModelForCausalLM.from_pretrained(src, torch_dtype=torch.float32,
                                                     attn_implementation="eager").eval()
        _models[src] = model
    with torch.no_grad():
        return model(torch.from_numpy(ids)).logits.double().numpy()


def compare(got, want, dtype):
    """(passed, max |diff|, worst row's max |diff| / max |ref|)."""
    got = got.astype(np.float64).reshape(want.shape)
    diff = np.abs(got - want)
    rows = diff.reshape(-1, want.shape[-1]).max(axis=1)
    scale = np.abs(want).reshape(-1, want.shape[-1]).max(axis=1)
    rel = float((rows / np.maximum(scale, 1e-30)).max())
    worst = float(diff.max())
    ok = bool(np.isfinite(got).all()) and (worst <= 1e-4 if dtype == "f32" else rel <= 2e-2)
    return ok, worst, rel


def run(out, mnemo_run):
    cases = json.load(open(os.path.join(out, "cases.json")))
    failures = 0
    print(f"{'artifact':26} {'shape':>6} {'max|diff|':>10} {'row rel':>9} {'ms':>8}  result")
    for case in cases:
        if "error" in case:
            failures += 1
            print(f"{case['artifact']:26} {'-':>6}  FAILED to compile: {case['error']}")
            continue
        art = os.path.join(out, case["artifact"])
        runs = [(f"{b}x{s}", os.path.join(out, f"ids_{b}x{s}.npy"), None) for b, s in SHAPES]
        runs.append(("stored", os.path.join(out, case["stored_ids"]),
                     os.path.join(out, case["stored"])))
        for label, ids_path, stored in runs:
            ids = np.load(ids_path)
            with tempfile.TemporaryDirectory() as tmp:
                r = subprocess.run([mnemo_run, art, "--device=cuda", "--input",
                                    f"input_ids={ids_path}", "--output-dir", tmp,
                                    "--repeat", "3"], capture_output=True, text=True)
                if r.returncode:
                    failures += 1
                    print(f"{case['artifact']:26} {label:>6}  FAILED: {r.stderr.strip()}")
                    continue
                got = np.load(os.path.join(tmp, "logits.npy"))
                ms = float(r.stdout.split("latency: ")[1].split()[0])
            want = (np.load(stored).astype(np.float64) if stored
                    else reference(case, out, ids))
            ok, worst, rel = compare(got, want, case["dtype"])
            failures += not ok
            print(f"{case['artifact']:26} {label:>6} {worst:10.2e} {rel:9.2e} {ms:8.3f}  "
                  f"{'ok' if ok else 'FAIL'}")
    print(f"{failures} failures")
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("step", choices=["prepare", "run"])
    p.add_argument("out")
    p.add_argument("--mnemoc", default=os.path.join(ROOT, "build", "bin", "mnemoc"))
    p.add_argument("--mnemo-run", default=None)
    a = p.parse_args()
    if a.step == "prepare":
        prepare(a.out, a.mnemoc)
        return 0
    return run(a.out, a.mnemo_run or os.path.join(a.out, "..", "bin", "mnemo-run"))


if __name__ == "__main__":
    sys.exit(main())

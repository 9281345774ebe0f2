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
logits.npy.

Attention (through the same `mnemo-run --device=cuda`): one artifact per
`mnemo.attention` with a dynamic batch and sequence (bf16: a causal GQA 8/2
with D 64, a non-causal GQA 32/8 with D 128; f32: the causal one), run at
prefill shapes of Sq = Skv and (non-causal) at decode shapes of one query
over a longer KV, on random inputs made at run time, against a float64
reference on the same (bf16-rounded) values: every output row's relative
error <= 2e-2 in bf16, <= 1e-4 in f32 (rowwise.py). A bf16 plan must name
the tensor-core kernel (an f32 one the tiled CUDA-core kernels).

Prints one line per run and exits non-zero on any failure.
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
# Dynamic-shape attention artifacts: name -> (query heads, KV heads, D, their shapes (B, Sq, Skv); decode shapes only without causal.
# causal, element type).
ATTENTION = {"attention_gqa_d64_causal": (8, 2, 64, True, "bf16"),
             "attention_gqa_d128": (32, 8, 128, False, "bf16"),
             "attention_gqa_d64_causal_f32": (8, 2, 64, True, "f32")}
ATTENTION_SHAPES = [(1, 7, 7), (1, 40, 40), (1, 300, 300), (2, 40, 40), (1, 1000, 1000),
                    (1, 1, 300), (2, 1, 1000), (4, 1, 77)]


def attention_mlir(hq, hkv, d, causal, dtype):
    """A `mnemo.attention` whose batch and sequence are dynamic."""
    q, kv = f"tensor<?x{hq}x?x{d}x{dtype}>", f"tensor<?x{hkv}x?x{d}x{dtype}>"
    flag = " causal" if causal else ""
    return (f"func.func @attend(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n"
            f"  %o = mnemo.attention %q, %k, %v{flag} : {q}, {kv}, {kv} -> {q}\n"
            f"  return %o : {q}\n}}\n")


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
    for name, (hq, hkv, d, causal, dtype) in ATTENTION.items():
        src = os.path.join(out, name + ".mlir")
        with open(src, "w") as f:
            f.write(attention_mlir(hq, hkv, d, causal, dtype))
        r = subprocess.run([mnemoc, src, "--target=sm_90a", "-o",
                            os.path.join(out, name + ".mnemo")], capture_output=True, text=True)
        cases.append({"artifact": name + ".mnemo", "dtype": dtype, "ref": "attention",
                      "attention": name, **({"error": r.stderr.strip()} if r.returncode else {})})
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


def bf16_round(x):
    """float32 values rounded to bf16 (nearest even), kept as float32."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def attention_reference(q, k, v, causal):
    """softmax(q k^T / sqrt(D)) v in float64, GQA by head groups; causal
    hides key j from query i when j > i."""
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.triu(np.ones(s.shape[-2:], bool), 1), -np.inf, s)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    return (s / s.sum(axis=-1, keepdims=True)) @ v


def run_attention(case, out, mnemo_run):
    """Runs a dynamic attention artifact at its shapes; returns the failures."""
    from rowwise import worst_row_numpy  # beside this script
    art = os.path.join(out, case["artifact"])
    hq, hkv, d, causal, dtype = ATTENTION[case["attention"]]
    r = subprocess.run([mnemo_run, art, "--dump-plan"], capture_output=True, text=True)
    kernels = ([l["kernel"] for l in json.loads(r.stdout)["functions"][0]["launches"]]
               if r.returncode == 0 else [])
    # bf16 takes the tensor-core kernel; f32 the tiled CUDA-core one.
    if (dtype == "bf16") != ("attention_mma" in kernels) or not kernels:
        print(f"{case['artifact']:26} {'-':>11}  FAIL: not the expected kernels for "
              f"{dtype} ({kernels or r.stderr.strip()})")
        return 1
    failures = 0
    rng = np.random.default_rng(1)
    for b, sq, skv in ATTENTION_SHAPES:
        if causal and sq != skv:
            continue
        label = f"{b}x{sq}x{skv}"
        rnd = bf16_round if dtype == "bf16" else (lambda x: x)
        q = rnd(rng.standard_normal((b, hq, sq, d), np.float32))
        k = rnd(rng.standard_normal((b, hkv, skv, d), np.float32))
        v = rnd(rng.standard_normal((b, hkv, skv, d), np.float32))
        with tempfile.TemporaryDirectory() as tmp:
            for name, t in (("q", q), ("k", k), ("v", v)):
                np.save(os.path.join(tmp, name + ".npy"), t)
            args = [f"input{i}={os.path.join(tmp, n)}.npy" for i, n in enumerate("qkv")]
            r = subprocess.run([mnemo_run, art, "--device=cuda", "--output-dir", tmp,
                                "--repeat", "3", *sum((["--input", a] for a in args), [])],
                               capture_output=True, text=True)
            if r.returncode:
                failures += 1
                print(f"{case['artifact']:26} {label:>11}  FAILED: {r.stderr.strip()}")
                continue
            got = np.load(os.path.join(tmp, "output0.npy"))
            ms = float(r.stdout.split("latency: ")[1].split()[0])
        want = attention_reference(q, k, v, causal)
        rel, row = worst_row_numpy(got.reshape(want.shape), want)
        worst = float(np.abs(got.reshape(want.shape) - want).max())
        ok = bool(np.isfinite(got).all()) and rel <= (2e-2 if dtype == "bf16" else 1e-4)
        failures += not ok
        print(f"{case['artifact']:26} {label:>11} {worst:10.2e} {rel:9.2e} {ms:8.3f}  "
              f"{'ok' if ok else f'FAIL (row {row})'}")
    return failures


def run(out, mnemo_run):
    cases = json.load(open(os.path.join(out, "cases.json")))
    failures = 0
    print(f"{'artifact':26} {'shape':>11} {'max|diff|':>10} {'row rel':>9} {'ms':>8}  result")
    for case in cases:
        if "error" in case:
            failures += 1
            print(f"{case['artifact']:26} {'-':>11}  FAILED to compile: {case['error']}")
            continue
        if case["ref"] == "attention":
            failures += run_attention(case, out, mnemo_run)
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
                    print(f"{case['artifact']:26} {label:>11}  FAILED: {r.stderr.strip()}")
                    continue
                got = np.load(os.path.join(tmp, "logits.npy"))
                ms = float(r.stdout.split("latency: ")[1].split()[0])
            want = (np.load(stored).astype(np.float64) if stored
                    else reference(case, out, ids))
            ok, worst, rel = compare(got, want, case["dtype"])
            failures += not ok
            print(f"{case['artifact']:26} {label:>11} {worst:10.2e} {rel:9.2e} {ms:8.3f}  "
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

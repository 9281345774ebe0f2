"""What the paged-cache step checks (paged_attention.py and
paged_attention_fp8.py) share: running the step through mnemo-run on .npy
inputs, float64 reference attention and a per-row error."""

import os
import subprocess
import sys

import numpy as np


def run(mnemo_run, artifact, work, name, inputs, outputs, device="cpu"):
    """Runs the step on `inputs` (name -> array, bound as input0, input1, ...
    in order); returns its first `outputs` outputs."""
    args = [mnemo_run, artifact, "--output-dir", work, f"--device={device}"]
    for i, (key, array) in enumerate(inputs.items()):
        path = os.path.join(work, f"{name}_{key}.npy")
        np.save(path, array)
        args += ["--input", f"input{i}={path}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{name}: mnemo-run failed: {r.stderr.strip()}")
    return [np.load(os.path.join(work, f"output{i}.npy")) for i in range(outputs)]


def attention(q, k, v, positions):
    """float64 causal attention of queries [Hq, n, D] at `positions` over
    keys and values [Hkv, m, D] at positions 0..m-1 (GQA by repetition)."""
    group = q.shape[0] // k.shape[0]
    k, v = np.repeat(k, group, 0), np.repeat(v, group, 0)
    s = (q.astype(np.float64) @ k.transpose(0, 2, 1).astype(np.float64)
         / np.sqrt(q.shape[-1]))
    hidden = np.arange(k.shape[1])[None, :] > np.asarray(positions)[:, None]
    s = np.where(hidden[None], -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)


def worst_row(got, want):
    """The largest relative L2 error of a row (last dim) of `got`."""
    d = np.linalg.norm(got - want, axis=-1)
    n = np.maximum(np.linalg.norm(want, axis=-1), 1e-6)
    return float((d / n).max())

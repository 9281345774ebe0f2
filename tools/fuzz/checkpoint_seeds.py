"""Writes the seed corpus of the checkpoint fuzz target: checkpoint
directories packed as config.json, a NUL byte, then model.safetensors
(tools/fuzz/CheckpointMutator.h).

Usage: checkpoint_seeds.py OUT_DIR [--with-exports]

  - the small checkpoints of the importer's tests, valid and malformed
    (test/Frontend/Checkpoint/Inputs/make_checkpoints.py: a Llama;
    make_deepseek_checkpoints.py: DeepSeek-V3 with MLA and experts), each
    with its config also recast as the other Llama-family model types;
  - the Llama ones' projections also in DeepSeek-V3's FP8 layout (F8_E4M3
    weights, weight_scale_inv per 16 x 16 block; Inputs/fp8_checkpoint.py);
  - with --with-exports, the reference checkpoints (Llama, Mistral, Qwen3,
    DeepSeek-V3, V3.2 and V4; 0.4 to 1.8 MiB each), for long runs.
"""

import argparse
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
INPUTS = ROOT / "test" / "Frontend" / "Checkpoint" / "Inputs"
LIMIT = 256 * 1024


def fp8_variant(directory, tmp):
    """`directory`'s checkpoint with its projections in FP8, or None when
    it is not a Llama with f32 projections."""
    try:
        config = json.loads((directory / "config.json").read_text())
    except (OSError, ValueError):
        return None
    weights = directory / "model.safetensors"
    if not isinstance(config, dict) or config.get("model_type") != "llama" or \
            not weights.exists():
        return None
    out = pathlib.Path(tmp) / ("fp8-" + directory.name)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        str(p) for p in (INPUTS, ROOT / "scripts" / "lib", ROOT / "test" / "Numerics")))
    r = subprocess.run([sys.executable, str(INPUTS / "fp8_checkpoint.py"), str(directory),
                        str(out), str(out) + "-decoded", "16"],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return pack(out) if r.returncode == 0 else None


def pack(directory):
    config = directory / "config.json"
    if not config.exists():
        return None
    weights = directory / "model.safetensors"
    data = config.read_bytes().replace(b"\0", b"")
    return data + b"\0" + (weights.read_bytes() if weights.exists() else b"")


def recast(packed):
    """The same weights under the other Llama-family model types."""
    config, _, weights = packed.partition(b"\0")
    try:
        c = json.loads(config)
    except ValueError:
        return
    if c.get("model_type") != "llama":
        return
    for model_type, extra in (("mistral", {"sliding_window": 4}),
                              ("qwen2", {}), ("qwen3", {})):
        d = dict(c, model_type=model_type, **extra)
        yield json.dumps(d).encode() + b"\0" + weights


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--with-exports", action="store_true")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = []
    with tempfile.TemporaryDirectory() as tmp:
        for script in ("make_checkpoints.py", "make_deepseek_checkpoints.py"):
            target = pathlib.Path(tmp) / script
            subprocess.run([sys.executable, str(INPUTS / script), str(target)],
                           check=True, stdout=subprocess.DEVNULL)
            for d in sorted(p for p in target.iterdir() if p.is_dir()):
                packed = pack(d)
                if packed and len(packed) <= LIMIT:
                    seeds.append(packed)
                    seeds.extend(recast(packed))
                    fp8 = fp8_variant(d, tmp)
                    if fp8 and len(fp8) <= LIMIT:
                        seeds.append(fp8)
    if args.with_exports:
        for group in ("refs_public", "refs_sparse_public"):
            for d in sorted((INPUTS / group).iterdir()):
                packed = pack(d)
                if packed:
                    seeds.append(packed)
    for data in seeds:
        name = hashlib.sha1(data).hexdigest()[:16] + ".ckpt"
        (out / name).write_bytes(data)
    print(f"{len(seeds)} seeds in {out}")


if __name__ == "__main__":
    main()

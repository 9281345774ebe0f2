"""Writes the seed corpus of the checkpoint fuzz target: checkpoint
directories packed as config.json, a NUL byte, then model.safetensors
(tools/fuzz/CheckpointMutator.h).

Usage: checkpoint_seeds.py OUT_DIR [--with-exports]

  - the small checkpoints of the importer's tests, valid and malformed
    (test/Frontend/Checkpoint/Inputs/make_checkpoints.py: a Llama;
    make_deepseek_checkpoints.py: DeepSeek-V3 with MLA and experts), each
    with its config also recast as the other Llama-family model types;
  - with --with-exports, the reference checkpoints (Llama, Mistral, Qwen3,
    DeepSeek-V3, V3.2 and V4; 0.4 to 1.8 MiB each), for long runs.
"""

import argparse
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
INPUTS = ROOT / "test" / "Frontend" / "Checkpoint" / "Inputs"
LIMIT = 256 * 1024


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

"""Inputs and checks for test/Runtime/adapters.c (mnemo-runtime-adapters-test).

    lora_switch.py prepare DIR IDS.npy NAME=ADAPTER_DIR ...
        writes DIR/ids.bin and, per NAME, DIR/NAME/manifest.txt and K.bin
        (and each factor as DIR/NAME/WEIGHT.npy, for mnemo-run --weight):
        the factors an artifact compiled with `mnemoc --lora-attach` names
        lora.MODULE.A ([r, in]) and lora.MODULE.B ([out, r], times the
        adapter's scaling lora_alpha / r, or / sqrt(r) with use_rslora), read
        from PEFT's adapter_model.safetensors. ADAPTER_DIR `zero` gives a
        rank-8 adapter of zeros on llama_gqa's q_proj and v_proj (the base
        model).
    lora_switch.py compare DIR SHAPE I=REF.npy ...
        compares DIR/logits-I.bin (f32 of SHAPE, "2x40x256") with REF.npy
        row by row (max |d| <= 1e-4 per row) and prints one line each; I may
        be `first`. Exits 1 on a failure.
"""
import json
import os
import sys

import numpy as np

from safetensors_io import read as read_safetensors


def factors(adapter):
    if adapter == "zero":
        out = {}
        for layer in range(2):
            for module, rows in (("q_proj", 128), ("v_proj", 64)):
                m = f"model.layers.{layer}.self_attn.{module}"
                out[f"lora.{m}.A"] = np.zeros((8, 128), np.float32)
                out[f"lora.{m}.B"] = np.zeros((rows, 8), np.float32)
        return out
    with open(os.path.join(adapter, "adapter_config.json")) as f:
        config = json.load(f)
    r = config["r"]
    scale = config["lora_alpha"] / (np.sqrt(r) if config.get("use_rslora") else r)
    out = {}
    for key, a in read_safetensors(
            os.path.join(adapter, "adapter_model.safetensors")).items():
        module = key[len("base_model.model."):].rsplit(".lora_", 1)[0]
        which = "A" if ".lora_A." in key else "B"
        out[f"lora.{module}.{which}"] = (
            a if which == "A" else (a.astype(np.float32) * np.float32(scale)))
    return out


def prepare(d, ids_path, adapters):
    os.makedirs(d, exist_ok=True)
    ids = np.load(ids_path).astype(np.int64)
    with open(os.path.join(d, "ids.bin"), "wb") as f:
        f.write(np.array(ids.shape, np.int64).tobytes() + ids.tobytes())
    for spec in adapters:
        name, adapter = spec.split("=", 1)
        sub = os.path.join(d, name)
        os.makedirs(sub, exist_ok=True)
        lines = []
        for k, (weight, value) in enumerate(sorted(factors(adapter).items())):
            value = np.ascontiguousarray(value, dtype=np.float32)
            value.tofile(os.path.join(sub, f"{k}.bin"))
            np.save(os.path.join(sub, f"{weight}.npy"), value)
            lines.append(f"{weight} {value.shape[0]} {value.shape[1]}")
        with open(os.path.join(sub, "manifest.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")


def compare(d, shape, checks):
    dims = [int(x) for x in shape.split("x")]
    failures = 0
    for spec in checks:
        index, ref = spec.split("=", 1)
        got = np.fromfile(os.path.join(d, f"logits-{index}.bin"),
                          np.float32).reshape(dims)
        want = np.load(ref)
        worst = float(np.abs(got.astype(np.float64) - want)
                      .reshape(dims[0], -1).max(axis=1).max())
        ok = worst <= 1e-4 and np.isfinite(got).all()
        print(f"logits-{index} vs {os.path.basename(os.path.dirname(ref))}: "
              f"worst row max |d| {worst:.3g} {'ok' if ok else 'FAIL'}")
        failures += not ok
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        compare(sys.argv[2], sys.argv[3], sys.argv[4:])

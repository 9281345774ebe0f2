"""make_bad_adapters.py GOOD OUT: PEFT adapters derived from GOOD with one
thing broken each (OUT/NAME), for mnemoc --lora's diagnostics."""
import json
import os
import shutil
import sys

from safetensors_io import read, write


def variant(good, out, name, config=None, tensors=None):
    d = os.path.join(out, name)
    shutil.copytree(good, d, dirs_exist_ok=True)
    for f in ("logits.npy", "meta.json"):
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))
    if config:
        path = os.path.join(d, "adapter_config.json")
        with open(path) as f:
            c = json.load(f)
        config(c)
        with open(path, "w") as f:
            json.dump(c, f)
    if tensors:
        path = os.path.join(d, "adapter_model.safetensors")
        t = read(path)
        tensors(t)
        write(path, t)


def main(good, out):
    q = "base_model.model.model.layers.0.self_attn.q_proj"
    variant(good, out, "dora", config=lambda c: c.update(use_dora=True))
    variant(good, out, "bias", config=lambda c: c.update(bias="all"))
    variant(good, out, "rank", config=lambda c: c.update(r=4))
    variant(good, out, "saved", config=lambda c: c.update(modules_to_save=["lm_head"]))
    variant(good, out, "unpaired", tensors=lambda t: t.pop(q + ".lora_B.weight"))
    variant(good, out, "no_module",
            tensors=lambda t: t.update({
                "base_model.model.model.layers.7.self_attn.q_proj.lora_A.weight": t[q + ".lora_A.weight"],
                "base_model.model.model.layers.7.self_attn.q_proj.lora_B.weight": t[q + ".lora_B.weight"]}))
    variant(good, out, "shape",
            tensors=lambda t: t.update({q + ".lora_B.weight": t[q + ".lora_B.weight"][:100]}))
    variant(good, out, "stray", tensors=lambda t: t.update({"lm_head.weight": t[q + ".lora_A.weight"]}))
    d = os.path.join(out, "no_config")
    shutil.copytree(good, d, dirs_exist_ok=True)
    os.remove(os.path.join(d, "adapter_config.json"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

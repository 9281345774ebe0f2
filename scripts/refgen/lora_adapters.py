"""PEFT LoRA adapters for the merge tests, and their reference logits.

    python3 lora_adapters.py make OUT
        (numpy only) writes OUT/q_v_r8, OUT/q_v_r8_b and OUT/qkvo_r4_rslora
        in PEFT's saved form (adapter_config.json, adapter_model.safetensors)
        for the refs_public llama_gqa checkpoint: rank 8 on q_proj and
        v_proj (lora_alpha 16, and 32 for the second), and rank 4 on
        q/k/v/o_proj with rsLoRA scaling
        (lora_alpha 8, scaling alpha / sqrt(r)). Factors are seeded normals:
        lora_B is drawn too (PEFT starts it at zero, which would adapt
        nothing).
    python3 lora_adapters.py logits OUT CKPT
        (torch, transformers) writes OUT/ADAPTER/logits.npy: CKPT's logits on
        CKPT/input_ids.npy with the adapter applied the way PEFT applies an
        unmerged LoRA layer, y = W x + scaling * B (A x), through PEFT's own
        PeftModel when peft is installed, else through forward hooks on the
        adapted nn.Linear modules (the same formula); OUT/ADAPTER/meta.json
        says which.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "lib"))
from safetensors_io import write as write_safetensors  # noqa: E402

ADAPTERS = {
    "q_v_r8": dict(r=8, lora_alpha=16, use_rslora=False,
                   target_modules=["q_proj", "v_proj"], seed=7),
    # Another adapter with the same rank and modules as q_v_r8 (one that a
    # model compiled with q_v_r8 attached can switch to at run time).
    "q_v_r8_b": dict(r=8, lora_alpha=32, use_rslora=False,
                     target_modules=["q_proj", "v_proj"], seed=13),
    "qkvo_r4_rslora": dict(r=4, lora_alpha=8, use_rslora=True,
                           target_modules=["q_proj", "k_proj", "v_proj",
                                           "o_proj"], seed=11),
}
# llama_gqa: hidden 128, 4 heads of 32, 2 KV heads, 2 layers.
SHAPES = {"q_proj": (128, 128), "k_proj": (64, 128), "v_proj": (64, 128),
          "o_proj": (128, 128)}
LAYERS = 2


def make(out):
    for name, spec in ADAPTERS.items():
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        rng = np.random.default_rng(spec["seed"])
        tensors = {}
        for layer in range(LAYERS):
            for module in spec["target_modules"]:
                n, k = SHAPES[module]
                attn = "self_attn"
                prefix = f"base_model.model.model.layers.{layer}.{attn}.{module}"
                tensors[prefix + ".lora_A.weight"] = (
                    rng.standard_normal((spec["r"], k)) * 0.05).astype(np.float32)
                tensors[prefix + ".lora_B.weight"] = (
                    rng.standard_normal((n, spec["r"])) * 0.05).astype(np.float32)
        write_safetensors(os.path.join(d, "adapter_model.safetensors"), tensors)
        config = {"peft_type": "LORA", "task_type": "CAUSAL_LM",
                  "base_model_name_or_path": "llama_gqa", "r": spec["r"],
                  "lora_alpha": spec["lora_alpha"], "lora_dropout": 0.0,
                  "use_rslora": spec["use_rslora"], "use_dora": False,
                  "fan_in_fan_out": False, "bias": "none",
                  "target_modules": spec["target_modules"],
                  "modules_to_save": None, "rank_pattern": {},
                  "alpha_pattern": {}, "inference_mode": True}
        with open(os.path.join(d, "adapter_config.json"), "w") as f:
            json.dump(config, f, indent=2)


def logits(out, ckpt):
    import torch
    from transformers import AutoModelForCausalLM

    ids = torch.from_numpy(np.load(os.path.join(ckpt, "input_ids.npy")))
    for name, spec in ADAPTERS.items():
        d = os.path.join(out, name)
        base = AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.float32)
        base.eval()
        try:
            import peft
            model = peft.PeftModel.from_pretrained(base, d)
            how = f"peft {peft.__version__} PeftModel (unmerged)"
        except ImportError:
            from safetensors.torch import load_file
            factors = load_file(os.path.join(d, "adapter_model.safetensors"))
            scale = spec["lora_alpha"] / (spec["r"] ** 0.5 if spec["use_rslora"]
                                          else spec["r"])
            model = base
            for key, a in factors.items():
                if not key.endswith(".lora_A.weight"):
                    continue
                module = key[len("base_model.model."):-len(".lora_A.weight")]
                b = factors[key.replace("lora_A", "lora_B")]
                linear = model.get_submodule(module)

                def hook(mod, inp, outp, a=a, b=b):
                    return outp + scale * (inp[0] @ a.T) @ b.T
                linear.register_forward_hook(hook)
            how = "forward hooks: y = W x + scaling * B (A x) (peft not installed)"
        with torch.no_grad():
            out_logits = model(input_ids=ids, use_cache=False).logits
        np.save(os.path.join(d, "logits.npy"), out_logits.float().numpy())
        import transformers
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump({"reference": how, "torch": torch.__version__,
                       "transformers": transformers.__version__,
                       "checkpoint": os.path.basename(ckpt.rstrip("/"))}, f,
                      indent=2)
        print(name, how)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        logits(sys.argv[2], sys.argv[3])

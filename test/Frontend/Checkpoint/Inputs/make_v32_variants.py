"""Copies of the v32_dsa reference checkpoint with one config.json key
broken each, for the importer's diagnostics: python make_v32_variants.py SRC OUT."""
import json
import os
import shutil
import sys

src, out = sys.argv[1], sys.argv[2]
base = json.load(open(os.path.join(src, "config.json")))
VARIANTS = {
    "layer_type": {"layer_types": ["deepseek_sparse_attention", "full_attention"]},
    "mlp_types": {"mlp_layer_types": ["dense"]},
    "index_dim": {"index_head_dim": 8},
    "no_q_lora": {"q_lora_rank": None},
    "head_dim": {"head_dim": 32},
    "topk_zero": {"index_topk": 0},
}
for name, change in VARIANTS.items():
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(src, "model.safetensors"), d)
    config = dict(base, **change)
    json.dump(config, open(os.path.join(d, "config.json"), "w"), indent=1)

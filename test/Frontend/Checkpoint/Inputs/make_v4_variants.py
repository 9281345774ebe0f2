"""DeepSeek-V4 checkpoints derived from v4_csa_hca for the importer's tests:
python make_v4_variants.py SRC OUT.

OUT/good/NAME: other compression rates, windows, top-k, rope split and
theta, layer kinds, output groups, stream counts and clamps, with
input_ids.npy and the logits.npy of the independent numpy model
(test/Numerics/deepseek_v4_model.py) on them. Tensors whose shape a
change alters are sliced (the position biases) or drawn from a seeded
generator.

OUT/bad/NAME: one config key or tensor broken each, for the diagnostics.
"""
import json
import os
import sys

import numpy as np

from deepseek_v4_model import Checkpoint, Model
from safetensors_io import write as write_safetensors

def load(src):
    ckpt = Checkpoint(src)
    out = {}
    for name, entry in ckpt.header.items():
        if name == "__metadata__":
            continue
        a = ckpt[name]
        out[name] = a.astype(np.float32) if a.dtype == np.float64 else a
    return ckpt.cfg, out


def rates(cfg, t, rng):
    """CSA every 2 tokens, HCA every 16, window 8, top-3, 5 Sinkhorn rounds."""
    cfg.update(compress_rates={"compressed_sparse_attention": 2,
                               "heavily_compressed_attention": 16},
               sliding_window=8, index_topk=3, hc_sinkhorn_iters=5)
    for name in list(t):
        if name.endswith("compressor.ape"):
            layer = int(name.split(".")[2])
            kind = cfg["layer_types"][layer]
            rate = cfg["compress_rates"][kind]
            t[name] = t[name][:rate]
    return 77, 1


def mixed(cfg, t, rng):
    """A sliding-only layer first, half the head rotated, other thetas, one
    head per output group, three streams, clamps that bite."""
    cfg.update(layer_types=["sliding_attention", "compressed_sparse_attention",
                            "heavily_compressed_attention"],
               partial_rotary_factor=0.5, qk_rope_head_dim=32,
               rope_theta=500000.0, compress_rope_theta=50000.0,
               o_groups=4, hc_mult=3, swiglu_limit=0.5,
               routed_scaling_factor=2.0)
    for part in ("main", "compress"):
        cfg["rope_parameters"][part]["partial_rotary_factor"] = 0.5
    cfg["rope_parameters"]["main"]["rope_theta"] = 500000.0
    cfg["rope_parameters"]["compress"]["rope_theta"] = 50000.0
    hidden, n = cfg["hidden_size"], 3
    rows = (2 + n) * n
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        t[p + "attn.wo_a.weight"] = rng.normal(0, 0.08, (4 * 32, 64)).astype(np.float32)
        t[p + "attn.wo_b.weight"] = rng.normal(0, 0.08, (hidden, 4 * 32)).astype(np.float32)
        for site in ("hc_attn", "hc_ffn"):
            t[p + site + "_fn"] = rng.normal(0, 0.05, (rows, n * hidden)).astype(np.float32)
            t[p + site + "_base"] = rng.normal(0, 0.5, rows).astype(np.float32)
    t["model.hc_head.hc_fn"] = rng.normal(0, 0.05, (n, n * hidden)).astype(np.float32)
    t["model.hc_head.hc_base"] = rng.normal(0, 0.5, n).astype(np.float32)
    return 131, 2


def heads(cfg, t, rng):
    """16 query heads on the single K = V head (the GPU takes a group of 16
    or more to its kernel of selected keys), a window of 40, top-12."""
    h, d = 16, cfg["head_dim"]
    groups, rank = cfg["o_groups"], cfg["o_lora_rank"]
    cfg.update(num_attention_heads=h, sliding_window=40, index_topk=12)
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}.attn."
        q_lora = t[p + "wq_b.weight"].shape[1]
        t[p + "wq_b.weight"] = rng.normal(0, 0.1, (h * d, q_lora)).astype(np.float32)
        t[p + "wo_a.weight"] = rng.normal(0, 0.05, (groups * rank, h * d // groups)).astype(
            np.float32)
        t[p + "attn_sink"] = rng.normal(0, 1.0, h).astype(np.float32)
    return 150, 1


GOOD = {"rates": rates, "mixed": mixed, "heads": heads}

BAD = {
    "kv_heads": {"num_key_value_heads": 2},
    "o_groups": {"o_groups": 3},
    "scoring": {"scoring_func": "softmax"},
    "layer_type": {"layer_types": ["heavily_compressed_attention",
                                   "full_attention",
                                   "heavily_compressed_attention"]},
    "rope_odd": {"partial_rotary_factor": 0.3},
    "rope_dim": {"qk_rope_head_dim": 8},
}


def main(src, out):
    base_cfg, base = load(src)
    ids = np.load(os.path.join(src, "input_ids.npy"))
    for name, change in GOOD.items():
        rng = np.random.default_rng(7)
        cfg, t = json.loads(json.dumps(base_cfg)), dict(base)
        length, batch = change(cfg, t, rng)
        d = os.path.join(out, "good", name)
        os.makedirs(d, exist_ok=True)
        json.dump(cfg, open(os.path.join(d, "config.json"), "w"), indent=1)
        write_safetensors(os.path.join(d, "model.safetensors"), t)
        rows = np.stack([np.roll(ids[0], 37 * r)[:length] for r in range(batch)])
        np.save(os.path.join(d, "input_ids.npy"), rows.astype(np.int64))
        model = Model(Checkpoint(d))
        logits = np.stack([model.forward(row) for row in rows])
        np.save(os.path.join(d, "logits.npy"), logits.astype(np.float32))
    for name, change in BAD.items():
        d = os.path.join(out, "bad", name)
        os.makedirs(d, exist_ok=True)
        json.dump(dict(base_cfg, **change),
                  open(os.path.join(d, "config.json"), "w"), indent=1)
        write_safetensors(os.path.join(d, "model.safetensors"), base)
    # A hash-routing table naming an expert that does not exist.
    d = os.path.join(out, "bad", "tid2eid")
    os.makedirs(d, exist_ok=True)
    json.dump(base_cfg, open(os.path.join(d, "config.json"), "w"), indent=1)
    t = dict(base)
    table = t["model.layers.0.ffn.gate.tid2eid"].copy()
    table[5, 1] = base_cfg["n_routed_experts"]
    t["model.layers.0.ffn.gate.tid2eid"] = table
    write_safetensors(os.path.join(d, "model.safetensors"), t)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

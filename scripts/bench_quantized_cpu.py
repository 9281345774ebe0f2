#!/usr/bin/env python3
"""Decode speed of quantized weights on the CPU: one Llama-shaped checkpoint
compiled with each --dtype, side by side in one run.

    scripts/bench_quantized_cpu.py [--hidden 1024] [--layers 4] [--steps 32]
        [--batch 1] [--dtypes f32,bf16,int8,int4,nf4] [--rounds 2]

The checkpoint (random weights, seeded; hidden H, intermediate 11H/4, 16
heads of 64 with 4 KV heads, vocabulary 8192) is written to a temporary
directory. Each artifact runs `mnemo-run --generate STEPS` on the same
prompt; the printed time per output token (median of the decode steps) and
its ratio to f32's are reported per round, the dtypes alternating within a
round. At batch 1 a decode step reads every weight once, so its time tracks
the weight bytes until decoding the codes costs more than reading them.
"""

import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def write_checkpoint(d, hidden, layers, vocab=8192, heads=16, kv=4):
    inter = hidden * 11 // 4
    head_dim = hidden // heads
    rng = np.random.default_rng(0)
    t = {}

    def w(name, *shape):
        t[name] = (rng.standard_normal(shape) * 0.02).astype(np.float32)

    w("model.embed_tokens.weight", vocab, hidden)
    w("lm_head.weight", vocab, hidden)
    t["model.norm.weight"] = np.ones(hidden, np.float32)
    for i in range(layers):
        p = f"model.layers.{i}."
        w(p + "self_attn.q_proj.weight", heads * head_dim, hidden)
        w(p + "self_attn.k_proj.weight", kv * head_dim, hidden)
        w(p + "self_attn.v_proj.weight", kv * head_dim, hidden)
        w(p + "self_attn.o_proj.weight", hidden, heads * head_dim)
        w(p + "mlp.gate_proj.weight", inter, hidden)
        w(p + "mlp.up_proj.weight", inter, hidden)
        w(p + "mlp.down_proj.weight", hidden, inter)
        t[p + "input_layernorm.weight"] = np.ones(hidden, np.float32)
        t[p + "post_attention_layernorm.weight"] = np.ones(hidden, np.float32)
    header, offset = {}, 0
    for name, a in t.items():
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for a in t.values():
            f.write(a.tobytes())
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_size": hidden, "intermediate_size": inter,
              "num_hidden_layers": layers, "num_attention_heads": heads,
              "num_key_value_heads": kv, "head_dim": head_dim,
              "vocab_size": vocab, "rms_norm_eps": 1e-5,
              "max_position_embeddings": 4096, "tie_word_embeddings": False,
              "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
              "hidden_act": "silu"}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f)
    return sum(a.size for a in t.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dtypes", default="f32,bf16,int8,int4,nf4")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    dtypes = a.dtypes.split(",")
    with tempfile.TemporaryDirectory() as work:
        ckpt = os.path.join(work, "ckpt")
        os.makedirs(ckpt)
        params = write_checkpoint(ckpt, a.hidden, a.layers)
        ids = np.random.default_rng(1).integers(0, 8192, (a.batch, 32))
        np.save(os.path.join(work, "ids.npy"), ids.astype(np.int64))
        sizes = {}
        for dt in dtypes:
            art = os.path.join(work, f"{dt}.mnemo")
            subprocess.run([os.path.join(BIN, "mnemoc"), ckpt, f"--dtype={dt}",
                            "--max-seq-len", "128", "-o", art], check=True)
            sizes[dt] = os.path.getsize(art)
        print(f"{params / 1e6:.1f}M parameters, hidden {a.hidden}, {a.layers} "
              f"layers; batch {a.batch}, {a.steps} decode steps")
        for r in range(a.rounds):
            times = {}
            for dt in dtypes:
                out = subprocess.run(
                    [os.path.join(BIN, "mnemo-run"), os.path.join(work, f"{dt}.mnemo"),
                     "--generate", str(a.steps), "--input",
                     f"input_ids={os.path.join(work, 'ids.npy')}",
                     "--output-dir", os.path.join(work, f"out-{dt}")],
                    check=True, capture_output=True, text=True).stdout
                m = re.search(r"time per output token: ([0-9.e+-]+) ms", out)
                times[dt] = float(m.group(1))
            base = times.get("f32", next(iter(times.values())))
            for dt in dtypes:
                print(f"round {r + 1}: {dt:5s} artifact {sizes[dt] / 1e6:7.1f} MB, "
                      f"{times[dt]:8.3f} ms per token, {base / times[dt]:.2f}x f32")


if __name__ == "__main__":
    sys.exit(main())

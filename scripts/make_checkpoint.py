"""A Llama-shaped checkpoint with random bf16 weights, the same bytes on every
machine: config.json and model.safetensors as save_pretrained writes them.

    make_checkpoint.py OUT_DIR [--preset llama-1b|llama-tiny]

The values come from SplitMix64 counters (one stream per tensor, in numpy's
uint64 arithmetic), not from a library's random generator, so the file is
reproduced byte for byte wherever numpy runs: an artifact compiled with
`mnemoc --weights=reference` on one machine finds the file it was compiled
against (its size and CRC-32 are checked at load) on another, where this
script made it again. Linear and embedding weights are uniform in
(-0.035, 0.035) (standard deviation 0.02), norms are 1.
"""
import argparse
import json
import os
import struct

import numpy as np

PRESETS = {
    # About 1.1B parameters (2.2 GB of bf16): the shape of a Llama 3.2 1B
    # class model.
    "llama-1b": dict(hidden_size=2048, intermediate_size=8192,
                     num_hidden_layers=16, num_attention_heads=32,
                     num_key_value_heads=8, head_dim=64, vocab_size=32000),
    "llama-tiny": dict(hidden_size=128, intermediate_size=344,
                       num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=32, vocab_size=256),
}

MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(seed, n):
    """n SplitMix64 outputs of stream `seed` (uint64 wrap-around)."""
    with np.errstate(over="ignore"):
        x = (np.arange(1, n + 1, dtype=np.uint64) *
             np.uint64(0x9E3779B97F4A7C15) + np.uint64(seed) *
             np.uint64(0xD1B54A32D192ED03)) & MASK
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def bf16_uniform(seed, count, bound):
    """bf16 bits of values uniform in (-bound, bound), truncated from f32."""
    bits = splitmix64(seed, count)
    u = (bits >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -24)
    f = (u * np.float32(2.0) - np.float32(1.0)) * np.float32(bound)
    return (f.view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def tensors(c):
    h, i, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    q = c["num_attention_heads"] * c["head_dim"]
    kv = c["num_key_value_heads"] * c["head_dim"]
    yield "model.embed_tokens.weight", (v, h)
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        yield p + "input_layernorm.weight", (h,)
        yield p + "self_attn.q_proj.weight", (q, h)
        yield p + "self_attn.k_proj.weight", (kv, h)
        yield p + "self_attn.v_proj.weight", (kv, h)
        yield p + "self_attn.o_proj.weight", (h, q)
        yield p + "post_attention_layernorm.weight", (h,)
        yield p + "mlp.gate_proj.weight", (i, h)
        yield p + "mlp.up_proj.weight", (i, h)
        yield p + "mlp.down_proj.weight", (h, i)
    yield "model.norm.weight", (h,)
    yield "lm_head.weight", (v, h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--preset", default="llama-1b", choices=sorted(PRESETS))
    args = ap.parse_args()
    c = PRESETS[args.preset]
    os.makedirs(args.out, exist_ok=True)
    config = dict(architectures=["LlamaForCausalLM"], model_type="llama",
                  hidden_act="silu", max_position_embeddings=4096,
                  rms_norm_eps=1e-5, rope_theta=500000.0,
                  tie_word_embeddings=False, torch_dtype="bfloat16",
                  attention_bias=False, mlp_bias=False, bos_token_id=1,
                  eos_token_id=2, **c)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
    header, offset, layout = {}, 0, list(tensors(c))
    for name, shape in layout:
        size = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape),
                        "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":"), sort_keys=True)
    text += " " * (-(len(text) + 8) % 8)  # data starts 8-byte aligned
    ones = np.full(1, 0x3F80, np.uint16)  # bf16 1.0
    with open(os.path.join(args.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text.encode())
        for k, (name, shape) in enumerate(layout):
            n = int(np.prod(shape))
            if len(shape) == 1:
                f.write(np.repeat(ones, n).tobytes())
            else:
                f.write(bf16_uniform(k + 1, n, 0.02 * 3 ** 0.5).tobytes())
    print(f"{args.out}: {args.preset}, "
          f"{offset / 2 / 1e9:.2f}B parameters, {offset / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()

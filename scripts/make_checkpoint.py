"""A Llama- or DeepSeek-V3.2-shaped checkpoint with random bf16 weights, the
same bytes on every machine: config.json and model.safetensors as
save_pretrained writes them.

    make_checkpoint.py OUT_DIR [--preset llama-1b|llama-tiny|deepseek-v32-layer]

The values come from SplitMix64 counters (one stream per tensor, in numpy's
uint64 arithmetic), not from a library's random generator, so the file is
reproduced byte for byte wherever numpy runs: an artifact compiled with
`mnemoc --weights=reference` on one machine finds the file it was compiled
against (its size and CRC-32 are checked at load) on another, where this
script made it again. Linear and embedding weights are uniform in
(-0.035, 0.035) (standard deviation 0.02), norms are 1, biases 0.

`deepseek-v32-layer` is one DeepSeek-V3.2 layer with the published
model's per-head dims and indexer (latent 512 + rope 64, nope and value
heads of 128, a lightning indexer of 64 heads of 128 keeping 2048) but 16
heads (as V2-Lite) and q_lora 1024, around a small dense MLP and
vocabulary (hidden 2048, MLP 1024, vocab 4096): 48M parameters, for
timing a sparse decode step. An artifact of it stores the weights it
splits or widens (the per-head W_UK and W_UV in f32, q_b_proj's nope and
rope rows), 17 MB at these sizes; 128 heads would make that 140 MB.
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
    "deepseek-v32-layer": dict(
        architectures=["DeepseekV32ForCausalLM"], model_type="deepseek_v32",
        hidden_size=2048, intermediate_size=1024, num_hidden_layers=1,
        num_attention_heads=16, num_key_value_heads=16, q_lora_rank=1024,
        kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
        qk_head_dim=192, head_dim=64, v_head_dim=128, index_n_heads=64,
        index_head_dim=128, index_topk=2048, vocab_size=4096,
        max_position_embeddings=163840, first_k_dense_replace=1,
        layer_types=["deepseek_sparse_attention"], mlp_layer_types=["dense"],
        moe_intermediate_size=256, n_routed_experts=8, n_shared_experts=1,
        num_experts_per_tok=2, n_group=1, topk_group=1, norm_topk_prob=True,
        routed_scaling_factor=2.5, rms_norm_eps=1e-6,
        rope_parameters={"rope_theta": 10000.0, "rope_type": "default"}),
}

# Config keys every Llama preset shares (a DeepSeek preset names its own).
LLAMA = dict(architectures=["LlamaForCausalLM"], model_type="llama",
             hidden_act="silu", max_position_embeddings=4096,
             rms_norm_eps=1e-5, rope_theta=500000.0)

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


def llama_attention(c, a):
    h, d = c["hidden_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    yield a + "q_proj.weight", (q, h)
    yield a + "k_proj.weight", (kv, h)
    yield a + "v_proj.weight", (kv, h)
    yield a + "o_proj.weight", (h, q)


def deepseek_v32_attention(c, a):
    h = c["hidden_size"]
    heads, ql, kvl = c["num_attention_heads"], c["q_lora_rank"], c["kv_lora_rank"]
    dn, dr, dv = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    ih, idim = c["index_n_heads"], c["index_head_dim"]
    yield a + "q_a_proj.weight", (ql, h)
    yield a + "q_a_layernorm.weight", (ql,)
    yield a + "q_b_proj.weight", (heads * (dn + dr), ql)
    yield a + "kv_a_proj_with_mqa.weight", (kvl + dr, h)
    yield a + "kv_a_layernorm.weight", (kvl,)
    yield a + "kv_b_proj.weight", (heads * (dn + dv), kvl)
    yield a + "o_proj.weight", (h, heads * dv)
    yield a + "indexer.wq_b.weight", (ih * idim, ql)
    yield a + "indexer.wk.weight", (idim, h)
    yield a + "indexer.k_norm.weight", (idim,)
    yield a + "indexer.k_norm.bias", (idim,)
    yield a + "indexer.weights_proj.weight", (ih, h)


def tensors(c):
    """Names and shapes in file order: a decoder of dense SwiGLU MLPs."""
    attention = (deepseek_v32_attention if c.get("model_type") == "deepseek_v32"
                 else llama_attention)
    h, i, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    yield "model.embed_tokens.weight", (v, h)
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        yield p + "input_layernorm.weight", (h,)
        yield from attention(c, p + "self_attn.")
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
    base = {} if "model_type" in c else LLAMA
    config = dict(base, hidden_act="silu", tie_word_embeddings=False,
                  torch_dtype="bfloat16", attention_bias=False,
                  mlp_bias=False, bos_token_id=1, eos_token_id=2, **c)
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
    zeros = np.zeros(1, np.uint16)
    with open(os.path.join(args.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text.encode())
        for k, (name, shape) in enumerate(layout):
            n = int(np.prod(shape))
            if len(shape) == 1:
                unit = zeros if name.endswith(".bias") else ones
                f.write(np.repeat(unit, n).tobytes())
            else:
                f.write(bf16_uniform(k + 1, n, 0.02 * 3 ** 0.5).tobytes())
    print(f"{args.out}: {args.preset}, "
          f"{offset / 2 / 1e9:.2f}B parameters, {offset / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()

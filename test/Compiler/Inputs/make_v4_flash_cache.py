"""A DeepSeek-V4 checkpoint with V4-Flash's KV cache and small everything
else: python make_v4_flash_cache.py SRC OUT.

The KV cache of a V4 model depends only on its layers' kinds, head_dim
(the one K = V head), sliding_window, the compression rates and
index_head_dim; V4-Flash's (transformers 5.17's DeepseekV4Config()
defaults: 43 layers, the first three HCA then CSA and HCA alternating,
head_dim 512 with a rope part of 64, window 128, rates 4 and 128,
index_head_dim 128) are kept, while the hidden size, heads, experts and
vocabulary shrink so that the checkpoint is a few MB. Its weights are
zeros: `mnemoc --report` counts the cache from the generation steps'
pools, not from values. SRC (the v4_csa_hca reference) gives the rest of
the config.
"""
import json
import os
import sys

import numpy as np

from safetensors_io import write as write_safetensors

HCA, CSA = "heavily_compressed_attention", "compressed_sparse_attention"


def flash_layer_types(n=43):
    return [HCA] * 3 + [CSA if i % 2 == 0 else HCA for i in range(n - 3)]


def main(src, out):
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    kinds = flash_layer_types()
    d, rope, di, window = 512, 64, 128, 128
    hidden, heads, groups, q_lora, o_lora = 32, 2, 2, 16, 8
    experts, per_token, inter, vocab, streams = 2, 1, 16, 32, 2
    index_heads = 2
    rates = {CSA: 4, HCA: 128}
    cfg.update(num_hidden_layers=len(kinds), layer_types=kinds,
               mlp_layer_types=["moe"] * len(kinds), head_dim=d,
               qk_rope_head_dim=rope, partial_rotary_factor=rope / d,
               sliding_window=window, compress_rates=rates, index_head_dim=di,
               index_n_heads=index_heads, index_topk=512, hidden_size=hidden,
               num_attention_heads=heads, o_groups=groups, q_lora_rank=q_lora,
               o_lora_rank=o_lora, n_routed_experts=experts,
               num_experts_per_tok=per_token, moe_intermediate_size=inter,
               vocab_size=vocab, hc_mult=streams, max_position_embeddings=1 << 20)
    for part in ("main", "compress"):
        cfg["rope_parameters"][part]["partial_rotary_factor"] = rope / d

    t = {}

    def zeros(name, *shape):
        t[name] = np.zeros(shape, np.float32)

    zeros("model.embed_tokens.weight", vocab, hidden)
    zeros("head.weight", vocab, hidden)
    zeros("model.norm.weight", hidden)
    zeros("model.hc_head.hc_fn", streams, streams * hidden)
    zeros("model.hc_head.hc_base", streams)
    zeros("model.hc_head.hc_scale", 1)
    mix = (2 + streams) * streams
    for layer, kind in enumerate(kinds):
        p = f"model.layers.{layer}."
        a = p + "attn."
        zeros(a + "attn_sink", heads)
        zeros(a + "wq_a.weight", q_lora, hidden)
        zeros(a + "q_norm.weight", q_lora)
        zeros(a + "wq_b.weight", heads * d, q_lora)
        zeros(a + "wkv.weight", d, hidden)
        zeros(a + "norm.weight", d)
        zeros(a + "wo_a.weight", groups * o_lora, heads * d // groups)
        zeros(a + "wo_b.weight", hidden, groups * o_lora)
        rate = rates[kind]
        width = 2 * d if kind == CSA else d  # CSA's overlapping windows
        zeros(a + "compressor.ape", rate, width)
        zeros(a + "compressor.norm.weight", d)
        zeros(a + "compressor.wkv.weight", width, hidden)
        zeros(a + "compressor.wgate.weight", width, hidden)
        if kind == CSA:
            i = a + "indexer."
            zeros(i + "compressor.ape", rate, 2 * di)
            zeros(i + "compressor.norm.weight", di)
            zeros(i + "compressor.wkv.weight", 2 * di, hidden)
            zeros(i + "compressor.wgate.weight", 2 * di, hidden)
            zeros(i + "weights_proj.weight", index_heads, hidden)
            zeros(i + "wq_b.weight", index_heads * di, q_lora)
        zeros(p + "attn_norm.weight", hidden)
        zeros(p + "ffn_norm.weight", hidden)
        f = p + "ffn."
        zeros(f + "gate.weight", experts, hidden)
        zeros(f + "gate.bias", experts)
        for e in [f"experts.{e}." for e in range(experts)] + ["shared_experts."]:
            zeros(f + e + "w1.weight", inter, hidden)
            zeros(f + e + "w3.weight", inter, hidden)
            zeros(f + e + "w2.weight", hidden, inter)
        for site in ("hc_attn", "hc_ffn"):
            zeros(p + site + "_fn", mix, streams * hidden)
            zeros(p + site + "_base", mix)
            zeros(p + site + "_scale", 3)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(out, "model.safetensors"), t)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""make_deepseek_checkpoints.py OUTDIR: writes small DeepseekV3ForCausalLM
checkpoint directories for the importer's tests: `tiny` (valid: q LoRA, one
dense layer then one mixture-of-experts layer, experts stored one by one),
`tiny_fused` (the same weights with the experts in transformers' fused
`gate_up_proj` / `down_proj` layout), `input_ids.npy`, and one directory per
unsupported config or malformed tensor, each differing from `tiny` in one
place."""

import json
import os
import struct
import sys

import numpy as np

H, HEADS, QL, KVL, NOPE, ROPE, V = 16, 2, 8, 8, 4, 4, 6
E, MOE_I, INTER, VOCAB = 4, 8, 16, 12

CONFIG = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "hidden_size": H, "intermediate_size": INTER, "vocab_size": VOCAB,
    "num_hidden_layers": 2, "num_attention_heads": HEADS,
    "num_key_value_heads": HEADS, "q_lora_rank": QL, "kv_lora_rank": KVL,
    "qk_nope_head_dim": NOPE, "qk_rope_head_dim": ROPE, "v_head_dim": V,
    "head_dim": ROPE, "rope_interleave": True, "first_k_dense_replace": 1,
    "n_routed_experts": E, "num_experts_per_tok": 2, "n_group": 2,
    "topk_group": 1, "n_shared_experts": 1, "moe_intermediate_size": MOE_I,
    "norm_topk_prob": True, "routed_scaling_factor": 2.5,
    "rms_norm_eps": 1e-06, "max_position_embeddings": 256,
    "rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0,
                        "factor": 4.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                        "original_max_position_embeddings": 64},
    "tie_word_embeddings": False,
}


def shapes():
    s = {"model.embed_tokens.weight": [VOCAB, H], "model.norm.weight": [H],
         "lm_head.weight": [VOCAB, H]}
    for i in range(2):
        p = f"model.layers.{i}."
        s[p + "input_layernorm.weight"] = [H]
        s[p + "post_attention_layernorm.weight"] = [H]
        a = p + "self_attn."
        s[a + "q_a_proj.weight"] = [QL, H]
        s[a + "q_a_layernorm.weight"] = [QL]
        s[a + "q_b_proj.weight"] = [HEADS * (NOPE + ROPE), QL]
        s[a + "kv_a_proj_with_mqa.weight"] = [KVL + ROPE, H]
        s[a + "kv_a_layernorm.weight"] = [KVL]
        s[a + "kv_b_proj.weight"] = [HEADS * (NOPE + V), KVL]
        s[a + "o_proj.weight"] = [H, HEADS * V]
        m = p + "mlp."
        if i == 0:
            s[m + "gate_proj.weight"] = [INTER, H]
            s[m + "up_proj.weight"] = [INTER, H]
            s[m + "down_proj.weight"] = [H, INTER]
            continue
        s[m + "gate.weight"] = [E, H]
        s[m + "gate.e_score_correction_bias"] = [E]
        for e in range(E):
            s[m + f"experts.{e}.gate_proj.weight"] = [MOE_I, H]
            s[m + f"experts.{e}.up_proj.weight"] = [MOE_I, H]
            s[m + f"experts.{e}.down_proj.weight"] = [H, MOE_I]
        for n in ("gate_proj", "up_proj"):
            s[m + f"shared_experts.{n}.weight"] = [MOE_I, H]
        s[m + "shared_experts.down_proj.weight"] = [H, MOE_I]
    return s


def safetensors(tensors):
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, array in tensors.items():
        blob = np.ascontiguousarray(array, "<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def fused(tensors):
    """The experts of layer 1 as gate_up_proj [E, 2I, H] / down_proj [E, H, I]."""
    out = {k: v for k, v in tensors.items() if ".experts." not in k}
    m = "model.layers.1.mlp.experts."
    out[m + "gate_up_proj"] = np.stack([
        np.concatenate([tensors[m + f"{e}.gate_proj.weight"],
                        tensors[m + f"{e}.up_proj.weight"]]) for e in range(E)])
    out[m + "down_proj"] = np.stack(
        [tensors[m + f"{e}.down_proj.weight"] for e in range(E)])
    return out


def write(root, name, config=None, tensors=None):
    path = os.path.join(root, name)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config or CONFIG, f)
    with open(os.path.join(path, "model.safetensors"), "wb") as f:
        f.write(safetensors(tensors))


def main(root):
    rng = np.random.default_rng(0)
    tensors = {n: (rng.standard_normal(s) * 0.3).astype(np.float32)
               for n, s in shapes().items()}
    for n in tensors:
        if "norm" in n:
            tensors[n] = 1.0 + tensors[n] * 0.1
    write(root, "tiny", tensors=tensors)
    write(root, "tiny_fused", tensors=fused(tensors))
    os.makedirs(root, exist_ok=True)
    np.save(os.path.join(root, "input_ids.npy"),
            rng.integers(0, VOCAB, (2, 9)).astype(np.int64))

    def bad_config(name, **changes):
        write(root, name, config=dict(CONFIG, **changes), tensors=tensors)

    bad_config("kv_heads", num_key_value_heads=1)
    bad_config("q_lora_zero", q_lora_rank=0)
    bad_config("rope_odd", qk_rope_head_dim=3, head_dim=3)
    bad_config("interleave_type", rope_interleave="yes")
    bad_config("partial_rotary", partial_rotary_factor=0.5)
    bad_config("group_divides", n_group=3)
    bad_config("group_size", n_group=4)
    bad_config("topk_group", topk_group=3)
    bad_config("experts_per_tok", num_experts_per_tok=3)
    bad_config("scoring", scoring_func="softmax")
    bad_config("topk_method", topk_method="greedy")
    # A latent rank of 2^31 - 1 once sized the rows picked from
    # kv_a_proj_with_mqa before the tensor's shape was checked (8 GiB).
    bad_config("kv_lora_huge", kv_lora_rank=2**31 - 1)
    bad_shape = dict(tensors)
    bad_shape["model.layers.0.self_attn.kv_b_proj.weight"] = np.zeros(
        (HEADS * NOPE, KVL), np.float32)
    write(root, "kv_b_shape", tensors=bad_shape)
    no_bias = {k: v for k, v in tensors.items()
               if not k.endswith("e_score_correction_bias")}
    write(root, "no_bias", tensors=no_bias)


if __name__ == "__main__":
    main(sys.argv[1])

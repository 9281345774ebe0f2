"""make_checkpoints.py OUTDIR: writes small checkpoint directories for the
importer's tests: `tiny` (a valid one-layer Llama with llama3 rope scaling
and bf16 weights) and one directory per malformed input, each differing from
`tiny` in one file. The safetensors bytes are written by hand: an 8-byte
little-endian header length, the JSON header, then the data."""

import json
import os
import struct
import sys

import numpy as np

CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 8,
    "intermediate_size": 16,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "num_hidden_layers": 1,
    "vocab_size": 12,
    "rms_norm_eps": 1e-05,
    "max_position_embeddings": 64,
    "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0,
                        "factor": 8.0, "low_freq_factor": 1.0,
                        "high_freq_factor": 4.0,
                        "original_max_position_embeddings": 32},
    "tie_word_embeddings": True,
}

SHAPES = {
    "model.embed_tokens.weight": [12, 8],
    "model.norm.weight": [8],
    "model.layers.0.input_layernorm.weight": [8],
    "model.layers.0.post_attention_layernorm.weight": [8],
    "model.layers.0.self_attn.q_proj.weight": [8, 8],
    "model.layers.0.self_attn.k_proj.weight": [4, 8],
    "model.layers.0.self_attn.v_proj.weight": [4, 8],
    "model.layers.0.self_attn.o_proj.weight": [8, 8],
    "model.layers.0.mlp.gate_proj.weight": [16, 8],
    "model.layers.0.mlp.up_proj.weight": [16, 8],
    "model.layers.0.mlp.down_proj.weight": [8, 16],
}


def bf16_bytes(array):
    bits = np.asarray(array, np.float32).view(np.uint32) >> 16
    return bits.astype("<u2").tobytes()


def safetensors(header, data):
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def tiny_weights():
    rng = np.random.default_rng(0)
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, shape in SHAPES.items():
        blob = bf16_bytes(rng.standard_normal(shape) * 0.2)
        header[name] = {"dtype": "BF16", "shape": shape,
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    return header, data


def write(root, name, config=None, weights=None):
    path = os.path.join(root, name)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "wb") as f:
        f.write(config if isinstance(config, bytes)
                else json.dumps(config or CONFIG).encode())
    if weights is None:
        weights = safetensors(*tiny_weights())
    with open(os.path.join(path, "model.safetensors"), "wb") as f:
        f.write(weights)


def main(root):
    header, data = tiny_weights()
    full = safetensors(header, data)
    write(root, "tiny", weights=full)
    write(root, "truncated", weights=full[:len(full) - 100])
    write(root, "short", weights=b"\x10\x00\x00")
    write(root, "header_past_end",
          weights=struct.pack("<Q", 1 << 40) + b"{}")
    write(root, "bad_json", weights=struct.pack("<Q", 9) + b"{not json")

    overlap = json.loads(json.dumps(header))
    up = overlap["model.layers.0.mlp.up_proj.weight"]["data_offsets"]
    gate = overlap["model.layers.0.mlp.gate_proj.weight"]["data_offsets"]
    shift = (gate[1] - gate[0]) // 2
    up[0], up[1] = gate[0] + shift, gate[1] + shift
    write(root, "overlap", weights=safetensors(overlap, data))

    wrong_size = json.loads(json.dumps(header))
    wrong_size["model.norm.weight"]["dtype"] = "F32"
    write(root, "dtype_size", weights=safetensors(wrong_size, data))

    missing = json.loads(json.dumps(header))
    del missing["model.layers.0.self_attn.o_proj.weight"]
    write(root, "missing_tensor", weights=safetensors(missing, data))

    write(root, "config_arch",
          config=dict(CONFIG, architectures=["GPT2LMHeadModel"]))
    write(root, "config_json", config=b'{"architectures": [')
    write(root, "config_no_type",
          config={k: v for k, v in CONFIG.items() if k != "model_type"})
    write(root, "config_type", config=dict(CONFIG, model_type="gpt2"))
    write(root, "config_type_mismatch", config=dict(CONFIG, model_type="qwen3"))
    write(root, "config_rope",
          config=dict(CONFIG, rope_parameters={"rope_type": "longrope",
                                               "rope_theta": 10000.0}))
    write(root, "config_act", config=dict(CONFIG, hidden_act="gelu"))
    # Found by the checkpoint fuzzer: per-layer settings were sized by the
    # layer count before any tensor was read (an allocation of 32 GiB).
    write(root, "config_layers",
          config=dict(CONFIG, num_hidden_layers=2**31 - 1))
    write(root, "config_huge", config=dict(CONFIG, hidden_size=2**40))
    # Found by the checkpoint fuzzer: a rotary fraction of 4e30 overflowed
    # the rotary dimension's integer conversion.
    write(root, "config_partial", config=dict(CONFIG, partial_rotary_factor=4e30))
    os.makedirs(os.path.join(root, "no_config"), exist_ok=True)


if __name__ == "__main__":
    main(sys.argv[1])

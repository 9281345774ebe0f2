"""Models of other shapes than the refs_public ones, for the CPU benchmark.

Runs on a machine with torch, transformers 5.x, onnx and onnxruntime (the GPU
machine's image). Each model has random weights (fixed seeds) and the refs
layout that `scripts/bench_cpu.py --model-dir` reads:

  config.json, model.safetensors   the checkpoint (fp32, save_pretrained)
  model.onnx (+ model.onnx.data)   torch.onnx.export, dynamo, opset 23
  input_ids.npy, logits.npy        the prompt and eager PyTorch's fp32 logits
  ort_logits.npy, meta.json        ONNX Runtime's logits, the op histogram

The shapes differ from refs_public in every dimension that the compiler
tiles or specialises: head dims 32/40/64, GQA 3:1, MHA and MQA, widths and
vocabularies that are not multiples of 16, llama3 rope scaling, a sliding
window, MLA with other ranks, prompts of 37, 45, 57 and 64 tokens.

Usage: unseen_shapes.py OUT_DIR [NAME...]   writes OUT_DIR/<name>.tar
(one uncompressed tar per model: random weights do not compress).
"""
import json
import os
import sys
import tarfile
import tempfile
import traceback

import numpy as np
import torch
import transformers as tf

from onnx_exporters import Logits, histogram


def llama_gqa3():
    return tf.LlamaForCausalLM, tf.LlamaConfig(
        vocab_size=1000, hidden_size=192, intermediate_size=520,
        num_hidden_layers=3, num_attention_heads=6, num_key_value_heads=2,
        max_position_embeddings=512, rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        rope_parameters=dict(rope_type="llama3", rope_theta=500000.0,
                             factor=8.0, low_freq_factor=1.0,
                             high_freq_factor=4.0,
                             original_max_position_embeddings=64)), (2, 37)


def qwen2_mha64():
    return tf.Qwen2ForCausalLM, tf.Qwen2Config(
        vocab_size=512, hidden_size=256, intermediate_size=688,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
        max_position_embeddings=512, tie_word_embeddings=True,
        rope_parameters=dict(rope_type="default", rope_theta=1000000.0)), (1, 64)


def mistral_mqa_window():
    return tf.MistralForCausalLM, tf.MistralConfig(
        vocab_size=300, hidden_size=160, intermediate_size=432,
        num_hidden_layers=2, num_attention_heads=5, num_key_value_heads=1,
        max_position_embeddings=512, sliding_window=24,
        tie_word_embeddings=False), (2, 57)


def deepseek_mla_wide():
    return tf.DeepseekV3ForCausalLM, tf.DeepseekV3Config(
        vocab_size=400, hidden_size=192, intermediate_size=512,
        moe_intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=6, num_key_value_heads=6, q_lora_rank=96,
        kv_lora_rank=48, qk_nope_head_dim=32, qk_rope_head_dim=8,
        v_head_dim=40, first_k_dense_replace=2, n_routed_experts=4,
        num_experts_per_tok=2, n_group=1, topk_group=1,
        max_position_embeddings=512, tie_word_embeddings=False), (1, 45)


MODELS = {f.__name__: f for f in (llama_gqa3, qwen2_mha64,
                                  mistral_mqa_window, deepseek_mla_wide)}


def make(name, out):
    cls, config, (batch, seq) = MODELS[name]()
    config._attn_implementation = "eager"
    torch.manual_seed(sum(map(ord, name)))
    model = cls(config).eval().float()
    meta = {"model": name, "class": cls.__name__, "batch": batch, "seq": seq,
            "transformers": tf.__version__, "torch": torch.__version__}
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, name)
        model.save_pretrained(d, safe_serialization=True)
        ids = torch.randint(0, config.vocab_size, (batch, seq),
                            generator=torch.Generator().manual_seed(7))
        with torch.no_grad():
            logits = model(input_ids=ids, use_cache=False).logits.numpy()
        np.save(os.path.join(d, "input_ids.npy"), ids.numpy())
        np.save(os.path.join(d, "logits.npy"), logits)
        onnx_path = os.path.join(d, "model.onnx")
        try:
            torch.onnx.export(Logits(model).eval(), (ids,), onnx_path,
                              input_names=["input_ids"],
                              output_names=["logits"], dynamo=True,
                              opset_version=23, external_data=True)
            meta["onnx_ops"] = histogram(onnx_path)
            import onnxruntime as ort
            session = ort.InferenceSession(
                onnx_path, providers=["CPUExecutionProvider"])
            ort_logits = session.run(None, {"input_ids": ids.numpy()})[0]
            np.save(os.path.join(d, "ort_logits.npy"), ort_logits)
            meta["ort_vs_torch_max_abs"] = float(
                np.abs(ort_logits - logits).max())
        except Exception:
            meta["onnx_error"] = traceback.format_exc()[-1500:]
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        with tarfile.open(os.path.join(out, f"{name}.tar"), "w") as t:
            t.add(d, arcname=name)
    return meta


def main(out, names):
    os.makedirs(out, exist_ok=True)
    for name in names or MODELS:
        try:
            meta = make(name, out)
        except Exception:
            meta = {"model": name, "error": traceback.format_exc()[-1500:]}
        meta.pop("onnx_ops", None)
        print(json.dumps(meta), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])

"""Tiny random-weight DeepSeek-V3.2 checkpoints (DeepSeek Sparse Attention)
beside the shared v32_dsa reference: other indexer shapes, a top-k wider
than the sequence, mixture-of-experts layers, YaRN rope, two prompts.

Each case folder: config.json, model.safetensors, input_ids.npy (int64
[2, S]), logits.npy (eager PyTorch fp32, use_cache=False), greedy_tokens.npy /
greedy_logits.npy / greedy_margin.npy (greedy decoding where every step is
one plain forward over the prompt and the tokens so far: the model's
definition, which a cached decode must reproduce), ragged/ (row 1 cut to
RAGGED tokens, decoded alone) and meta.json (the config, how many index
rows had tied scores at the top-k boundary, routing statistics).
Norm weights and biases are perturbed (the indexer's LayerNorm too) and the
query/key projections scaled up, as in checkpoints.py, and the MoE router's
correction bias randomized.

Runs on a machine with torch and transformers 5.x (the device machine):
    python3 scripts/refgen/sparse_checkpoints.py
Writes $OUT/sparse_checkpoints.tar.gz (folder `refgen_sparse/`), unpacked
into test/Frontend/Checkpoint/Inputs/.
"""
import json
import os
import sys
import tarfile
import tempfile

import numpy as np
import torch
import transformers as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoints import perturb  # noqa: E402

OUT = os.environ.get("OUT", os.path.join(tempfile.gettempdir(), "out"))
WORK = os.path.join(tempfile.gettempdir(), "refgen_sparse")
STEPS = 12
RAGGED = 23


def v32(**kw):
    d = dict(vocab_size=256, hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=48,
             kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=24, head_dim=8,
             n_group=1, topk_group=1, n_routed_experts=4, num_experts_per_tok=2,
             n_shared_experts=1, routed_scaling_factor=1.0, first_k_dense_replace=2,
             mlp_layer_types=["dense", "dense"],
             layer_types=["deepseek_sparse_attention"] * 2, index_topk=8, index_head_dim=16,
             index_n_heads=2, max_position_embeddings=512, rms_norm_eps=1e-6)
    d.update(kw)
    return d


CASES = {
    # 8 indexer heads of 24 (rope on the first 8), top 12 of up to 52 tokens.
    "v32_index8x24": (v32(index_n_heads=8, index_head_dim=24, index_topk=12), 40, None),
    # A top-k wider than every row: sparse attention must equal dense MLA.
    "v32_topk_wide": (v32(index_topk=64), 40, None),
    # Three layers, the last two mixtures of experts, YaRN rope.
    "v32_moe_yarn": (v32(num_hidden_layers=3, first_k_dense_replace=1,
                         mlp_layer_types=["dense", "sparse", "sparse"],
                         layer_types=["deepseek_sparse_attention"] * 3, n_routed_experts=8,
                         n_group=4, topk_group=2, routed_scaling_factor=2.5,
                         max_position_embeddings=256,
                         rope_parameters={"rope_type": "yarn", "factor": 4.0,
                                          "original_max_position_embeddings": 64,
                                          "mscale": 1.0, "mscale_all_dim": 1.0,
                                          "beta_fast": 32.0, "beta_slow": 1.0,
                                          "rope_theta": 10000.0}), 36, None),
}


def greedy(model, ids, n):
    seq, logits = torch.from_numpy(ids), []
    for _ in range(n):
        step = model(input_ids=seq, use_cache=False).logits[:, -1].float()
        logits.append(step.numpy())
        seq = torch.cat([seq, step.argmax(-1, keepdim=True)], dim=1)
    logits = np.stack(logits, axis=1).astype(np.float32)
    top2 = np.sort(logits, axis=-1)[..., -2:]
    return (seq[:, ids.shape[1]:].numpy().astype(np.int64), logits,
            (top2[..., 1] - top2[..., 0]).astype(np.float32))


def boundary_ties(model, ids):
    """Rows whose indexer scores tie at the top-k boundary (where the
    selection depends on the top-k's tie order)."""
    count = [0]

    def hook(module, args, kwargs, out):
        try:
            count[0] += ties(module, args, kwargs)
        except Exception as e:  # another transformers version's signature
            count[0] = f"not counted: {e}"
        return out

    def ties(module, args, kwargs):
        names = ["hidden_states", "q_resid", "position_embeddings", "attention_mask"]
        vals = list(args) + [kwargs[n] for n in names[len(args):]]
        h, q_resid, pos_emb, mask = vals[:4]
        b, s, _ = h.shape
        cos, sin = pos_emb
        q = module.wq_b(q_resid).view(b, s, module.n_heads, module.head_dim)
        k = module.k_norm(module.wk(h)).unsqueeze(2)
        r = module.qk_rope_head_dim
        from transformers.models.deepseek_v32.modeling_deepseek_v32 import apply_rotary_pos_emb
        qr, kr = apply_rotary_pos_emb(q[..., :r], k[..., :r], cos, sin, unsqueeze_dim=2)
        q = torch.cat([qr, q[..., r:]], -1)
        k = torch.cat([kr, k[..., r:]], -1).squeeze(2)
        sc = torch.relu(torch.matmul(q.float(), k.transpose(-1, -2).float().unsqueeze(1)) * module.softmax_scale)
        w = module.weights_proj(h).float() * module.n_heads ** -0.5
        idx = torch.matmul(w.unsqueeze(-2), sc).squeeze(-2)
        idx = idx.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else idx + mask
        kk = min(module.index_topk, idx.shape[-1])
        if kk >= idx.shape[-1]:
            return 0
        v = idx.sort(-1, descending=True).values
        return int(((v[..., kk - 1] == v[..., kk]) & torch.isfinite(v[..., kk])).sum())

    hooks = [m.register_forward_hook(hook, with_kwargs=True)
             for m in model.modules() if type(m).__name__ == "DeepseekV32Indexer"]
    with torch.no_grad():
        model(input_ids=torch.from_numpy(ids), use_cache=False)
    for h in hooks:
        h.remove()
    return count[0]


def main():
    os.makedirs(OUT, exist_ok=True)
    summary = {"torch": torch.__version__, "transformers": tf.__version__}
    with tarfile.open(os.path.join(OUT, "sparse_checkpoints.tar.gz"), "w:gz") as tar:
        for name, (cfg, seq, _) in CASES.items():
            d = os.path.join(WORK, "refgen_sparse", name)
            os.makedirs(os.path.join(d, "ragged"), exist_ok=True)
            torch.manual_seed(7)
            model = tf.DeepseekV32ForCausalLM(tf.DeepseekV32Config(**cfg)).eval().float()
            gen = torch.Generator().manual_seed(11)
            perturb(model, gen)
            with torch.no_grad():
                for m in model.modules():
                    if hasattr(m, "e_score_correction_bias"):
                        m.e_score_correction_bias.copy_(0.05 * torch.randn(
                            m.e_score_correction_bias.shape, generator=gen))
            model.save_pretrained(d, safe_serialization=True)
            ids = torch.randint(0, cfg["vocab_size"], (2, seq),
                                generator=torch.Generator().manual_seed(99)).numpy()
            with torch.no_grad():
                logits = model(input_ids=torch.from_numpy(ids), use_cache=False).logits.float().numpy()
                tok, lg, mg = greedy(model, ids, STEPS)
                rid = ids[1:2, :RAGGED].copy()
                rtok, rlg, rmg = greedy(model, rid, STEPS)
            files = {"input_ids.npy": ids, "logits.npy": logits, "greedy_tokens.npy": tok,
                     "greedy_logits.npy": lg, "greedy_margin.npy": mg,
                     "ragged/input_ids.npy": rid, "ragged/greedy_tokens.npy": rtok,
                     "ragged/greedy_logits.npy": rlg, "ragged/greedy_margin.npy": rmg}
            for fn, arr in files.items():
                np.save(os.path.join(d, fn), arr)
            meta = {"config": cfg, "seq": seq, "boundary_ties": boundary_ties(model, ids),
                    "min_margin": float(mg.min()), "ragged_min_margin": float(rmg.min())}
            json.dump(meta, open(os.path.join(d, "meta.json"), "w"), indent=1)
            summary[name] = meta
            print(name, json.dumps({k: v for k, v in meta.items() if k != "config"}), flush=True)
            for fn in os.listdir(d):
                if fn in ("generation_config.json",):
                    continue
                tar.add(os.path.join(d, fn), arcname=os.path.join("refgen_sparse", name, fn))
    json.dump(summary, open(os.path.join(OUT, "sparse_checkpoints.json"), "w"), indent=1)


if __name__ == "__main__":
    main()

# RUN: %python %s %S/../Frontend/Checkpoint/Inputs/refs_sparse_public/v4_csa_hca | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: deepseek_v4_model: 300 of 300 rows within 1e-4
"""An independent numpy model of a DeepseekV4ForCausalLM checkpoint (the
semantics docs/DeepSeekV4.md sets out), checked row by row against the
checkpoint's logits.npy (transformers 5.17, fp32). The importer's tests
(Frontend/Checkpoint/v4_csa_hca.py) use it as the reference for V4 models
the checkpoint does not cover (make_v4_variants.py).

It reads the checkpoint's own tensor names (DeepSeek's: wq_a, ape, w1/w3/w2,
tid2eid, ...), computes in float64, and takes the indexer's top-k in
PyTorch's CPU order (topk_reference.py): ReLU scores tie at zero often.
"""

import json
import struct
import sys

import numpy as np

from topk_reference import torch_cpu_topk


class Checkpoint:
    def __init__(self, path):
        self.cfg = json.load(open(path + "/config.json"))
        with open(path + "/model.safetensors", "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            self.header = json.loads(f.read(n))
            self.data = f.read()

    def __getitem__(self, name):
        entry = self.header[name]
        begin, end = entry["data_offsets"]
        dtype = {"F32": np.float32, "I64": np.int64}[entry["dtype"]]
        a = np.frombuffer(self.data[begin:end], dtype=dtype).reshape(entry["shape"])
        return a.astype(np.float64) if dtype == np.float32 else a


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0))
    return e / e.sum(axis, keepdims=True)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


class Model:
    def __init__(self, ckpt):
        self.w, c = ckpt, ckpt.cfg
        self.cfg = c
        self.eps = c["rms_norm_eps"]
        self.heads, self.dim = c["num_attention_heads"], c["head_dim"]
        # The rope slice: a fraction of the *main* head dim, also for the
        # indexer's smaller heads.
        self.rope_dim = int(c["head_dim"] * c["partial_rotary_factor"])
        self.hc = c["hc_mult"]

    def rms(self, x, weight=None):
        y = x / np.sqrt((x * x).mean(-1, keepdims=True) + self.eps)
        return y if weight is None else y * weight

    def rope(self, x, positions, theta, sign=1.0):
        """Interleaved pairs on the trailing rope_dim channels of x [..., S, d]."""
        r = self.rope_dim
        freqs = np.outer(positions, 1.0 / theta ** (np.arange(0, r, 2) / r))
        cos, sin = np.repeat(np.cos(freqs), 2, -1), sign * np.repeat(np.sin(freqs), 2, -1)
        nope, x = x[..., :-r], x[..., -r:]
        rotated = np.stack([-x[..., 1::2], x[..., 0::2]], -1).reshape(x.shape)
        return np.concatenate([nope, x * cos + rotated * sin], -1)

    def compress(self, x, prefix, rate, dim, overlapping):
        """Entries of the closed windows: the gated pool (overlapping: the
        previous window's first half and this window's second half), RMSNorm,
        rope at w * rate."""
        kv, gate = x @ self.w[prefix + "wkv.weight"].T, x @ self.w[prefix + "wgate.weight"].T
        n = kv.shape[0] // rate
        kv = kv[: n * rate].reshape(n, rate, -1)
        gate = gate[: n * rate].reshape(n, rate, -1) + self.w[prefix + "ape"]
        if overlapping:
            slots = np.zeros((n, 2 * rate, dim))
            gates = np.full((n, 2 * rate, dim), -np.inf)
            slots[:, rate:], gates[:, rate:] = kv[..., dim:], gate[..., dim:]
            slots[1:, :rate], gates[1:, :rate] = kv[:-1, :, :dim], gate[:-1, :, :dim]
            kv, gate = slots, gates
        entries = self.rms((kv * softmax(gate, 1)).sum(1), self.w[prefix + "norm.weight"])
        return self.rope(entries, np.arange(n) * rate, self.cfg["compress_rope_theta"])

    def indexer_selection(self, x, q_res, positions, prefix, rate, visible):
        c = self.cfg
        di, hi = c["index_head_dim"], c["index_n_heads"]
        keys = self.compress(x, prefix + "compressor.", rate, di, True)
        q = (q_res @ self.w[prefix + "wq_b.weight"].T).reshape(len(positions), hi, di)
        q = self.rope(q.transpose(1, 0, 2), positions, c["compress_rope_theta"]).transpose(1, 0, 2)
        scores = np.maximum(np.einsum("shd,td->sht", q, keys), 0) * di ** -0.5
        weights = (x @ self.w[prefix + "weights_proj.weight"].T) * hi ** -0.5
        scores = (scores * weights[:, :, None]).sum(1)
        t = keys.shape[0]
        scores = np.where(np.arange(t)[None, :] >= visible[:, None], -np.inf, scores)
        chosen = np.zeros((len(positions), t), bool)
        for s in range(len(positions)):
            picked = np.array(torch_cpu_topk(scores[s].astype(np.float32),
                                             min(c["index_topk"], t)), dtype=np.int64)
            chosen[s, picked[picked < visible[s]]] = True
        return chosen

    def attention(self, x, layer, kind, positions):
        c, w = self.cfg, self.w
        p = f"model.layers.{layer}.attn."
        s, h, d = len(positions), self.heads, self.dim
        theta = c["rope_theta"] if kind == "sliding_attention" else c["compress_rope_theta"]
        q_res = self.rms(x @ w[p + "wq_a.weight"].T, w[p + "q_norm.weight"])
        q = (q_res @ w[p + "wq_b.weight"].T).reshape(s, h, d).transpose(1, 0, 2)
        q = self.rope(self.rms(q), positions, theta)
        kv = self.rope(self.rms(x @ w[p + "wkv.weight"].T, w[p + "norm.weight"]), positions, theta)
        i, j = positions[:, None], positions[None, :]
        bias = np.where((j <= i) & (i - j < c["sliding_window"]), 0.0, -np.inf)
        keys = kv
        if kind != "sliding_attention":
            rate = c["compress_rates"][kind]
            csa = kind == "compressed_sparse_attention"
            entries = self.compress(x, p + "compressor.", rate, d, csa)
            visible = (positions + 1) // rate
            seen = np.arange(entries.shape[0])[None, :] < visible[:, None]
            if csa and entries.shape[0]:
                seen = self.indexer_selection(x, q_res, positions, p + "indexer.", rate, visible)
            keys = np.concatenate([kv, entries])
            bias = np.concatenate([bias, np.where(seen, 0.0, -np.inf)], 1)
        logits = np.einsum("hsd,td->hst", q, keys) * d ** -0.5 + bias[None]
        sink = np.broadcast_to(w[p + "attn_sink"][:, None, None], (h, s, 1))
        probs = softmax(np.concatenate([logits, sink], -1))[..., :-1]
        out = self.rope(np.einsum("hst,td->hsd", probs, keys), positions, theta, sign=-1.0)
        groups = c["o_groups"]
        grouped = out.transpose(1, 0, 2).reshape(s, groups, -1)
        wa = w[p + "wo_a.weight"].reshape(groups, c["o_lora_rank"], -1)
        return np.einsum("sgi,goi->sgo", grouped, wa).reshape(s, -1) @ w[p + "wo_b.weight"].T

    def hyper_connection(self, streams, prefix):
        c, n, eps = self.cfg, self.hc, self.cfg["hc_eps"]
        mix = self.rms(streams.reshape(streams.shape[0], -1)) @ self.w[prefix + "_fn"].T
        base, scale = self.w[prefix + "_base"], self.w[prefix + "_scale"]
        pre = sigmoid(mix[:, :n] * scale[0] + base[:n]) + eps
        post = 2 * sigmoid(mix[:, n:2 * n] * scale[1] + base[n:2 * n])
        comb = softmax(mix[:, 2 * n:].reshape(-1, n, n) * scale[2] + base[2 * n:].reshape(n, n)) + eps
        comb = comb / (comb.sum(-2, keepdims=True) + eps)
        for _ in range(c["hc_sinkhorn_iters"] - 1):
            comb = comb / (comb.sum(-1, keepdims=True) + eps)
            comb = comb / (comb.sum(-2, keepdims=True) + eps)
        return post, comb, (pre[:, :, None] * streams).sum(1)

    def mlp(self, x, prefix):
        limit = self.cfg["swiglu_limit"]
        gate = np.minimum(x @ self.w[prefix + "w1.weight"].T, limit)
        up = np.clip(x @ self.w[prefix + "w3.weight"].T, -limit, limit)
        return (gate * sigmoid(gate) * up) @ self.w[prefix + "w2.weight"].T

    def moe(self, x, layer, ids):
        c, p = self.cfg, f"model.layers.{layer}.ffn."
        scores = np.sqrt(np.logaddexp(0, x @ self.w[p + "gate.weight"].T))  # sqrt(softplus)
        k = c["num_experts_per_tok"]
        if c["mlp_layer_types"][layer] == "hash_moe":
            chosen = self.w[p + "gate.tid2eid"][ids]
        else:
            chosen = np.argsort(-(scores + self.w[p + "gate.bias"]), -1, kind="stable")[:, :k]
        weights = np.take_along_axis(scores, chosen, 1)
        weights = weights / (weights.sum(-1, keepdims=True) + 1e-20) * c["routed_scaling_factor"]
        out = self.mlp(x, p + "shared_experts.")
        for s in range(x.shape[0]):
            for e, wt in zip(chosen[s], weights[s]):
                out[s] += wt * self.mlp(x[s:s + 1], p + f"experts.{e}.")[0]
        return out

    def forward(self, ids):
        c, w = self.cfg, self.w
        positions = np.arange(len(ids))
        h = np.repeat(w["model.embed_tokens.weight"][ids][:, None, :], self.hc, 1)
        for layer, kind in enumerate(c["layer_types"]):
            p = f"model.layers.{layer}."
            post, comb, x = self.hyper_connection(h, p + "hc_attn")
            out = self.attention(self.rms(x, w[p + "attn_norm.weight"]), layer, kind, positions)
            h = post[:, :, None] * out[:, None, :] + np.einsum("sjk,sjd->skd", comb, h)
            post, comb, x = self.hyper_connection(h, p + "hc_ffn")
            out = self.moe(self.rms(x, w[p + "ffn_norm.weight"]), layer, ids)
            h = post[:, :, None] * out[:, None, :] + np.einsum("sjk,sjd->skd", comb, h)
        mix = self.rms(h.reshape(len(ids), -1)) @ w["model.hc_head.hc_fn"].T
        pre = sigmoid(mix * w["model.hc_head.hc_scale"] + w["model.hc_head.hc_base"]) + c["hc_eps"]
        x = self.rms((pre[:, :, None] * h).sum(1), w["model.norm.weight"])
        return x @ w["head.weight"].T


def main(path):
    ckpt = Checkpoint(path)
    ids = np.load(path + "/input_ids.npy")
    ref = np.load(path + "/logits.npy")
    model = Model(ckpt)
    ok = total = 0
    worst = 0.0
    for b in range(ids.shape[0]):
        got = model.forward(ids[b])
        for s in range(ids.shape[1]):
            d = float(np.abs(got[s] - ref[b, s]).max())
            worst = max(worst, d)
            total += 1
            if d <= 1e-4:
                ok += 1
            else:
                print(f"FAIL row {b},{s}: max |d| {d:.3e}")
    print(f"deepseek_v4_model: {ok} of {total} rows within 1e-4 (worst {worst:.1e})")
    return 0 if ok == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

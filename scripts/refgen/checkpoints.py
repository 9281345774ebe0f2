"""Tiny random-weight Hugging Face checkpoints with PyTorch reference logits.

Makes: one folder per case, each with config.json, model.safetensors (or three shards and
model.safetensors.index.json), input_ids.npy (int64 [2, 23], the same fixed random ids for
every case), logits.npy (float32, eager PyTorch, use_cache=False) and meta.json (model
class, the rope parameters as the model used them: rope type, inverse frequencies before
and after the forward, attention scaling; the softmax scale of the attention layers; the
tensor names, shapes and dtypes in the checkpoint; MoE routing statistics; a reload check).
Cases: DeepSeek-V3 with MoE layers (randomized router correction bias, checked for
non-degenerate routing) and without q LoRA with YaRN rope; Llama with linear, dynamic-NTK,
YaRN and llama3 rope scaling; Qwen2 with q/k/v biases and tied embeddings; a Llama saved
in bfloat16; a Llama saved as three shards.
Norm weights and biases are perturbed away from their 1/0 initial values so that tests
notice a dropped gamma or bias, and the query/key projections are scaled up (QK_SCALE)
so that attention is far from uniform and a wrong rope or softmax scale shows in the
logits (meta.json records how much the logits move when the rope scaling is removed).

Runs on a machine with torch and transformers (5.x; the device machine):
    python3 scripts/refgen/checkpoints.py
Writes $OUT/checkpoints.tar.gz (folder `refgen/`).
"""
import json
import math
import os
import shutil
import struct
import tarfile
import tempfile
import traceback

import numpy as np
import torch
import transformers as tf

OUT = os.environ.get("OUT", os.path.join(tempfile.gettempdir(), "out"))
WORK = os.path.join(os.environ.get("REFGEN_TMP", os.path.join(tempfile.gettempdir(), "refgen")), "refgen")
SEQ = 23
THETA = 10000.0
QK_SCALE = 6.0  # 0.02 * 6: attention scores of order 1 instead of nearly uniform attention
QK_WEIGHTS = ("q_proj.weight", "k_proj.weight", "q_b_proj.weight", "kv_a_proj_with_mqa.weight", "kv_b_proj.weight")
torch.set_num_threads(4)


def llama_base(**kw):
    d = dict(vocab_size=256, hidden_size=96, intermediate_size=112, num_hidden_layers=2,
             num_attention_heads=6, num_key_value_heads=2, head_dim=16, max_position_embeddings=512,
             rms_norm_eps=1e-5, tie_word_embeddings=False)
    d.update(kw)
    return d


def deepseek_base(**kw):
    d = dict(vocab_size=256, hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
             q_lora_rank=48, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=24,
             first_k_dense_replace=2, n_routed_experts=4, num_experts_per_tok=2, n_group=1, topk_group=1,
             n_shared_experts=1, routed_scaling_factor=1.0, norm_topk_prob=True,
             max_position_embeddings=512, rms_norm_eps=1e-6, tie_word_embeddings=False)
    d.update(kw)
    return d


# name: (model class, config class, config kwargs, rope parameters or None, options)
CASES = {
    "deepseek_moe": ("DeepseekV3ForCausalLM", "DeepseekV3Config",
                     deepseek_base(num_hidden_layers=3, first_k_dense_replace=1, n_routed_experts=8,
                                   num_experts_per_tok=2, n_group=4, topk_group=2, n_shared_experts=1,
                                   routed_scaling_factor=2.5, norm_topk_prob=True),
                     None, {"moe": True}),
    "deepseek_nolora_yarn": ("DeepseekV3ForCausalLM", "DeepseekV3Config",
                             # max_position_embeddings = factor * original, so that a version that derives the
                             # yarn factor from their ratio gets the same factor 4
                             deepseek_base(q_lora_rank=None, max_position_embeddings=256),
                             {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64,
                              "mscale": 1.0, "mscale_all_dim": 1.0, "beta_fast": 32.0, "beta_slow": 1.0}, {}),
    "llama_rope_linear": ("LlamaForCausalLM", "LlamaConfig", llama_base(),
                          {"rope_type": "linear", "factor": 2.0}, {}),
    "llama_rope_dynamic": ("LlamaForCausalLM", "LlamaConfig", llama_base(max_position_embeddings=16),
                           {"rope_type": "dynamic", "factor": 2.0}, {}),
    "llama_rope_yarn": ("LlamaForCausalLM", "LlamaConfig", llama_base(max_position_embeddings=64),
                        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}, {}),
    "llama_rope_llama3": ("LlamaForCausalLM", "LlamaConfig", llama_base(max_position_embeddings=128),
                          {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                           "original_max_position_embeddings": 16}, {}),
    "qwen2_bias": ("Qwen2ForCausalLM", "Qwen2Config",
                   dict(vocab_size=256, hidden_size=64, intermediate_size=112, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                        rms_norm_eps=1e-6, tie_word_embeddings=True, use_sliding_window=False),
                   None, {"theta": 1000000.0}),
    "llama_bf16": ("LlamaForCausalLM", "LlamaConfig", llama_base(), None, {"bf16": True}),
    "llama_sharded": ("LlamaForCausalLM", "LlamaConfig", llama_base(), None, {"shards": 3}),
}

ROPE_KEYS = ("rope_parameters", "rope_scaling", "rope_theta", "max_position_embeddings", "partial_rotary_factor",
             "rope_interleave", "head_dim", "qk_rope_head_dim", "dtype", "torch_dtype", "tie_word_embeddings",
             "attention_bias", "use_sliding_window", "sliding_window")


def make_config(cfg_cls, base, rope, theta):
    """Build the config; rope given as `rope_parameters` (transformers 5) or legacy `rope_scaling`."""
    tries, errors = [], []
    if rope is None:
        tries.append(("rope_theta", dict(rope_theta=theta)))
        tries.append(("rope_parameters", dict(rope_parameters={"rope_type": "default", "rope_theta": theta})))
    else:
        tries.append(("rope_parameters", dict(rope_parameters={**rope, "rope_theta": theta})))
        tries.append(("rope_scaling", dict(rope_scaling=dict(rope), rope_theta=theta)))
    tries += [(how + " without use_sliding_window", kw) for how, kw in list(tries) if "use_sliding_window" in base]
    for how, kw in tries:
        b = {k: v for k, v in base.items() if not (how.endswith("use_sliding_window") and k == "use_sliding_window")}
        try:
            return cfg_cls(**b, **kw), how, errors
        except Exception as e:
            errors.append(f"{how}: {type(e).__name__}: {str(e)[:300]}")
    raise RuntimeError("no config spelling accepted: " + " | ".join(errors))


def tolist(t):
    return [float(x) for x in t.detach().float().flatten().tolist()]


def rotary_modules(model):
    return [(n, m) for n, m in model.named_modules() if type(m).__name__.endswith("RotaryEmbedding")]


def rope_info(model):
    info = {}
    for n, m in rotary_modules(model):
        d = {"class": type(m).__name__}
        for a in ("rope_type", "attention_scaling", "max_seq_len_cached", "original_max_seq_len"):
            v = getattr(m, a, None)
            if v is not None:
                d[a] = v if isinstance(v, (int, float, str)) else float(v)
        if hasattr(m, "inv_freq"):
            d["inv_freq"] = tolist(m.inv_freq)
        info[n or "rotary"] = d
    return info


def attn_scalings(model):
    out = {}
    for n, m in model.named_modules():
        if type(m).__name__.endswith("Attention") and hasattr(m, "scaling"):
            out[n] = float(m.scaling)
    return out


def perturb(model, gen):
    """Norm weights 1 + 0.1 N(0,1), biases 0.1 N(0,1) (their initial values are 1 and 0)."""
    names = []
    with torch.no_grad():
        for n, p in model.named_parameters():
            if n.endswith("norm.weight") or n.endswith("layernorm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
                names.append(n)
            elif n.endswith(".bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
                names.append(n)
            elif n.endswith(QK_WEIGHTS):
                p.mul_(QK_SCALE)
                names.append(n)
    return names


def logits_with_unscaled_rope(model, ids, theta):
    """Logits with every rotary table replaced by the plain (unscaled) one: how much the scaling matters."""
    with torch.no_grad():
        for _, m in rotary_modules(model):
            d = 2 * m.inv_freq.numel()
            m.inv_freq.copy_(1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
            m.attention_scaling = 1.0
    return logits_of(model, ids)


def _first_int(vals):
    for v in vals:
        if torch.is_tensor(v) and not v.is_floating_point() and v.dim() >= 1:
            return v
    return None


class RoutingRecorder:
    """Records the experts chosen per token in every MoE block, whatever the transformers version calls them.
    Also keeps the router's input, so the DeepSeek-V3 routing can be recomputed independently."""

    def __init__(self, model):
        self.records, self.inputs, self.handles, self.gates = {}, {}, [], {}
        for n, m in model.named_modules():
            if not type(m).__name__.endswith("MoE"):
                continue
            if hasattr(m, "route_tokens_to_experts"):
                orig = m.route_tokens_to_experts

                def wrapped(*a, _orig=orig, _n=n, **k):
                    r = _orig(*a, **k)
                    self.put(_n, _first_int(r if isinstance(r, tuple) else [r]))
                    return r
                m.route_tokens_to_experts = wrapped
            gate = getattr(m, "gate", None)
            if gate is not None:
                self.gates[n] = gate
                self.handles.append(gate.register_forward_hook(self._gate_hook(n)))
            experts = getattr(m, "experts", None)
            if experts is not None and not isinstance(experts, torch.nn.ModuleList):
                self.handles.append(experts.register_forward_pre_hook(self._experts_hook(n), with_kwargs=True))

    def _gate_hook(self, n):
        def hook(mod, inp, out):
            if inp and torch.is_tensor(inp[0]) and n not in self.inputs:
                self.inputs[n] = inp[0].detach().reshape(-1, inp[0].shape[-1]).float()
            if isinstance(out, tuple):
                self.put(n, _first_int(out))
        return hook

    def _experts_hook(self, n):
        def hook(mod, args, kwargs):
            self.put(n, _first_int(list(args[1:]) + list(kwargs.values())))
        return hook

    def put(self, name, idx):
        if idx is not None and name not in self.records:
            self.records[name] = idx.detach().reshape(-1, idx.shape[-1]).cpu().numpy()

    def recompute(self, cfg):
        """DeepSeek-V3 routing from the router input: sigmoid scores + correction bias, the best topk_group of
        n_group groups (group score = sum of its top-2), then the top num_experts_per_tok experts."""
        out = {}
        E, G, TG, K = cfg.n_routed_experts, cfg.n_group, cfg.topk_group, cfg.num_experts_per_tok
        for n, x in self.inputs.items():
            gate = self.gates[n]
            w = gate.weight.detach().float()
            b = getattr(gate, "e_score_correction_bias", torch.zeros(E)).detach().float()
            s = torch.sigmoid(x @ w.T) + b
            gs = s.view(-1, G, E // G).topk(min(2, E // G), dim=-1)[0].sum(-1)
            keep = torch.zeros_like(gs).scatter_(1, gs.topk(TG, dim=-1)[1], 1.0)
            s = s.masked_fill(~keep.repeat_interleave(E // G, dim=1).bool(), 0.0)
            out[n] = s.topk(K, dim=-1)[1].numpy()
        return out

    def clear(self):
        self.records, self.inputs = {}, {}

    def summary(self, n_experts, records=None):
        out = {}
        for n, idx in sorted((self.records if records is None else records).items()):
            sets = [tuple(sorted(int(e) for e in row)) for row in idx]
            counts = np.bincount(idx.reshape(-1), minlength=n_experts).tolist()
            out[n] = {"tokens": len(sets), "distinct_expert_sets": len(set(sets)), "expert_counts": counts,
                      "first_tokens": [list(s) for s in sets[:12]]}
        return out


def routing_ok(summ, n_experts):
    return bool(summ) and all(s["distinct_expert_sets"] >= 4 and sum(c > 0 for c in s["expert_counts"]) >= n_experts - 1
                              for s in summ.values())


def st_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
    return {k: [v["dtype"], v["shape"]] for k, v in h.items() if k != "__metadata__"}


def save_sharded(model, d, want):
    total = sum(p.numel() * p.element_size() for p in model.state_dict().values())
    size = total // want + 1
    for _ in range(12):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        try:
            model.save_pretrained(d, max_shard_size=size)
        except Exception:
            model.save_pretrained(d, max_shard_size=f"{max(1, size // 1000)}KB")
        n = len([f for f in os.listdir(d) if f.endswith(".safetensors")])
        if n == want:
            return size, n
        size = int(size * (1.15 if n > want else 0.87))
    return size, n


def logits_of(model, ids):
    with torch.no_grad():
        return model(input_ids=ids, use_cache=False).logits.float().numpy()


def run_case(name, spec, ids, d):
    cls_name, cfg_name, base, rope, opt = spec
    cls, cfg_cls = getattr(tf, cls_name), getattr(tf, cfg_name)
    theta = opt.get("theta", THETA)
    cfg, how, cfg_errors = make_config(cfg_cls, dict(base), rope, theta)
    cfg._attn_implementation = "eager"
    meta = {"case": name, "class": cls_name, "config_spelling": how, "seq": SEQ,
            "requested_rope": rope or {"rope_type": "default"}, "rope_theta": theta}
    if cfg_errors:
        meta["config_spelling_errors"] = cfg_errors
    seed = 1000 + sorted(CASES).index(name)
    torch.manual_seed(seed)
    model = cls(cfg).eval().float()
    gen = torch.Generator().manual_seed(seed)
    meta["perturbed"] = len(perturb(model, gen))
    meta["rope_before_forward"] = rope_info(model)
    if opt.get("moe"):
        n_exp = cfg.n_routed_experts
        with torch.no_grad():
            for n, b in list(model.named_buffers()) + list(model.named_parameters()):
                if n.endswith("e_score_correction_bias"):
                    b.copy_(0.05 * torch.randn(b.shape, generator=gen))
        rec = RoutingRecorder(model)
        for router_std in (0.1, 0.3, 1.0):
            with torch.no_grad():
                for n, p in model.named_parameters():
                    if n.endswith("mlp.gate.weight"):
                        p.copy_(router_std * torch.randn(p.shape, generator=gen))
            rec.clear()
            logits_of(model, ids)
            summ = rec.summary(n_exp)
            try:
                recomputed = rec.recompute(cfg)
            except Exception as e:
                recomputed = {"error": f"{type(e).__name__}: {e}"}
            if not summ and recomputed and "error" not in recomputed:
                summ = rec.summary(n_exp, recomputed)
                meta["routing_source"] = "recomputed from the router input (no expert indices observed)"
            if routing_ok(summ, n_exp):
                break
        meta["router_weight_std"] = router_std
        meta["routing"] = summ
        if "error" not in recomputed and rec.records:
            meta["routing_matches_recomputed"] = all(
                n in recomputed and np.array_equal(np.sort(rec.records[n], 1), np.sort(recomputed[n], 1))
                for n in rec.records)
        meta["routing_non_degenerate"] = routing_ok(summ, n_exp)
        meta["e_score_correction_bias"] = {n: tolist(b) for n, b in model.named_buffers()
                                           if n.endswith("e_score_correction_bias")}
        print(f"[{name}] routing (router std {router_std}):", flush=True)
        for n, s in summ.items():
            print(f"  {n}: distinct sets {s['distinct_expert_sets']}/{s['tokens']}, counts {s['expert_counts']}, "
                  f"first tokens {s['first_tokens'][:8]}", flush=True)
    # rotary tables are buffers: keep them in float32 across the bf16 round trip
    rope_buffers = {n: b.detach().clone() for n, b in model.named_buffers() if "inv_freq" in n}
    if opt.get("bf16"):
        model = model.to(torch.bfloat16)
    os.makedirs(d, exist_ok=True)
    if opt.get("shards"):
        size, n = save_sharded(model, d, opt["shards"])
        meta["max_shard_size"], meta["shards"] = size, n
    else:
        model.save_pretrained(d)
    model = model.float()  # bf16 case: logits from the fp32 upcast of the saved bf16 weights
    with torch.no_grad():
        for n, b in model.named_buffers():
            if n in rope_buffers:
                b.copy_(rope_buffers[n])
    logits = logits_of(model, ids)
    meta["rope_after_forward"] = rope_info(model)
    meta["attention_scaling"] = attn_scalings(model)
    np.save(os.path.join(d, "input_ids.npy"), ids.numpy())
    np.save(os.path.join(d, "logits.npy"), logits)
    meta["logits_shape"], meta["logits_absmax"] = list(logits.shape), float(np.abs(logits).max())
    meta["logits_std"] = float(logits.std())
    meta["qk_weight_scale"] = QK_SCALE
    with open(os.path.join(d, "config.json")) as f:
        saved = json.load(f)
    meta["config_json"] = {k: saved[k] for k in ROPE_KEYS if k in saved}
    files = sorted(os.listdir(d))
    meta["files"] = files
    tensors = {}
    for f in files:
        if f.endswith(".safetensors"):
            for k, v in st_header(os.path.join(d, f)).items():
                tensors[k] = v + ([f] if opt.get("shards") else [])
    meta["tensors"] = dict(sorted(tensors.items()))
    meta["bytes"] = sum(os.path.getsize(os.path.join(d, f)) for f in files)
    # the saved directory alone reproduces the logits
    try:
        try:
            again = cls.from_pretrained(d, attn_implementation="eager", dtype=torch.float32)
        except TypeError:
            again = cls.from_pretrained(d, attn_implementation="eager", torch_dtype=torch.float32)
        again = again.eval().float()
        meta["reload_max_abs_diff"] = float(np.abs(logits_of(again, ids) - logits).max())
        meta["reload_rope"] = {k: {a: v.get(a) for a in ("rope_type", "attention_scaling")}
                               for k, v in rope_info(again).items()}
    except Exception as e:
        meta["reload_error"] = f"{type(e).__name__}: {str(e)[:400]}"
    if rope is not None:
        try:
            meta["logits_max_abs_change_with_unscaled_rope"] = float(
                np.abs(logits_with_unscaled_rope(model, ids, theta) - logits).max())
        except Exception as e:
            meta["unscaled_rope_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    return meta


def expected_notes(name, meta):
    """Cross-checks against the published formulas; mismatches are reported, not fatal."""
    notes = {}
    r = next(iter(meta.get("rope_after_forward", {}).values()), {})
    if name == "llama_rope_dynamic":
        dim, base, f, L = 16, THETA, 2.0, 16
        b = base * ((f * SEQ / L) - (f - 1)) ** (dim / (dim - 2))
        exp = [1.0 / b ** (i / dim) for i in range(0, dim, 2)]
        got = r.get("inv_freq")
        notes["dynamic_inv_freq_at_seq23_matches_formula"] = bool(got) and np.allclose(got, exp, rtol=1e-5)
        before = next(iter(meta.get("rope_before_forward", {}).values()), {}).get("inv_freq")
        notes["dynamic_inv_freq_changed_by_forward"] = bool(got and before) and not np.allclose(got, before)
    if name == "deepseek_nolora_yarn":
        mscale = 0.1 * 1.0 * math.log(4.0) + 1.0
        exp = (16 + 8) ** -0.5 * mscale * mscale
        got = list(meta.get("attention_scaling", {}).values())
        notes["expected_softmax_scale"] = exp
        notes["softmax_scale_matches"] = bool(got) and all(abs(g - exp) < 1e-6 for g in got)
    if "rope_type" in r:
        notes["rope_type_used"] = r["rope_type"]
        want = (meta.get("requested_rope") or {}).get("rope_type", "default")
        notes["rope_type_as_requested"] = r["rope_type"] == want
    return notes


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    g = torch.Generator().manual_seed(1234)
    ids = torch.randint(0, 256, (2, SEQ), generator=g, dtype=torch.int64)
    import safetensors
    summary = {"versions": {"torch": torch.__version__, "transformers": tf.__version__,
                            "safetensors": safetensors.__version__, "numpy": np.__version__},
               "input_ids": "int64 [2, 23], torch.randint(0, 256) with generator seed 1234", "cases": {}}
    try:
        import onnx, onnxruntime
        summary["versions"].update(onnx=onnx.__version__, onnxruntime=onnxruntime.__version__)
    except Exception:
        pass
    for name, spec in CASES.items():
        d = os.path.join(WORK, name)
        try:
            meta = run_case(name, spec, ids, d)
            meta["checks"] = expected_notes(name, meta)
        except Exception:
            meta = {"case": name, "error": traceback.format_exc()[-2000:]}
            shutil.rmtree(d, ignore_errors=True)
        if os.path.isdir(d):
            with open(os.path.join(d, "meta.json"), "w") as f:
                json.dump(meta, f, indent=1)
        summary["cases"][name] = {k: meta.get(k) for k in ("error", "config_spelling", "config_json", "checks",
                                                           "bytes", "reload_max_abs_diff", "reload_error",
                                                           "routing_non_degenerate", "shards", "logits_absmax",
                                                           "logits_std", "logits_max_abs_change_with_unscaled_rope")
                                  if meta.get(k) is not None}
        print(json.dumps({name: summary["cases"][name]})[:2500], flush=True)
    with open(os.path.join(WORK, "meta.json"), "w") as f:
        json.dump(summary, f, indent=1)
    os.makedirs(OUT, exist_ok=True)
    with tarfile.open(os.path.join(OUT, "checkpoints.tar.gz"), "w:gz") as t:
        t.add(WORK, arcname="refgen")
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(WORK) for f in fs)
    print(f"total bytes {total}")


if __name__ == "__main__":
    main()

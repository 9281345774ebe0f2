#!/usr/bin/env python3
"""Writes the demo's tiny ONNX model and its float64 numpy reference.

A 2-layer Llama-style decoder (token embedding, RMSNorm, GQA attention with
rotate-half RoPE, SwiGLU MLP, residuals, final norm, LM head) with random
weights from a fixed seed, written with onnx.helper as an opset-23 graph in
the shape torch.onnx exports such a model: linear weights stored [in, out]
for MatMul, heads split by Reshape + Transpose, RoPE as Mul/Slice/Neg/Concat
with constant cos/sin tables, GQA by Hugging Face's repeat_kv
(Unsqueeze/Expand/Reshape), a constant causal mask added to the scaled
scores, Softmax, SwiGLU as Mul(Mul(g, Sigmoid(g)), up). The layer norms are
RMSNormalization nodes; the final norm is written out
(Pow/ReduceMean/Add/Sqrt/Div/Mul), as older exporters do.

The reference logits come from a separate, plain numpy implementation of
the same decoder in float64 (it does not read the graph).

    /usr/bin/python3 examples/tiny-onnx/make_model.py [OUT_DIR]

writes model.onnx, input_ids.npy, logits.npy and README.md into OUT_DIR
(default: this directory).
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

VOCAB, HIDDEN, LAYERS = 512, 128, 2
HEADS, KV_HEADS, HEAD_DIM, MLP = 4, 2, 32, 344
THETA, EPS, SEQ = 10000.0, 1e-5, 12
GROUP = HEADS // KV_HEADS
SEED = 20240
HERE = os.path.dirname(os.path.abspath(__file__))


def weights():
    """Parameters in the Hugging Face layout (nn.Linear weights are [out, in]),
    float32. q/k are scaled up so that attention is far from uniform."""
    r = np.random.default_rng(SEED)

    def lin(out, inp, gain=1.0):
        return (r.standard_normal((out, inp)) * gain / np.sqrt(inp)).astype(np.float32)

    def norm():
        return (1.0 + 0.1 * r.standard_normal(HIDDEN)).astype(np.float32)

    p = {"embed": r.standard_normal((VOCAB, HIDDEN)).astype(np.float32)}
    for i in range(LAYERS):
        p[f"l{i}.input_norm"] = norm()
        p[f"l{i}.q"] = lin(HEADS * HEAD_DIM, HIDDEN, 1.6)
        p[f"l{i}.k"] = lin(KV_HEADS * HEAD_DIM, HIDDEN, 1.6)
        p[f"l{i}.v"] = lin(KV_HEADS * HEAD_DIM, HIDDEN)
        p[f"l{i}.o"] = lin(HIDDEN, HEADS * HEAD_DIM, 0.5)
        p[f"l{i}.post_norm"] = norm()
        p[f"l{i}.gate"] = lin(MLP, HIDDEN)
        p[f"l{i}.up"] = lin(MLP, HIDDEN)
        p[f"l{i}.down"] = lin(HIDDEN, MLP, 0.5)
    p["final_norm"] = norm()
    p["lm_head"] = lin(VOCAB, HIDDEN, 2.0)
    return p


def prompt():
    return np.random.default_rng(SEED + 1).integers(
        0, VOCAB, size=(1, SEQ)).astype(np.int64)


# --- float64 numpy reference ---------------------------------------------

def reference(p, ids):
    """Returns (logits [S, V], per-layer attention probabilities)."""
    p = {k: v.astype(np.float64) for k, v in p.items()}
    s = len(ids)

    def rms_norm(x, w):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * w

    def rope(x):  # x: [heads, s, d]; rotates pairs (j, j + d/2) by pos * freq_j
        half = HEAD_DIM // 2
        freq = THETA ** (-np.arange(half) * 2.0 / HEAD_DIM)
        ang = np.arange(s)[:, None] * freq[None, :]
        c, sn = np.cos(ang), np.sin(ang)
        a, b = x[..., :half], x[..., half:]
        return np.concatenate([a * c - b * sn, b * c + a * sn], axis=-1)

    h = p["embed"][ids]
    probs = []
    for i in range(LAYERS):
        x = rms_norm(h, p[f"l{i}.input_norm"])
        q = rope((x @ p[f"l{i}.q"].T).reshape(s, HEADS, HEAD_DIM).transpose(1, 0, 2))
        k = rope((x @ p[f"l{i}.k"].T).reshape(s, KV_HEADS, HEAD_DIM).transpose(1, 0, 2))
        v = (x @ p[f"l{i}.v"].T).reshape(s, KV_HEADS, HEAD_DIM).transpose(1, 0, 2)
        out = np.zeros((s, HEADS, HEAD_DIM))
        layer_probs = []
        for hd in range(HEADS):
            kv = hd // GROUP
            sc = q[hd] @ k[kv].T / np.sqrt(HEAD_DIM)
            sc[np.triu_indices(s, 1)] = -np.inf
            e = np.exp(sc - sc.max(axis=-1, keepdims=True))
            pr = e / e.sum(axis=-1, keepdims=True)
            layer_probs.append(pr)
            out[:, hd] = pr @ v[kv]
        probs.append(np.stack(layer_probs))
        h = h + out.reshape(s, HEADS * HEAD_DIM) @ p[f"l{i}.o"].T
        x = rms_norm(h, p[f"l{i}.post_norm"])
        g = x @ p[f"l{i}.gate"].T
        u = x @ p[f"l{i}.up"].T
        h = h + (g / (1.0 + np.exp(-g)) * u) @ p[f"l{i}.down"].T
    return rms_norm(h, p["final_norm"]) @ p["lm_head"].T, probs


# --- ONNX graph -----------------------------------------------------------

class Graph:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], {}

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def ints(self, name, values):
        return self.const(name, np.array(values, dtype=np.int64))

    def op(self, op_type, inputs, **attrs):
        n = self.count.get(op_type, 0)
        self.count[op_type] = n + 1
        out = f"{op_type.lower()}_{n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out],
                                           name=f"node_{op_type}_{n}", **attrs))
        return out


def rope_tables():
    inv = 1.0 / THETA ** (np.arange(0, HEAD_DIM, 2, dtype=np.float64) / HEAD_DIM)
    ang = np.outer(np.arange(SEQ), inv)
    emb = np.concatenate([ang, ang], axis=-1)[None, None]
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def build(p):
    g = Graph()
    f32min = np.float32(np.finfo(np.float32).min)
    mask = np.where(np.tril(np.ones((SEQ, SEQ), bool)), np.float32(0), f32min)
    cos, sin = rope_tables()
    g.const("rope_cos", cos)
    g.const("rope_sin", sin)
    g.const("causal_mask", mask[None, None].astype(np.float32))
    g.const("attn_scale", np.float32(1.0 / np.sqrt(HEAD_DIM)))
    g.ints("heads_shape", [1, SEQ, -1, HEAD_DIM])
    g.ints("merge_shape", [1, SEQ, -1])
    g.ints("rope_start", [0])
    g.ints("rope_half", [HEAD_DIM // 2])
    g.ints("rope_end", [np.iinfo(np.int64).max])
    g.ints("rope_axis", [3])
    g.ints("rope_step", [1])
    g.ints("repeat_kv_axis", [2])
    g.ints("repeat_kv_expand", [1, KV_HEADS, GROUP, SEQ, HEAD_DIM])
    g.ints("repeat_kv_shape", [1, HEADS, SEQ, HEAD_DIM])
    g.ints("norm_axes", [-1])
    g.const("pow_two", np.float32(2.0))
    g.const("norm_eps", np.float32(EPS))

    def weight(name, w):  # a [out, in] linear weight, stored [in, out]
        return g.const(name, np.ascontiguousarray(w.T))

    def rms_norm(x, w):
        return g.op("RMSNormalization", [x, w], axis=-1, epsilon=EPS, stash_type=1)

    def rope(x):
        x1 = g.op("Slice", [x, "rope_start", "rope_half", "rope_axis", "rope_step"])
        x2 = g.op("Slice", [x, "rope_half", "rope_end", "rope_axis", "rope_step"])
        rot = g.op("Concat", [g.op("Neg", [x2]), x1], axis=-1)
        return g.op("Add", [g.op("Mul", [x, "rope_cos"]), g.op("Mul", [rot, "rope_sin"])])

    def heads(x, w):
        y = g.op("Reshape", [g.op("MatMul", [x, w]), "heads_shape"], allowzero=1)
        return g.op("Transpose", [y], perm=[0, 2, 1, 3])

    def repeat_kv(x):
        e = g.op("Expand", [g.op("Unsqueeze", [x, "repeat_kv_axis"]), "repeat_kv_expand"])
        return g.op("Reshape", [e, "repeat_kv_shape"], allowzero=1)

    h = g.op("Gather", [g.const("embed_tokens.weight", p["embed"]), "input_ids"], axis=0)
    for i in range(LAYERS):
        pre = f"layers.{i}."
        x = rms_norm(h, g.const(pre + "input_layernorm.weight", p[f"l{i}.input_norm"]))
        q = rope(heads(x, weight(pre + "q_proj", p[f"l{i}.q"])))
        k = rope(heads(x, weight(pre + "k_proj", p[f"l{i}.k"])))
        v = heads(x, weight(pre + "v_proj", p[f"l{i}.v"]))
        kt = g.op("Transpose", [repeat_kv(k)], perm=[0, 1, 3, 2])
        scores = g.op("Mul", [g.op("MatMul", [q, kt]), "attn_scale"])
        probs = g.op("Softmax", [g.op("Add", [scores, "causal_mask"])], axis=-1)
        ctx = g.op("MatMul", [probs, repeat_kv(v)])
        ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, "merge_shape"], allowzero=1)
        h = g.op("Add", [h, g.op("MatMul", [ctx, weight(pre + "o_proj", p[f"l{i}.o"])])])
        x = rms_norm(h, g.const(pre + "post_attention_layernorm.weight",
                                p[f"l{i}.post_norm"]))
        gate = g.op("MatMul", [x, weight(pre + "gate_proj", p[f"l{i}.gate"])])
        silu = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
        up = g.op("MatMul", [x, weight(pre + "up_proj", p[f"l{i}.up"])])
        mlp = g.op("MatMul", [g.op("Mul", [silu, up]),
                              weight(pre + "down_proj", p[f"l{i}.down"])])
        h = g.op("Add", [h, mlp])
    # The final norm written out, as exporters without RMSNormalization do.
    ms = g.op("ReduceMean", [g.op("Pow", [h, "pow_two"]), "norm_axes"], keepdims=1)
    rms = g.op("Sqrt", [g.op("Add", [ms, "norm_eps"])])
    normed = g.op("Mul", [g.const("norm.weight", p["final_norm"]), g.op("Div", [h, rms])])
    g.op("MatMul", [normed, weight("lm_head", p["lm_head"])])
    g.nodes[-1].output[0] = "logits"

    graph = helper.make_graph(
        g.nodes, "tiny_llama",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, SEQ])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, SEQ, VOCAB])],
        g.inits)
    names = [t.name for t in g.inits] + [o for n in g.nodes for o in n.output]
    assert len(names) == len(set(names)), "a value is defined twice"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)],
                              producer_name="mnemo examples/tiny-onnx/make_model.py")
    model.ir_version = 10
    return model


README = """\
# tiny-onnx: the demo's ONNX model

`model.onnx` is a small Llama-style decoder with random weights, written by
`make_model.py` (numpy with a fixed seed, `onnx.helper`) in the form
torch.onnx exports such a model at opset 23, so that mnemoc's raising
patterns recover the mnemo ops from it. `scripts/demo.sh` compiles it for
the host, runs it on `input_ids.npy` and compares the logits with
`logits.npy`.

| | |
|---|---|
| vocabulary, hidden size, layers | {vocab}, {hidden}, {layers} |
| attention | {heads} query heads, {kv_heads} KV heads (GQA, Hugging Face `repeat_kv`), head dim {head_dim}, causal |
| RoPE | rotate-half, theta {theta:g}, constant cos/sin tables [1, 1, {seq}, {head_dim}] |
| MLP | SwiGLU, intermediate size {mlp} |
| norms | RMSNorm, eps {eps:g}: `RMSNormalization` (opset 23) in the layers, the final norm written out as Pow/ReduceMean/Add/Sqrt/Div/Mul |
| input | `input_ids` int64 [1, {seq}] (static shapes) |
| output | `logits` float32 [1, {seq}, {vocab}] |
| opset / IR version | 23 / 10, weights inside the file ({size_kib} KiB) |

`logits.npy` is not computed from the graph: `make_model.py` holds a
separate float64 numpy implementation of the same decoder (`reference`)
and evaluates it on the prompt in `input_ids.npy`:

    {prompt}

The most likely next tokens after it (id, logit): {top}.

Regenerate (deterministic; the outputs are committed):

```sh
/usr/bin/python3 examples/tiny-onnx/make_model.py
```

Compile and run by hand:

```sh
build/bin/mnemoc examples/tiny-onnx/model.onnx --report -o tiny.mnemo
build/bin/mnemo-run tiny.mnemo --input input_ids=examples/tiny-onnx/input_ids.npy \\
  --output-dir out --repeat 20
```
"""


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    p = weights()
    ids = prompt()
    logits, probs = reference(p, ids[0])
    model = build(p)
    model_path = os.path.join(out_dir, "model.onnx")
    with open(model_path, "wb") as f:
        f.write(model.SerializeToString())
    np.save(os.path.join(out_dir, "input_ids.npy"), ids)
    np.save(os.path.join(out_dir, "logits.npy"), logits[None].astype(np.float32))
    last = logits[-1]
    top = np.argsort(-last)[:5]
    size_kib = os.path.getsize(model_path) // 1024
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write(README.format(
            vocab=VOCAB, hidden=HIDDEN, layers=LAYERS, heads=HEADS,
            kv_heads=KV_HEADS, head_dim=HEAD_DIM, theta=THETA, seq=SEQ, mlp=MLP,
            eps=EPS, size_kib=size_kib, prompt=ids[0].tolist(),
            top=", ".join(f"{t} ({last[t]:.3f})" for t in top)))
    peak = [float(pr.max(axis=-1)[:, 1:].mean()) for pr in probs]
    print(f"wrote {model_path} ({size_kib} KiB, {len(model.graph.node)} nodes)")
    print(f"prompt {ids[0].tolist()}")
    print("mean largest attention probability per layer (rows 1..S-1): "
          + ", ".join(f"{x:.2f}" for x in peak))
    print("top next tokens: " + ", ".join(f"{t} ({last[t]:.3f})" for t in top))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)

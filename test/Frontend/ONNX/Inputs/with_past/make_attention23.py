"""A one-layer decoder whose attention is an ONNX Attention-23 node taking
the graph's past key/values (past_key / past_value inputs, present_key /
present_value outputs), and its greedy references by recomputation, in
numpy.

    make_attention23.py OUT_DIR

The graph: ids -> embedding [V, E] -> q, k, v projections -> heads
(4 query heads, 2 KV heads of 8) -> Attention(q, k, v, mask, past_key,
past_value) with the boolean mask causal at positions P + i and 0 where
attention_mask is 0 -> output projection -> logits [B, S, V]. Inputs
input_ids, attention_mask, position_ids (unused by this model, as in
models without rope), past_key_values.0.key / .value; outputs logits,
present.0.key / .value.

Writes OUT_DIR/model.onnx and, as the checkpoint references do,
input_ids.npy [2, 12], greedy_tokens.npy / greedy_logits.npy /
greedy_margin.npy (8 steps, each one plain forward over the prompt and the
tokens so far) and ragged/ (row 1 cut to 7 tokens).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

V, E, H, HKV, D = 50, 32, 4, 2, 8
STEPS = 8


def weights():
    r = np.random.default_rng(2023)
    w = lambda *s: (r.standard_normal(s) * 0.3).astype(np.float32)
    return dict(embed=w(V, E), wq=w(E, H * D), wk=w(E, HKV * D),
                wv=w(E, HKV * D), wo=w(H * D, E), head=w(E, V))


def forward(p, ids):
    """Logits [B, S, V] of whole prompts (no cache): causal attention."""
    b, s = ids.shape
    x = p["embed"][ids]
    q = (x @ p["wq"]).reshape(b, s, H, D).transpose(0, 2, 1, 3)
    k = (x @ p["wk"]).reshape(b, s, HKV, D).transpose(0, 2, 1, 3)
    v = (x @ p["wv"]).reshape(b, s, HKV, D).transpose(0, 2, 1, 3)
    k = np.repeat(k, H // HKV, axis=1)
    v = np.repeat(v, H // HKV, axis=1)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D)
    scores = np.where(np.tril(np.ones((s, s), bool)), scores, -np.inf)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    o = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, H * D)
    return (o @ p["wo"]) @ p["head"]


def greedy(p, ids):
    seq, logits = ids, []
    for _ in range(STEPS):
        step = forward(p, seq)[:, -1].astype(np.float32)
        logits.append(step)
        seq = np.concatenate([seq, step.argmax(-1)[:, None]], axis=1)
    logits = np.stack(logits, axis=1)
    top2 = np.sort(logits, axis=-1)[..., -2:]
    return (seq[:, ids.shape[1]:].astype(np.int64), logits,
            (top2[..., 1] - top2[..., 0]).astype(np.float32))


def model(p, path):
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    inits = [numpy_helper.from_array(v, n) for n, v in p.items()]
    const = lambda n, v: numpy_helper.from_array(np.array(v, np.int64), n)
    inits += [const("one", 1), const("two", 2), const("zero", 0),
              const("q_shape", [0, 0, H, D]), const("kv_shape", [0, 0, HKV, D]),
              const("o_shape", [0, 0, H * D]), const("ax01", [0, 1]),
              const("ax1", [1]), const("ax0", [0])]
    n = helper.make_node
    nodes = [
        n("Gather", ["embed", "input_ids"], ["x"]),
        n("MatMul", ["x", "wq"], ["q2"]), n("MatMul", ["x", "wk"], ["k2"]),
        n("MatMul", ["x", "wv"], ["v2"]),
        n("Reshape", ["q2", "q_shape"], ["q3"]),
        n("Reshape", ["k2", "kv_shape"], ["k3"]),
        n("Reshape", ["v2", "kv_shape"], ["v3"]),
        n("Transpose", ["q3"], ["q"], perm=[0, 2, 1, 3]),
        n("Transpose", ["k3"], ["k"], perm=[0, 2, 1, 3]),
        n("Transpose", ["v3"], ["v"], perm=[0, 2, 1, 3]),
        # The mask: key j seen by new token i when j <= P + i and
        # attention_mask[b, j] is 1.
        n("Shape", ["past_key_values.0.key"], ["past_len"], start=2, end=3),
        n("Shape", ["input_ids"], ["seq_len"], start=1, end=2),
        n("Add", ["past_len", "seq_len"], ["total_len"]),
        n("Squeeze", ["past_len", "ax0"], ["p0"]),
        n("Squeeze", ["total_len", "ax0"], ["t0"]),
        n("Range", ["p0", "t0", "one"], ["qpos"]),
        n("Range", ["zero", "t0", "one"], ["kpos"]),
        n("Unsqueeze", ["qpos", "ax1"], ["qcol"]),
        n("LessOrEqual", ["kpos", "qcol"], ["causal"]),
        n("Cast", ["attention_mask"], ["keep"], to=TensorProto.BOOL),
        n("Unsqueeze", ["keep", "ax01"], ["keep4"]),  # [1, 1, B, T]
        n("Transpose", ["keep4"], ["keep_b"], perm=[2, 0, 1, 3]),
        n("And", ["causal", "keep_b"], ["mask"]),
        n("Attention", ["q", "k", "v", "mask", "past_key_values.0.key",
                        "past_key_values.0.value"],
          ["y", "present.0.key", "present.0.value"], name="attention"),
        n("Transpose", ["y"], ["y2"], perm=[0, 2, 1, 3]),
        n("Reshape", ["y2", "o_shape"], ["y3"]),
        n("MatMul", ["y3", "wo"], ["h"]),
        n("MatMul", ["h", "head"], ["logits"]),
    ]
    inputs = [helper.make_tensor_value_info("input_ids", i64, ["B", "S"]),
              helper.make_tensor_value_info("attention_mask", i64, ["B", "T"]),
              helper.make_tensor_value_info("position_ids", i64, ["B", "S"])]
    inputs += [helper.make_tensor_value_info(f"past_key_values.0.{kv}", f,
                                             ["B", HKV, "P", D])
               for kv in ("key", "value")]
    outputs = [helper.make_tensor_value_info("logits", f, ["B", "S", V])]
    outputs += [helper.make_tensor_value_info(f"present.0.{kv}", f,
                                              ["B", HKV, "T", D])
                for kv in ("key", "value")]
    g = helper.make_graph(nodes, "decoder", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 10
    with open(path, "wb") as out:
        out.write(m.SerializeToString())


def main(out):
    os.makedirs(os.path.join(out, "ragged"), exist_ok=True)
    p = weights()
    model(p, os.path.join(out, "model.onnx"))
    ids = np.random.default_rng(7).integers(0, V, (2, 12)).astype(np.int64)
    np.save(os.path.join(out, "input_ids.npy"), ids)
    for d, prompt in ((out, ids), (os.path.join(out, "ragged"), ids[1:, :7])):
        tokens, logits, margin = greedy(p, prompt)
        np.save(os.path.join(d, "input_ids.npy"), prompt)
        np.save(os.path.join(d, "greedy_tokens.npy"), tokens)
        np.save(os.path.join(d, "greedy_logits.npy"), logits)
        np.save(os.path.join(d, "greedy_margin.npy"), margin)


if __name__ == "__main__":
    main(sys.argv[1])

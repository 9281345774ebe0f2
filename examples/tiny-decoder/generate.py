#!/usr/bin/env python3
"""Writes the bundled tiny decoder: model.mlir and its numpy reference.

A Llama-style decoder (embedding, RMSNorm, GQA attention with rotate-half
RoPE, SwiGLU MLP, residuals, final norm, LM head) with random weights from a
fixed seed, written in the mnemo dialect as `@forward(input_ids) -> logits`
for any sequence length. The same model is evaluated here in float64 numpy
on the default prompt and saved as reference_logits.npy.

    /usr/bin/python3 examples/tiny-decoder/generate.py
"""

import os

import numpy as np

VOCAB, HIDDEN, LAYERS = 64, 32, 2
HEADS, KV_HEADS, HEAD_DIM, FFN = 4, 2, 8, 64
THETA, EPS = 10000.0, 1e-5
PROMPT = [1, 17, 42, 5, 33, 8, 60]
HERE = os.path.dirname(os.path.abspath(__file__))


def weights():
    r = np.random.default_rng(2026)
    w = lambda *s: (r.standard_normal(s) * 0.2).astype(np.float32)
    norm = lambda: (1.0 + 0.1 * r.standard_normal(HIDDEN)).astype(np.float32)
    p = {"embed": w(VOCAB, HIDDEN)}
    for i in range(LAYERS):
        p[f"l{i}.attn_norm"] = norm()
        p[f"l{i}.wq"] = w(HEADS * HEAD_DIM, HIDDEN)
        p[f"l{i}.wk"] = w(KV_HEADS * HEAD_DIM, HIDDEN)
        p[f"l{i}.wv"] = w(KV_HEADS * HEAD_DIM, HIDDEN)
        p[f"l{i}.wo"] = w(HIDDEN, HEADS * HEAD_DIM)
        p[f"l{i}.mlp_norm"] = norm()
        p[f"l{i}.wg"] = w(FFN, HIDDEN)
        p[f"l{i}.wu"] = w(FFN, HIDDEN)
        p[f"l{i}.wd"] = w(HIDDEN, FFN)
    p["final_norm"] = norm()
    p["lm_head"] = w(VOCAB, HIDDEN)
    return p


# --- numpy reference (float64) -------------------------------------------

def rms_norm(x, w):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * w


def rope(x, pos):
    inv = 1.0 / THETA ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
    ang = pos[:, None] * inv[None, :]
    cos, sin = np.cos(ang), np.sin(ang)
    x1, x2 = x[..., : HEAD_DIM // 2], x[..., HEAD_DIM // 2:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


def forward(p, ids):
    p = {k: v.astype(np.float64) for k, v in p.items()}
    s = len(ids)
    pos = np.arange(s, dtype=np.float64)
    h = p["embed"][ids]
    for i in range(LAYERS):
        x = rms_norm(h, p[f"l{i}.attn_norm"])
        q = (x @ p[f"l{i}.wq"].T).reshape(s, HEADS, HEAD_DIM).transpose(1, 0, 2)
        k = (x @ p[f"l{i}.wk"].T).reshape(s, KV_HEADS, HEAD_DIM).transpose(1, 0, 2)
        v = (x @ p[f"l{i}.wv"].T).reshape(s, KV_HEADS, HEAD_DIM).transpose(1, 0, 2)
        q, k = rope(q, pos), rope(k, pos)
        k = np.repeat(k, HEADS // KV_HEADS, 0)
        v = np.repeat(v, HEADS // KV_HEADS, 0)
        sc = q @ k.transpose(0, 2, 1) / np.sqrt(HEAD_DIM)
        sc = np.where(np.triu(np.ones((s, s), bool), 1), -np.inf, sc)
        pr = np.exp(sc - sc.max(-1, keepdims=True))
        pr /= pr.sum(-1, keepdims=True)
        a = (pr @ v).transpose(1, 0, 2).reshape(s, HEADS * HEAD_DIM)
        h = h + a @ p[f"l{i}.wo"].T
        x = rms_norm(h, p[f"l{i}.mlp_norm"])
        g, u = x @ p[f"l{i}.wg"].T, x @ p[f"l{i}.wu"].T
        h = h + (g / (1 + np.exp(-g)) * u) @ p[f"l{i}.wd"].T
    return rms_norm(h, p["final_norm"]) @ p["lm_head"].T


# --- mnemo dialect --------------------------------------------------------

def tensor(shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


def const(name, array):
    hexdata = np.ascontiguousarray(array).tobytes().hex().upper()
    return f'  %{name} = arith.constant dense<"0x{hexdata}"> : {tensor(array.shape)}'


def layer(i):
    H, Q, KV = HIDDEN, HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    t = lambda *s: "tensor<" + "x".join(str(d) for d in s) + "xf32>"
    x, h = f"%x{i}", f"%h{i}"
    heads = lambda name, n, width: f"""
  %{name}{i}_flat = mnemo.linear {x}, %l{i}_w{name} layout(out_in) : {t(1, '?', H)}, {t(width, H)} -> {t(1, '?', width)}
  %{name}{i}_split = tensor.expand_shape %{name}{i}_flat [[0], [1], [2, 3]] output_shape [1, %seq, {n}, {HEAD_DIM}] : {t(1, '?', width)} into {t(1, '?', n, HEAD_DIM)}
  %{name}{i}_init = tensor.empty(%seq) : {t(1, n, '?', HEAD_DIM)}
  %{name}{i}_bhsd = linalg.transpose ins(%{name}{i}_split : {t(1, '?', n, HEAD_DIM)}) outs(%{name}{i}_init : {t(1, n, '?', HEAD_DIM)}) permutation = [0, 2, 1, 3]"""
    rope = lambda name, n: f"""
  %{name}{i}_rot = mnemo.rope %{name}{i}_bhsd, %positions theta({THETA}) : {t(1, n, '?', HEAD_DIM)}, tensor<1x?xi64> -> {t(1, n, '?', HEAD_DIM)}"""
    return f"""
  // ---- layer {i} ----
  {x} = mnemo.rms_norm {h}, %l{i}_attn_norm eps({EPS:e}) : {t(1, '?', H)}, {t(H)} -> {t(1, '?', H)}""" + \
        heads("q", HEADS, Q) + heads("k", KV_HEADS, KV) + heads("v", KV_HEADS, KV) + \
        rope("q", HEADS) + rope("k", KV_HEADS) + f"""
  %a{i} = mnemo.attention %q{i}_rot, %k{i}_rot, %v{i}_bhsd causal : {t(1, HEADS, '?', HEAD_DIM)}, {t(1, KV_HEADS, '?', HEAD_DIM)}, {t(1, KV_HEADS, '?', HEAD_DIM)} -> {t(1, HEADS, '?', HEAD_DIM)}
  %a{i}_init = tensor.empty(%seq) : {t(1, '?', HEADS, HEAD_DIM)}
  %a{i}_bshd = linalg.transpose ins(%a{i} : {t(1, HEADS, '?', HEAD_DIM)}) outs(%a{i}_init : {t(1, '?', HEADS, HEAD_DIM)}) permutation = [0, 2, 1, 3]
  %a{i}_flat = tensor.collapse_shape %a{i}_bshd [[0], [1], [2, 3]] : {t(1, '?', HEADS, HEAD_DIM)} into {t(1, '?', Q)}
  %o{i} = mnemo.linear %a{i}_flat, %l{i}_wo layout(out_in) : {t(1, '?', Q)}, {t(H, Q)} -> {t(1, '?', H)}
  %r{i}_init = tensor.empty(%seq) : {t(1, '?', H)}
  %r{i} = linalg.add ins({h}, %o{i} : {t(1, '?', H)}, {t(1, '?', H)}) outs(%r{i}_init : {t(1, '?', H)}) -> {t(1, '?', H)}
  %m{i}_in = mnemo.rms_norm %r{i}, %l{i}_mlp_norm eps({EPS:e}) : {t(1, '?', H)}, {t(H)} -> {t(1, '?', H)}
  %g{i} = mnemo.linear %m{i}_in, %l{i}_wg layout(out_in) : {t(1, '?', H)}, {t(FFN, H)} -> {t(1, '?', FFN)}
  %u{i} = mnemo.linear %m{i}_in, %l{i}_wu layout(out_in) : {t(1, '?', H)}, {t(FFN, H)} -> {t(1, '?', FFN)}
  %s{i} = mnemo.swiglu %g{i}, %u{i} : {t(1, '?', FFN)}
  %d{i} = mnemo.linear %s{i}, %l{i}_wd layout(out_in) : {t(1, '?', FFN)}, {t(H, FFN)} -> {t(1, '?', H)}
  %n{i}_init = tensor.empty(%seq) : {t(1, '?', H)}
  %h{i + 1} = linalg.add ins(%r{i}, %d{i} : {t(1, '?', H)}, {t(1, '?', H)}) outs(%n{i}_init : {t(1, '?', H)}) -> {t(1, '?', H)}"""


def model_mlir(p):
    lines = [
        "// Generated by examples/tiny-decoder/generate.py; do not edit.",
        f"// A {LAYERS}-layer Llama-style decoder: vocab {VOCAB}, hidden {HIDDEN}, "
        f"{HEADS}/{KV_HEADS} heads of {HEAD_DIM}, SwiGLU {FFN}, random weights.",
        "func.func @forward(%input_ids: tensor<1x?xi64> {mnemo.name = \"input_ids\"})",
        "    -> (tensor<1x?x64xf32> {mnemo.name = \"logits\"}) {",
        "  %c1 = arith.constant 1 : index",
        "  %seq = tensor.dim %input_ids, %c1 : tensor<1x?xi64>",
    ]
    for name, array in p.items():
        lines.append(const(name.replace(".", "_"), array))
    lines.append("""  %pos_init = tensor.empty(%seq) : tensor<1x?xi64>
  %positions = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%pos_init : tensor<1x?xi64>) {
  ^bb0(%unused: i64):
    %i = linalg.index 1 : index
    %p = arith.index_cast %i : index to i64
    linalg.yield %p : i64
  } -> tensor<1x?xi64>
  %h0 = mnemo.embedding %embed[%input_ids] : tensor<64x32xf32>, tensor<1x?xi64> -> tensor<1x?x32xf32>""")
    for i in range(LAYERS):
        lines.append(layer(i))
    lines.append(f"""
  %final = mnemo.rms_norm %h{LAYERS}, %final_norm eps({EPS:e}) : tensor<1x?x32xf32>, tensor<32xf32> -> tensor<1x?x32xf32>
  %logits = mnemo.linear %final, %lm_head layout(out_in) : tensor<1x?x32xf32>, tensor<64x32xf32> -> tensor<1x?x64xf32>
  return %logits : tensor<1x?x64xf32>
}}""")
    return "\n".join(lines) + "\n"


def main():
    p = weights()
    with open(os.path.join(HERE, "model.mlir"), "w") as f:
        f.write(model_mlir(p))
    ids = np.array(PROMPT, dtype=np.int64)
    np.save(os.path.join(HERE, "prompt_ids.npy"), ids[None, :])
    np.save(os.path.join(HERE, "reference_logits.npy"),
            forward(p, ids)[None].astype(np.float32))


if __name__ == "__main__":
    main()

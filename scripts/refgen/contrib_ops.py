"""Small ONNX models built from ONNX Runtime's contrib ops, with ONNX Runtime outputs.

Makes: one folder per case, each with model.onnx (opset 23 ai.onnx + com.microsoft 1,
written by hand with onnx.helper), input_<i>.npy (graph input order), output_<i>.npy
(ONNX Runtime CPUExecutionProvider results, graph output order) and meta.json (input and
output names, dtypes and shapes, what the case tests, and the largest difference between
ONNX Runtime and an independent float64 numpy model of the op, where there is one).
Ops: MultiHeadAttention, GroupQueryAttention, RotaryEmbedding (com.microsoft),
SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization, FusedMatMul, and
decoder blocks that chain them the way ONNX Runtime's transformer optimizer and model
builder emit them. Shapes are deliberately not tile multiples.
A case that ONNX Runtime rejects is recorded in the top-level meta.json and dropped.

Runs on a machine with onnx, onnxruntime and numpy (the device machine that also has
torch/transformers):  python3 scripts/refgen/contrib_ops.py
Writes $OUT/contrib_ops.tar.gz (folder `contrib/`).
"""
import json
import os
import shutil
import tarfile
import tempfile
import traceback

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.environ.get("OUT", os.path.join(tempfile.gettempdir(), "out"))
WORK = os.path.join(os.environ.get("REFGEN_TMP", os.path.join(tempfile.gettempdir(), "refgen")), "contrib")
MS = "com.microsoft"
F32, F16, I32, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32, TensorProto.INT64
NP2ONNX = {np.dtype(np.float32): F32, np.dtype(np.float16): F16, np.dtype(np.int32): I32,
           np.dtype(np.int64): I64}

rng = np.random.default_rng(2024)


def randn(*shape, scale=1.0, dtype=np.float32):
    return (scale * rng.standard_normal(shape)).astype(dtype)


# ---------------------------------------------------------------- numpy models (float64)

def rope_tables(max_pos, rot_dim, theta=10000.0, dtype=np.float32):
    inv = 1.0 / theta ** (np.arange(0, rot_dim, 2, dtype=np.float64) / rot_dim)
    ang = np.outer(np.arange(max_pos, dtype=np.float64), inv)
    return np.cos(ang).astype(dtype), np.sin(ang).astype(dtype)


def rope_ref(x, pos, cos, sin, interleaved, rot_dim=None):
    """x [B,S,N,D]; pos [B,S] int; cos/sin [max_pos, rot/2]."""
    x = x.astype(np.float64)
    D = x.shape[-1]
    r = rot_dim or 2 * cos.shape[1]
    c = cos.astype(np.float64)[pos][:, :, None, :]  # [B,S,1,r/2]
    s = sin.astype(np.float64)[pos][:, :, None, :]
    out = x.copy()
    if interleaved:
        x1, x2 = x[..., 0:r:2], x[..., 1:r:2]
        out[..., 0:r:2] = x1 * c - x2 * s
        out[..., 1:r:2] = x2 * c + x1 * s
    else:
        h = r // 2
        x1, x2 = x[..., :h], x[..., h:r]
        out[..., :h] = x1 * c - x2 * s
        out[..., h:r] = x2 * c + x1 * s
    assert D >= r
    return out


def softmax(x):
    x = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def attention_ref(q, k, v, scale, allowed=None, bias=None, softcap=0.0):
    """q [B,N,S,D]; k,v [B,Nkv,T,D*]; allowed bool [B|1, 1|N, S, T]."""
    g = q.shape[1] // k.shape[1]
    k = np.repeat(k, g, axis=1)
    v = np.repeat(v, g, axis=1)
    s = np.einsum("bnsd,bntd->bnst", q, k) * scale
    if softcap:
        s = softcap * np.tanh(s / softcap)
    if bias is not None:
        s = s + bias
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)
    return np.einsum("bnst,bntd->bnsd", softmax(s), v)


def causal_allowed(S, P, window=-1, inclusive=True):
    i = np.arange(S)[:, None] + P
    j = np.arange(S + P)[None, :]
    ok = j <= i
    if window >= 0:
        ok &= (j >= i - window) if inclusive else (j > i - window)
    return ok[None, None]


def heads(x, n):  # [B,S,n*D] -> [B,n,S,D]
    B, S, H = x.shape
    return x.reshape(B, S, n, H // n).transpose(0, 2, 1, 3)


def merge(x):  # [B,N,S,D] -> [B,S,N*D]
    B, N, S, D = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, S, N * D)


def gqa_ref(q, k, v, N, Nkv, past_k=None, past_v=None, rotary=None, window=-1, softcap=0.0,
            scale=None, inclusive=True):
    """GroupQueryAttention with equal sequence lengths per batch entry; returns out, present_k, present_v."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    B, S, _ = q.shape
    D = q.shape[2] // N
    P = 0 if past_k is None else past_k.shape[2]
    qh, kh, vh = heads(q, N), heads(k, Nkv), heads(v, Nkv)
    if rotary is not None:
        cos, sin, inter = rotary
        pos = np.tile(np.arange(P, P + S), (B, 1))
        qh = rope_ref(qh.transpose(0, 2, 1, 3), pos, cos, sin, inter).transpose(0, 2, 1, 3)
        kh = rope_ref(kh.transpose(0, 2, 1, 3), pos, cos, sin, inter).transpose(0, 2, 1, 3)
    if P:
        kh = np.concatenate([past_k.astype(np.float64), kh], axis=2)
        vh = np.concatenate([past_v.astype(np.float64), vh], axis=2)
    sc = scale if scale else 1.0 / np.sqrt(D)
    o = attention_ref(qh, kh, vh, sc, causal_allowed(S, P, window, inclusive), softcap=softcap)
    return merge(o), kh, vh


def rms_ref(x, g, eps):
    x = x.astype(np.float64)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * g.astype(np.float64)


# ---------------------------------------------------------------- model building

def vi(name, arr_or_type, shape=None):
    if isinstance(arr_or_type, np.ndarray):
        return helper.make_tensor_value_info(name, NP2ONNX[arr_or_type.dtype], list(arr_or_type.shape))
    return helper.make_tensor_value_info(name, arr_or_type, shape)


def model(nodes, feeds, outputs, inits=None, name="case"):
    """feeds: dict name -> array (graph inputs, in order); outputs: list of (name, elem_type)."""
    g = helper.make_graph(nodes, name, [vi(k, v) for k, v in feeds.items()],
                          [vi(n, t) for n, t in outputs],
                          [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23), helper.make_opsetid(MS, 1)],
                          producer_name="mnemo-refgen")
    m.ir_version = 10
    return m


def node(op, ins, outs, domain=MS, **attrs):
    while ins and ins[-1] == "":
        ins = ins[:-1]
    return helper.make_node(op, ins, outs, domain=domain, **attrs)


def gqa_node(ins, outs, **attrs):
    """ins: dict with keys among query key value past_key past_value seqlens_k
    total_sequence_length cos_cache sin_cache (ORT's input order)."""
    order = ["query", "key", "value", "past_key", "past_value", "seqlens_k",
             "total_sequence_length", "cos_cache", "sin_cache"]
    return node("GroupQueryAttention", [ins.get(k, "") for k in order], outs, **attrs)


def mha_node(ins, outs, **attrs):
    order = ["query", "key", "value", "bias", "key_padding_mask", "attention_bias", "past_key", "past_value"]
    return node("MultiHeadAttention", [ins.get(k, "") for k in order], outs, **attrs)


def rope_node(x, pos, cos, sin, out, **attrs):
    return node("RotaryEmbedding", [x, pos, cos, sin], [out], **attrs)


def seq_inputs(B, total, past=0):
    return (np.full([B], total - 1, np.int32), np.array([total], np.int32))


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# ---------------------------------------------------------------- MultiHeadAttention

def mha_case(B, S, L, N, D, Dv=None, bias=False, kpm=False, causal=False, scale=None, what=""):
    Dv = Dv or D
    q, k, v = randn(B, S, N * D), randn(B, L, N * D), randn(B, L, N * Dv)
    feeds = {"query": q, "key": k, "value": v}
    ins = {"query": "query", "key": "key", "value": "value"}
    allowed, addb = None, None
    if kpm:
        m = np.ones((B, L), np.int32)
        m[0, L - 5:] = 0
        if B > 1:
            m[1, :3] = 0
        feeds["key_padding_mask"] = m
        ins["key_padding_mask"] = "key_padding_mask"
        allowed = (m[:, None, None, :] != 0)
    if bias:
        ab = randn(B, N, S, L, scale=0.5)
        ab[:, :, :, 1::4] = -10000.0
        feeds["attention_bias"] = ab
        ins["attention_bias"] = "attention_bias"
        addb = ab.astype(np.float64)
    attrs = {"num_heads": N}
    if causal:
        attrs["unidirectional"] = 1
        c = causal_allowed(S, L - S)
        allowed = c if allowed is None else (allowed & c)
    if scale:
        attrs["scale"] = scale
    sc = scale or 1.0 / np.sqrt(D)

    def ref(f):
        o = attention_ref(heads(f["query"].astype(np.float64), N), heads(f["key"].astype(np.float64), N),
                          heads(f["value"].astype(np.float64), N), sc, allowed, addb)
        return [merge(o)]
    m = model([mha_node(ins, ["output"], **attrs)], feeds, [("output", F32)])
    return m, feeds, ref, what


@case
def mha_self():
    return mha_case(2, 13, 13, 4, 16, what="MultiHeadAttention self-attention, separate Q/K/V [B,S,N*D], no mask")


@case
def mha_cross_dv():
    return mha_case(2, 13, 29, 3, 24, Dv=16, what="cross-attention (S=13, L=29), value head size 16 != 24")


@case
def mha_attention_bias():
    return mha_case(2, 13, 29, 4, 16, bias=True,
                    what="additive attention_bias [B,N,S,L] (random, every 4th key column -10000)")


@case
def mha_key_padding_mask():
    return mha_case(2, 13, 29, 4, 24, kpm=True,
                    what="key_padding_mask int32 [B,L] (0 = padding; masked keys get mask_filter_value -10000)")


@case
def mha_unidirectional_scale():
    return mha_case(1, 29, 29, 2, 24, causal=True, scale=0.125,
                    what="unidirectional=1 (causal) with an explicit scale 0.125")


# ---------------------------------------------------------------- GroupQueryAttention

def gqa_case(B, S, N, Nkv, D, past=0, rotary=False, interleaved=False, window=-1, softcap=0.0,
             packed=False, dtype=np.float32, zero_past=False, what=""):
    T = past + S
    et = F16 if dtype == np.float16 else F32
    q, k, v = randn(B, S, N * D, dtype=dtype), randn(B, S, Nkv * D, dtype=dtype), randn(B, S, Nkv * D, dtype=dtype)
    feeds, ins = {}, {}
    if packed:
        feeds["query"] = np.concatenate([q, k, v], axis=-1)
        ins["query"] = "query"
    else:
        feeds.update(query=q, key=k, value=v)
        ins.update(query="query", key="key", value="value")
    pk = pv = None
    if past or zero_past:
        pk, pv = randn(B, Nkv, past, D, dtype=dtype), randn(B, Nkv, past, D, dtype=dtype)
        feeds.update(past_key=pk, past_value=pv)
        ins.update(past_key="past_key", past_value="past_value")
    sk, tot = seq_inputs(B, T)
    feeds.update(seqlens_k=sk, total_sequence_length=tot)
    ins.update(seqlens_k="seqlens_k", total_sequence_length="total_sequence_length")
    attrs = {"num_heads": N, "kv_num_heads": Nkv}
    rot = None
    if rotary:
        cos, sin = rope_tables(T + 7, D, dtype=dtype)
        feeds.update(cos_cache=cos, sin_cache=sin)
        ins.update(cos_cache="cos_cache", sin_cache="sin_cache")
        attrs.update(do_rotary=1, rotary_interleaved=int(interleaved))
        rot = (cos, sin, interleaved)
    else:
        attrs["do_rotary"] = 0
    if window >= 0:
        attrs["local_window_size"] = window
    if softcap:
        attrs["softcap"] = softcap

    def ref(f, inclusive=True):
        if packed:
            qq = f["query"]
            q_, k_, v_ = np.split(qq, [N * D, N * D + Nkv * D], axis=-1)
        else:
            q_, k_, v_ = f["query"], f["key"], f["value"]
        o, kk, vv = gqa_ref(q_, k_, v_, N, Nkv, f.get("past_key") if past else None,
                            f.get("past_value") if past else None, rot, window, softcap, inclusive=inclusive)
        return [o, kk, vv]
    ref.window_alt = (lambda f: ref(f, inclusive=False)) if window >= 0 else None
    m = model([gqa_node(ins, ["output", "present_key", "present_value"], **attrs)], feeds,
              [("output", et), ("present_key", et), ("present_value", et)])
    return m, feeds, ref, what


@case
def gqa_prefill_rotary():
    return gqa_case(2, 13, 4, 2, 16, rotary=True,
                    what="GroupQueryAttention prefill without past_key/past_value, do_rotary=1 (rotate-half), GQA 4:2")


@case
def gqa_prefill_norotary():
    return gqa_case(2, 29, 6, 2, 24, what="prefill, do_rotary=0, GQA 6:2, head size 24")


@case
def gqa_local_window():
    return gqa_case(1, 29, 4, 1, 16, window=7, what="prefill with local_window_size=7 (sliding window), MQA 4:1, do_rotary=0")


@case
def gqa_rotary_interleaved_window():
    return gqa_case(2, 29, 4, 2, 16, rotary=True, interleaved=True, window=5,
                    what="do_rotary=1 with rotary_interleaved=1, local_window_size=5")


@case
def gqa_softcap():
    return gqa_case(2, 13, 4, 2, 16, rotary=True, softcap=2.0, what="softcap=2.0 (tanh capping of the scaled scores)")


@case
def gqa_softcap_rotary_d24():
    return gqa_case(2, 13, 4, 2, 24, rotary=True, softcap=2.0,
                    what="softcap=2.0 with do_rotary=1 and head size 24 (ORT CPU wants a multiple of 16 with do_rotary)")


@case
def gqa_decode_past():
    return gqa_case(2, 1, 4, 2, 16, past=12, rotary=True,
                    what="one-token decode step with past_key/past_value of length 12 (BNSH), present has 13")


@case
def gqa_chunk_past():
    return gqa_case(1, 5, 4, 2, 16, past=13, rotary=True,
                    what="chunked prefill: 5 new tokens after a past of 13 (batch 1)")


@case
def gqa_prefill_zero_past():
    return gqa_case(2, 13, 4, 2, 16, rotary=True, zero_past=True,
                    what="prefill with zero-length past_key/past_value tensors [B,Nkv,0,D]")


@case
def gqa_packed_qkv():
    return gqa_case(2, 13, 4, 2, 16, rotary=True,
                    packed=True, what="packed QKV in `query` [B,S,(N+2*Nkv)*D], key/value omitted, do_rotary=1")


@case
def gqa_fp16():
    return gqa_case(2, 13, 4, 2, 16, rotary=True, dtype=np.float16,
                    what="float16 prefill, do_rotary=1 (reference computed in float64 from the fp16 inputs)")


# ---------------------------------------------------------------- RotaryEmbedding (com.microsoft)

def rope_case(B, S, N, D, interleaved=False, layout="3d", rot_dim=0, offset_pos=False, what=""):
    r = rot_dim or D
    max_pos = 64
    cos, sin = rope_tables(max_pos, r)
    if layout == "3d":
        x = randn(B, S, N * D)
    else:  # ORT's 4-D layout is (batch, num_heads, seq, head_size)
        x = randn(B, N, S, D)
    if offset_pos:
        pos_in = np.array([7], np.int64)
        pos = np.tile(np.arange(7, 7 + S), (B, 1))
    else:
        pos = np.stack([np.arange(S) + 3 * b for b in range(B)]).astype(np.int64)
        pos_in = pos
    feeds = {"input": x, "position_ids": pos_in, "cos_cache": cos, "sin_cache": sin}
    attrs = {"interleaved": int(interleaved)}
    if rot_dim:
        attrs.update(rotary_embedding_dim=rot_dim, num_heads=N)

    def ref(f):
        xx = f["input"]
        x4 = xx.reshape(B, S, N, D) if layout == "3d" else xx.transpose(0, 2, 1, 3)
        o = rope_ref(x4, pos, cos, sin, interleaved, r)
        return [o.reshape(B, S, N * D) if layout == "3d" else o.transpose(0, 2, 1, 3)]
    m = model([rope_node("input", "position_ids", "cos_cache", "sin_cache", "output", **attrs)], feeds,
              [("output", F32)])
    return m, feeds, ref, what


@case
def rope_3d():
    return rope_case(2, 13, 4, 16, what="RotaryEmbedding, input [B,S,N*D], position_ids [B,S] (batch 1 offset by 3), rotate-half")


@case
def rope_3d_interleaved():
    return rope_case(2, 29, 3, 24, interleaved=True, what="input [B,S,N*D], interleaved=1, head size 24")


@case
def rope_4d_bnsh():
    return rope_case(2, 13, 3, 24, layout="4d",
                     what="4-D input in ORT's layout [B,N,S,D] (not [B,S,N,D]), rotate-half")


@case
def rope_4d_bnsh_interleaved():
    return rope_case(1, 29, 2, 16, layout="4d", interleaved=True, what="4-D input [B,N,S,D], interleaved=1")


@case
def rope_partial():
    return rope_case(2, 13, 4, 24, rot_dim=16,
                     what="partial rotary: rotary_embedding_dim=16 of head size 24 (needs num_heads), rotate-half")


@case
def rope_position_offset():
    return rope_case(2, 13, 4, 16, offset_pos=True,
                     what="position_ids of shape [1]: a start offset (7), positions 7..7+S-1 for every batch entry")


# ---------------------------------------------------------------- norms and FusedMatMul

@case
def simplified_layernorm():
    x, g = randn(2, 13, 96), (1 + 0.1 * randn(96)).astype(np.float32)
    eps = 1e-6
    feeds = {"X": x, "scale": g}
    m = model([node("SimplifiedLayerNormalization", ["X", "scale"], ["Y"], domain="",
                    axis=-1, epsilon=eps)], feeds, [("Y", F32)])
    return m, feeds, lambda f: [rms_ref(f["X"], f["scale"], eps)], \
        "SimplifiedLayerNormalization (ai.onnx domain contrib op, as ORT emits it), axis=-1, epsilon=1e-6, [2,13,96]"


@case
def simplified_layernorm_2d():
    x, g = randn(29, 40, scale=3.0), (1 + 0.1 * randn(40)).astype(np.float32)
    eps = 1e-5
    feeds = {"X": x, "scale": g}
    m = model([node("SimplifiedLayerNormalization", ["X", "scale"], ["Y"], domain="",
                    axis=-1, epsilon=eps)], feeds, [("Y", F32)])
    return m, feeds, lambda f: [rms_ref(f["X"], f["scale"], eps)], \
        "SimplifiedLayerNormalization on a 2-D [29,40] input, epsilon=1e-5"


def sskip_case(bias):
    x, s = randn(2, 13, 96), randn(2, 13, 96)
    g = (1 + 0.1 * randn(96)).astype(np.float32)
    feeds = {"input": x, "skip": s, "gamma": g}
    ins = ["input", "skip", "gamma"]
    if bias:
        feeds["bias"] = randn(96, scale=0.1)
        ins.append("bias")
    eps = 1e-5

    def ref(f):
        tot = f["input"].astype(np.float64) + f["skip"] + (f["bias"] if bias else 0)
        return [rms_ref(tot, f["gamma"], eps), tot]
    m = model([node("SkipSimplifiedLayerNormalization", ins, ["output", "", "", "input_skip_bias_sum"],
                    epsilon=eps)], feeds, [("output", F32), ("input_skip_bias_sum", F32)])
    return m, feeds, ref


@case
def skip_simplified_layernorm():
    m, f, r = sskip_case(False)
    return m, f, r, "SkipSimplifiedLayerNormalization(input, skip, gamma), outputs output and input_skip_bias_sum (3)"


@case
def skip_simplified_layernorm_bias():
    m, f, r = sskip_case(True)
    return m, f, r, "SkipSimplifiedLayerNormalization with the optional bias input"


def fused_matmul_case(a_shape, b_shape, alpha, transA, transB, what):
    a, b = randn(*a_shape), randn(*b_shape)
    feeds = {"A": a, "B": b}

    def ref(f):
        A, Bm = f["A"].astype(np.float64), f["B"].astype(np.float64)
        if transA:
            A = np.swapaxes(A, -1, -2)
        if transB:
            Bm = np.swapaxes(Bm, -1, -2)
        return [alpha * np.matmul(A, Bm)]
    m = model([node("FusedMatMul", ["A", "B"], ["Y"], alpha=alpha, transA=transA, transB=transB)],
              feeds, [("Y", F32)])
    return m, feeds, ref, what


@case
def fused_matmul_alpha():
    return fused_matmul_case((2, 13, 24), (24, 29), 0.5, 0, 0, "FusedMatMul alpha=0.5, [2,13,24] x [24,29]")


@case
def fused_matmul_transB():
    return fused_matmul_case((2, 13, 24), (29, 24), 0.125, 0, 1, "FusedMatMul transB=1, alpha=0.125 (Q*K^T style)")


@case
def fused_matmul_transA_transB_batched():
    return fused_matmul_case((3, 24, 13), (3, 29, 24), 1.0, 1, 1,
                             "FusedMatMul transA=1, transB=1, batched [3,24,13] x [3,29,24]")


# ---------------------------------------------------------------- decoder blocks

def w(*s):
    return (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)


def gvec(n):
    return (1 + 0.1 * rng.standard_normal(n)).astype(np.float32)


@case
def block_attention_rope_gqa():
    """SkipSimplifiedLayerNorm -> MatMul q/k/v -> RotaryEmbedding q,k -> GQA -> MatMul o."""
    B, S, C, N, Nkv, D = 2, 13, 96, 4, 2, 24
    eps = 1e-5
    cos, sin = rope_tables(64, D)
    inits = {"ln_g": gvec(C), "wq": w(C, N * D), "wk": w(C, Nkv * D), "wv": w(C, Nkv * D), "wo": w(N * D, C),
             "cos": cos, "sin": sin}
    x, skip = randn(B, S, C), randn(B, S, C)
    pos = np.tile(np.arange(S, dtype=np.int64), (B, 1))
    sk, tot = seq_inputs(B, S)
    feeds = {"hidden": x, "residual": skip, "position_ids": pos, "seqlens_k": sk, "total_sequence_length": tot}
    nodes = [
        node("SkipSimplifiedLayerNormalization", ["hidden", "residual", "ln_g"], ["xn", "", "", "res_out"], epsilon=eps),
        node("MatMul", ["xn", "wq"], ["q"], domain=""),
        node("MatMul", ["xn", "wk"], ["k"], domain=""),
        node("MatMul", ["xn", "wv"], ["v"], domain=""),
        rope_node("q", "position_ids", "cos", "sin", "q_rot", interleaved=0),
        rope_node("k", "position_ids", "cos", "sin", "k_rot", interleaved=0),
        gqa_node({"query": "q_rot", "key": "k_rot", "value": "v", "seqlens_k": "seqlens_k",
                  "total_sequence_length": "total_sequence_length"},
                 ["attn", "present_key", "present_value"], num_heads=N, kv_num_heads=Nkv),
        node("MatMul", ["attn", "wo"], ["attn_out"], domain=""),
    ]

    def ref(f):
        tot_ = f["hidden"].astype(np.float64) + f["residual"]
        xn = rms_ref(tot_, inits["ln_g"], eps)
        q = xn @ inits["wq"]
        k = xn @ inits["wk"]
        v = xn @ inits["wv"]
        qr = rope_ref(q.reshape(B, S, N, D), pos, cos, sin, False).reshape(B, S, N * D)
        kr = rope_ref(k.reshape(B, S, Nkv, D), pos, cos, sin, False).reshape(B, S, Nkv * D)
        o, pk, pv = gqa_ref(qr, kr, v, N, Nkv)
        return [o @ inits["wo"], tot_, pk, pv]
    m = model(nodes, feeds, [("attn_out", F32), ("res_out", F32), ("present_key", F32), ("present_value", F32)], inits,
              "block_attention_rope_gqa")
    return m, feeds, ref, ("attention half of a Llama layer as ORT's optimizer fuses it: SkipSimplifiedLayerNormalization -> "
                           "MatMul q/k/v -> RotaryEmbedding (com.microsoft) on q and k -> GroupQueryAttention (do_rotary=0) -> MatMul")


@case
def block_llama_layer():
    """A whole decoder layer; seqlens_k/total_sequence_length derived from attention_mask like the model builder does."""
    B, S, C, N, Nkv, D, I = 2, 29, 64, 4, 2, 16, 88
    eps = 1e-6
    cos, sin = rope_tables(64, D)
    inits = {"ln1": gvec(C), "ln2": gvec(C), "wq": w(C, N * D), "wk": w(C, Nkv * D), "wv": w(C, Nkv * D),
             "wo": w(N * D, C), "wg": w(C, I), "wu": w(C, I), "wd_t": w(I, C).T.copy(), "cos": cos, "sin": sin,
             "one": np.array(1, np.int64), "start1": np.array([1], np.int64), "end2": np.array([2], np.int64),
             "axis1": np.array([1], np.int64)}
    x, skip = randn(B, S, C), randn(B, S, C)
    mask = np.ones((B, S), np.int64)
    pos = np.tile(np.arange(S, dtype=np.int64), (B, 1))
    feeds = {"hidden": x, "residual": skip, "attention_mask": mask, "position_ids": pos}
    nodes = [
        node("ReduceSum", ["attention_mask", "axis1"], ["mask_sum"], domain="", keepdims=0),
        node("Sub", ["mask_sum", "one"], ["seqlens_m1"], domain=""),
        node("Cast", ["seqlens_m1"], ["seqlens_k"], domain="", to=I32),
        node("Shape", ["attention_mask"], ["mask_shape"], domain=""),
        node("Slice", ["mask_shape", "start1", "end2"], ["total_i64"], domain=""),
        node("Cast", ["total_i64"], ["total_sequence_length"], domain="", to=I32),
        node("SkipSimplifiedLayerNormalization", ["hidden", "residual", "ln1"], ["xn", "", "", "res1"], epsilon=eps),
        node("MatMul", ["xn", "wq"], ["q"], domain=""),
        node("MatMul", ["xn", "wk"], ["k"], domain=""),
        node("MatMul", ["xn", "wv"], ["v"], domain=""),
        rope_node("q", "position_ids", "cos", "sin", "q_rot"),
        rope_node("k", "position_ids", "cos", "sin", "k_rot"),
        gqa_node({"query": "q_rot", "key": "k_rot", "value": "v", "seqlens_k": "seqlens_k",
                  "total_sequence_length": "total_sequence_length"},
                 ["attn", "present_key", "present_value"], num_heads=N, kv_num_heads=Nkv),
        node("MatMul", ["attn", "wo"], ["attn_out"], domain=""),
        node("SkipSimplifiedLayerNormalization", ["attn_out", "res1", "ln2"], ["hn", "", "", "res2"], epsilon=eps),
        node("MatMul", ["hn", "wg"], ["gate"], domain=""),
        node("Sigmoid", ["gate"], ["gate_sig"], domain=""),
        node("Mul", ["gate", "gate_sig"], ["gate_act"], domain=""),
        node("MatMul", ["hn", "wu"], ["up"], domain=""),
        node("Mul", ["gate_act", "up"], ["gu"], domain=""),
        node("FusedMatMul", ["gu", "wd_t"], ["mlp_out"], alpha=1.0, transA=0, transB=1),
        node("Add", ["mlp_out", "res2"], ["layer_out"], domain=""),
    ]

    def ref(f):
        r1 = f["hidden"].astype(np.float64) + f["residual"]
        xn = rms_ref(r1, inits["ln1"], eps)
        q, k, v = xn @ inits["wq"], xn @ inits["wk"], xn @ inits["wv"]
        qr = rope_ref(q.reshape(B, S, N, D), pos, cos, sin, False).reshape(B, S, N * D)
        kr = rope_ref(k.reshape(B, S, Nkv, D), pos, cos, sin, False).reshape(B, S, Nkv * D)
        o, pk, pv = gqa_ref(qr, kr, v, N, Nkv)
        r2 = o @ inits["wo"] + r1
        hn = rms_ref(r2, inits["ln2"], eps)
        g = hn @ inits["wg"]
        mlp = ((g / (1 + np.exp(-g))) * (hn @ inits["wu"])) @ inits["wd_t"].T
        return [mlp + r2, pk, pv]
    m = model(nodes, feeds, [("layer_out", F32), ("present_key", F32), ("present_value", F32)], inits,
              "block_llama_layer")
    return m, feeds, ref, ("whole Llama decoder layer: seqlens_k/total_sequence_length from attention_mask "
                           "(ReduceSum-1, Shape/Slice, Cast int32), SkipSimplifiedLayerNormalization x2, RotaryEmbedding, "
                           "GroupQueryAttention, SwiGLU MLP (Sigmoid*Mul) with a FusedMatMul transB down projection, residual Add")


def packed_block(D):
    """SimplifiedLayerNormalization -> one MatMul to packed QKV -> GQA(do_rotary=1, local window) -> MatMul -> Add."""
    B, S, C, N, Nkv, W = 1, 29, 48, 2, 1, 9
    eps = 1e-5
    cos, sin = rope_tables(64, D)
    inits = {"ln_g": gvec(C), "wqkv": w(C, (N + 2 * Nkv) * D), "wo": w(N * D, C), "cos": cos, "sin": sin}
    x = randn(B, S, C)
    sk, tot = seq_inputs(B, S)
    feeds = {"hidden": x, "seqlens_k": sk, "total_sequence_length": tot}
    nodes = [
        node("SimplifiedLayerNormalization", ["hidden", "ln_g"], ["xn"], domain="", axis=-1, epsilon=eps),
        node("MatMul", ["xn", "wqkv"], ["qkv"], domain=""),
        gqa_node({"query": "qkv", "seqlens_k": "seqlens_k", "total_sequence_length": "total_sequence_length",
                  "cos_cache": "cos", "sin_cache": "sin"},
                 ["attn", "present_key", "present_value"], num_heads=N, kv_num_heads=Nkv, do_rotary=1,
                 rotary_interleaved=0, local_window_size=W),
        node("MatMul", ["attn", "wo"], ["attn_out"], domain=""),
        node("Add", ["hidden", "attn_out"], ["out"], domain=""),
    ]

    def ref(f, inclusive=True):
        xn = rms_ref(f["hidden"], inits["ln_g"], eps)
        qkv = xn @ inits["wqkv"]
        q, k, v = np.split(qkv, [N * D, N * D + Nkv * D], axis=-1)
        o, pk, pv = gqa_ref(q, k, v, N, Nkv, rotary=(cos, sin, False), window=W, inclusive=inclusive)
        return [f["hidden"] + o @ inits["wo"], pk, pv]
    ref.window_alt = lambda f: ref(f, inclusive=False)
    m = model(nodes, feeds, [("out", F32), ("present_key", F32), ("present_value", F32)], inits,
              f"block_packed_qkv_internal_rotary_d{D}")
    return m, feeds, ref, ("model-builder style attention: SimplifiedLayerNormalization -> one MatMul to packed QKV -> "
                           f"GroupQueryAttention with do_rotary=1 and local_window_size=9 -> MatMul -> residual Add "
                           f"(MQA 2:1, head size {D})")


@case
def block_packed_qkv_internal_rotary():
    return packed_block(32)


@case
def block_packed_qkv_internal_rotary_d24():
    return packed_block(24)


# ---------------------------------------------------------------- driver

def vi_desc(v):
    t = v.type.tensor_type
    return {"name": v.name, "dtype": TensorProto.DataType.Name(t.elem_type),
            "shape": [d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.shape.dim]}


def session(m):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])


def max_err(outs, refs):
    return [float(np.abs(np.asarray(a, np.float64) - np.asarray(r, np.float64)).max()) if a.size else 0.0
            for a, r in zip(outs, refs)]


def schema_dump():
    """Input/attribute names of the contrib ops as this onnxruntime build registers them, where exposed."""
    try:
        from onnxruntime.capi import onnxruntime_pybind11_state as rt
        want = {"GroupQueryAttention", "MultiHeadAttention", "RotaryEmbedding", "SkipSimplifiedLayerNormalization",
                "SimplifiedLayerNormalization", "FusedMatMul"}
        out = {}
        for s in rt.get_all_operator_schema():
            if s.name in want:
                out[f"{s.domain or 'ai.onnx'}::{s.name}:{s.since_version}"] = {
                    "inputs": [i.name for i in s.inputs], "outputs": [o.name for o in s.outputs],
                    "attributes": sorted(s.attributes)}
        return out
    except Exception as e:
        return {"unavailable": f"{type(e).__name__}: {str(e)[:200]}"}


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    import onnxruntime as ort
    summary = {"versions": {"onnx": onnx.__version__, "onnxruntime": ort.__version__, "numpy": np.__version__},
               "opsets": {"ai.onnx": 23, "com.microsoft": 1}, "ok": {}, "failed": {}}
    try:
        import torch, transformers
        summary["versions"].update(torch=torch.__version__, transformers=transformers.__version__)
    except Exception:
        pass
    summary["ort_schemas"] = schema_dump()
    for name, fn in CASES.items():
        d = os.path.join(WORK, name)
        try:
            m, feeds, ref, what = fn()
            outs = session(m).run(None, feeds)
            # record the output shapes ORT produced in the graph, then run the saved model again
            for o, a in zip(m.graph.output, outs):
                o.type.tensor_type.ClearField("shape")
                for dim in a.shape:
                    o.type.tensor_type.shape.dim.add().dim_value = dim
            outs = session(m).run(None, feeds)
            os.makedirs(d)
            onnx.save(m, os.path.join(d, "model.onnx"))
            for i, a in enumerate(feeds.values()):
                np.save(os.path.join(d, f"input_{i}.npy"), a)
            for i, a in enumerate(outs):
                np.save(os.path.join(d, f"output_{i}.npy"), a)
            meta = {"case": name, "what": what,
                    "inputs": [vi_desc(v) for v in m.graph.input], "outputs": [vi_desc(v) for v in m.graph.output],
                    "ops": sorted({(n.domain or "ai.onnx") + "::" + n.op_type for n in m.graph.node}),
                    "initializers": len(m.graph.initializer)}
            try:
                errs = max_err(outs, ref(feeds))
                alt = getattr(ref, "window_alt", None)
                if alt is not None:
                    # local_window_size W: which keys does query i see? keep the model that ORT matches
                    variants = {"query i attends keys j with i-W <= j <= i (W+1 keys)": errs,
                                "query i attends keys j with i-W < j <= i (W keys)": max_err(outs, alt(feeds))}
                    meta["numpy_ref_window_variants"] = variants
                    meta["window_semantics"], errs = min(variants.items(), key=lambda kv: kv[1][0])
                meta["numpy_ref_max_abs_err"] = errs
            except Exception as e:
                meta["numpy_ref_error"] = f"{type(e).__name__}: {str(e)[:300]}"
            with open(os.path.join(d, "meta.json"), "w") as f:
                json.dump(meta, f, indent=1)
            summary["ok"][name] = {k: meta.get(k) for k in ("what", "numpy_ref_max_abs_err", "window_semantics",
                                                           "numpy_ref_error") if meta.get(k) is not None}
            print(f"ok   {name}: ref err {meta.get('numpy_ref_max_abs_err')} {meta.get('window_semantics', '')}",
                  flush=True)
        except Exception as e:
            shutil.rmtree(d, ignore_errors=True)
            summary["failed"][name] = f"{type(e).__name__}: {str(e)[:800]}"
            print(f"FAIL {name}: {summary['failed'][name][:400]}", flush=True)
            if not isinstance(e, (RuntimeError,)) and "onnxruntime" not in type(e).__module__:
                summary["failed"][name] += " | " + traceback.format_exc()[-600:]
    with open(os.path.join(WORK, "meta.json"), "w") as f:
        json.dump(summary, f, indent=1)
    os.makedirs(OUT, exist_ok=True)
    with tarfile.open(os.path.join(OUT, "contrib_ops.tar.gz"), "w:gz") as t:
        t.add(WORK, arcname="contrib")
    print(json.dumps({"ok": sorted(summary["ok"]), "failed": summary["failed"]}, indent=1))


if __name__ == "__main__":
    main()

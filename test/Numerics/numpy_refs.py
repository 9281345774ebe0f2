"""Independent numpy models of the mnemo ops, in float64.

Attention follows the op's definition directly on the full score matrix;
rotary frequencies follow Hugging Face transformers' modeling_rope_utils,
re-derived here (as in transformers, the angle position * inv_freq is formed
in float32).
"""

import math

import numpy as np


def attention(q, k, v, scale=None, causal=False, offset=0, window=None,
              softcap=None, mask=None, sink=None):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    b, hq, sq, d = q.shape
    hkv, skv = k.shape[1], k.shape[2]
    g = hq // hkv
    k = np.repeat(k, g, axis=1)
    v = np.repeat(v, g, axis=1)
    scale = 1.0 / np.sqrt(d) if scale is None else scale
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    if softcap is not None:
        s = softcap * np.tanh(s / softcap)
    if mask is not None:
        s = s + mask.astype(np.float64)
    i = np.arange(sq)[:, None] + offset
    j = np.arange(skv)[None, :]
    hidden = np.zeros((sq, skv), dtype=bool)
    if causal:
        hidden |= j > i
    if window is not None:
        hidden |= (i - j) >= window
    s = np.where(hidden, -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    if sink is not None:
        m = np.maximum(m, sink.astype(np.float64)[None, :, None, None])
    m = np.where(np.isneginf(m), 0.0, m)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    if sink is not None:
        l = l + np.exp(sink.astype(np.float64)[None, :, None, None] - m)
    o = np.einsum("bhij,bhje->bhie", p, v)
    return np.where(l == 0, 0.0, o / np.where(l == 0, 1.0, l))


def inv_freq(theta, r, scaling=None, max_pos=None):
    base = theta
    kind = (scaling or {}).get("kind", "none")
    if kind == "dynamic":
        f, orig = scaling["factor"], scaling["original_max_position"]
        seq = max(max_pos + 1, orig)
        base = theta * (f * seq / orig - (f - 1)) ** (r / (r - 2))
    freq = 1.0 / base ** (np.arange(0, r, 2, dtype=np.float64) / r)
    if kind == "linear":
        freq = freq / scaling["factor"]
    elif kind == "yarn":
        f, orig = scaling["factor"], scaling["original_max_position"]
        fast, slow = scaling.get("beta_fast", 32.0), scaling.get("beta_slow", 1.0)

        def corr(rot):
            return r * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(theta))

        lo, hi = corr(fast), corr(slow)
        if scaling.get("truncate", True):
            lo, hi = math.floor(lo), math.ceil(hi)
        lo, hi = max(lo, 0), min(hi, r - 1)
        if lo == hi:
            hi += 0.001
        ramp = np.clip((np.arange(r // 2) - lo) / (hi - lo), 0, 1)
        extrapolation = 1 - ramp
        freq = freq / f * (1 - extrapolation) + freq * extrapolation
    elif kind == "llama3":
        f, orig = scaling["factor"], scaling["original_max_position"]
        lo_f, hi_f = scaling["low_freq_factor"], scaling["high_freq_factor"]
        wavelen = 2 * math.pi / freq
        scaled = np.where(wavelen > orig / lo_f, freq / f, freq)
        smooth = (orig / wavelen - lo_f) / (hi_f - lo_f)
        smoothed = (1 - smooth) * scaled / f + smooth * scaled
        medium = (wavelen >= orig / hi_f) & (wavelen <= orig / lo_f)
        freq = np.where(medium, smoothed, scaled)
    return freq


def attention_factor(scaling):
    if not scaling or scaling["kind"] != "yarn":
        return 1.0
    if "attention_factor" in scaling:
        return scaling["attention_factor"]
    f = scaling["factor"]
    return 1.0 if f <= 1 else 0.1 * math.log(f) + 1.0


def rope(x, pos, theta, r, interleaved, scaling):
    b, h, s, d = x.shape
    pos_bs = np.broadcast_to(pos.reshape((-1, s)) if pos.ndim == 2 else pos[None, :],
                             (b, s))
    # Dynamic NTK derives each row's frequencies from that row's largest
    # position when the positions are [B, S] with B > 1, else from all.
    own_rows = pos.ndim == 2 and pos.shape[0] != 1
    freq = np.stack([inv_freq(theta, r, scaling,
                              int(pos_bs[i].max() if own_rows else pos.max()))
                     for i in range(b)]).astype(np.float32)
    angle = (pos_bs.astype(np.float32)[:, :, None] * freq[:, None, :])
    angle = angle.astype(np.float64)
    af = attention_factor(scaling)
    cos = (np.cos(angle) * af)[:, None, :, :]
    sin = (np.sin(angle) * af)[:, None, :, :]
    x64 = x.astype(np.float64)
    rot, rest = x64[..., :r], x64[..., r:]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        y = np.empty_like(rot)
        y[..., 0::2] = x1 * cos - x2 * sin
        y[..., 1::2] = x2 * cos + x1 * sin
    else:
        x1, x2 = rot[..., : r // 2], rot[..., r // 2:]
        y = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return np.concatenate([y, rest], axis=-1)


def rope_tables(x, cos, sin, interleaved):
    """y = x * cos + rot(x) * sin over the tables' width r, rest unchanged."""
    b, h, s, d = x.shape
    r = cos.shape[-1]
    table = lambda t: np.broadcast_to(
        t.astype(np.float64).reshape((-1, s, r)), (b, s, r))[:, None]
    x64 = x.astype(np.float64)
    rot, rest = x64[..., :r], x64[..., r:]
    turned = np.empty_like(rot)
    if interleaved:
        turned[..., 0::2] = -rot[..., 1::2]
        turned[..., 1::2] = rot[..., 0::2]
    else:
        turned[..., : r // 2] = -rot[..., r // 2:]
        turned[..., r // 2:] = rot[..., : r // 2]
    y = rot * table(cos) + turned * table(sin)
    return np.concatenate([y, rest], axis=-1)


def mla(q_nope, q_pe, c_kv, k_pe, w_uk, w_uv, scale=None, causal=False,
        offset=0):
    """DeepSeek multi-head latent attention, straight from its definition:
    per-head keys and values up-projected from the latent c_kv, the rope key
    k_pe shared by the heads."""
    qn, qp, c, kp, wk, wv = (x.astype(np.float64) for x in
                             (q_nope, q_pe, c_kv, k_pe, w_uk, w_uv))
    k_nope = np.einsum("bjc,hec->bhje", c, wk)
    v = np.einsum("bjc,hec->bhje", c, wv)
    s = (np.einsum("bhie,bhje->bhij", qn, k_nope) +
         np.einsum("bhie,bje->bhij", qp, kp))
    s *= 1.0 / np.sqrt(qn.shape[-1] + qp.shape[-1]) if scale is None else scale
    sq, skv = s.shape[2], s.shape[3]
    if causal:
        hidden = np.arange(skv)[None, :] > np.arange(sq)[:, None] + offset
        s = np.where(hidden, -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isneginf(m), 0.0, m)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhij,bhje->bhie", p, v)
    return np.where(l == 0, 0.0, o / np.where(l == 0, 1.0, l))

"""fake_quantize.py SRC DST FORMAT GROUP [asymmetric] [--skip=embedding,head]:
copies the f32 checkpoint SRC to DST with every weight matrix (each 2-D
float tensor: the projections, the embedding and the output head) replaced
by the values its quantized form decodes to, computed here independently
of the compiler (those --skip names, as mnemoc --quant-skip: rounded to
bf16 instead, to nearest even; a tied embedding is the head):

  symmetric int8/int4: scale = absmax / 127 or / 7, q = round(w / scale)
    clamped to [-128, 127] or [-8, 7];
  asymmetric: scale = (max(w, 0) - min(w, 0)) / 255 or / 15,
    zero = round(-min / scale), q = round(w / scale) + zero in [0, levels];
  nf4: scale = absmax, q = the nearest NormalFloat4 value (the lowest
    index on a tie);
  fp8: per block of GROUP x GROUP (rows and columns; DeepSeek-V3's
    128 x 128), scale = absmax / 448 in f32, q = the E4M3 value nearest
    to w / scale (ties to even);

per group of GROUP columns of a row (the last one partial), rounding half
away from zero, in f32. Scales are rounded to f16 when every scale of the
tensor is zero or a normal f16, else kept f32. A model compiled from DST in
f32 computes what the same model compiled from SRC with --dtype=FORMAT
--quant-group=GROUP computes, up to f32 rounding."""
import os
import shutil
import sys

import numpy as np

from quant_reference import NF4, round_away
from safetensors_io import read as read_safetensors, write as write_safetensors

def e4m3(x):
    """f32 `x` (|x| <= 448 up to rounding) rounded to the nearest OCP E4M3
    value, ties to even: a binade's 8 steps, the subnormals' step 2^-9."""
    a = np.abs(x).astype(np.float64)
    e = np.maximum(np.floor(np.log2(np.where(a > 0, a, 1.0))), -6)
    step = 2.0 ** (e - 3)
    r = np.minimum(np.round(a / step) * step, 448.0)
    return (np.sign(x) * r).astype(np.float32)


def fake_quantize_fp8(w, block):
    rows = w.reshape(-1, w.shape[-1]).astype(np.float32)
    out = np.empty_like(rows)
    for r in range(0, rows.shape[0], block):
        for c in range(0, rows.shape[1], block):
            g = rows[r:r + block, c:c + block]
            scale = np.float32(np.abs(g).max()) / np.float32(448)
            x = g / scale if scale > 0 else np.zeros_like(g)
            out[r:r + block, c:c + block] = e4m3(x.astype(np.float32)) * scale
    return out.reshape(w.shape)


def fake_quantize(w, fmt, group, asymmetric):
    if fmt == "fp8":
        return fake_quantize_fp8(w, group)
    rows = w.reshape(-1, w.shape[-1]).astype(np.float32)
    levels = 255 if fmt == "int8" else 15
    half = 127 if fmt == "int8" else 7
    groups = [(c, min(c + group, rows.shape[1]))
              for c in range(0, rows.shape[1], group)]

    def scales_of(g):
        lo = np.minimum(g.min(axis=1), 0).astype(np.float32)
        hi = np.maximum(g.max(axis=1), 0).astype(np.float32)
        absmax = np.abs(g).max(axis=1).astype(np.float32)
        if fmt == "nf4":
            return absmax, lo
        if asymmetric:
            return (hi - lo) / np.float32(levels), lo
        return absmax / np.float32(half), lo

    raw = [scales_of(rows[:, a:b]) for a, b in groups]
    h = [s.astype(np.float16).astype(np.float32) for s, _ in raw]
    f16 = all(np.isfinite(x).all() and ((s == 0) | (x >= 6.103515625e-05)).all()
              for x, (s, _) in zip(h, raw))
    out = np.empty_like(rows)
    for (a, b), (s, lo), s16 in zip(groups, raw, h):
        scale = (s16 if f16 else s)[:, None]
        g = rows[:, a:b]
        with np.errstate(divide="ignore", invalid="ignore"):
            x = np.where(scale > 0, g / scale, np.float32(0)).astype(np.float32)
        if fmt == "nf4":
            q = NF4[np.argmin(np.abs(x[..., None] - NF4), axis=-1)]
            out[:, a:b] = q * scale
            continue
        zero = np.zeros_like(scale)
        if asymmetric:
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(scale[:, 0] > 0, round_away(-lo / scale[:, 0]), 0)
            zero = np.clip(z, 0, levels).astype(np.float32)[:, None]
            q = np.clip(round_away(x) + zero, 0, levels)
        else:
            q = np.clip(round_away(x), -half - 1, half)
        out[:, a:b] = (q.astype(np.float32) - zero) * scale
    return out.reshape(w.shape)


def bf16(a):
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


# The tensor names of what --skip names (Llama-family and DeepSeek).
ENDS = {"embedding": ("model.embed_tokens.weight",),
        "head": ("lm_head.weight", "head.weight")}


def main(src, dst, fmt, group, asymmetric=False, skip=()):
    kept = {name for what in skip for name in ENDS[what]}
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.safetensors",
                                                            "*.onnx*"))
    for name in sorted(os.listdir(src)):
        if not name.endswith(".safetensors"):
            continue
        tensors = read_safetensors(os.path.join(src, name))
        for key, a in tensors.items():
            if a.dtype == np.float32 and a.ndim == 2:
                tensors[key] = (bf16(a) if key in kept else
                                fake_quantize(a, fmt, group, asymmetric))
        write_safetensors(os.path.join(dst, name), tensors)


if __name__ == "__main__":
    rest = sys.argv[5:]
    skips = [a[len("--skip="):].split(",") for a in rest
             if a.startswith("--skip=")]
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]),
         "asymmetric" in rest, skips[0] if skips else ())

"""make_prequantized.py SRC DST METHOD BITS GROUP [OPTION...]: the f32
checkpoint SRC with its linear layers (attention and MLP projections)
quantized and packed as METHOD (gptq, awq or bnb) stores them, in DST, and
in DST-dequantized the same checkpoint in f32 with each of those layers
holding the values its packed tensors decode to.

Quantization: round to nearest per group of GROUP input features (-1: all),
asymmetric (GPTQ's min/max grid: scale = (max(w, 0) - min(w, 0)) / maxq,
zero = round(-min / scale)), scales in f16. Options: `sym` (GPTQ's symmetric
grid, zero = 2^(bits-1)); `v2` (GPTQ's checkpoint_format gptq_v2: qzeros
hold the zero itself; the default, gptq, holds zero - 1); `act-order`
(g_idx permuted, as desc_act makes it; unsupported by the compiler).

make_prequantized.py edit DIR KEY=JSON... NAME...: sets quantization_config
keys and removes tensors, for the error tests.

bnb: bitsandbytes' NF4 as its default (torch) backend quantizes (absmax
per block of GROUP consecutive elements of the row-major weight, the
nearest NF4 value, two indices per byte with the first in the high nibble)
and transformers serializes it (weight, weight.absmax, weight.quant_map,
weight.quant_state.bitsandbytes__nf4); option `double` quantizes the
absmax again (offset = their mean, 8-bit codes per 256 blocks into
weight.nested_quant_map, here an evenly spaced map of [-1, 1], and
weight.nested_absmax).

The decoded values are computed from the packed tensors alone, unpacked as
the reference dequantizers do (AutoGPTQ's torch path: scales[g_idx] *
(q - zeros), zeros + 1 in the first format; AutoAWQ: codes and zeros
reordered by [0, 4, 1, 5, 2, 6, 3, 7], (q - z) * s; bitsandbytes' default
backend: quant_map[index] * absmax, the nested absmax as map[code] *
nested_absmax + offset), in float32."""
import json
import os
import shutil
import sys

import numpy as np

from safetensors_io import dtypes as safetensors_dtypes, read as read_safetensors, write as write_safetensors

LAYERS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
          "down_proj")
AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]
AWQ_REVERSE_ORDER = [0, 4, 1, 5, 2, 6, 3, 7]


def quantize(w, bits, group, sym):
    """w [N, K] -> codes [N, K], zeros [N, G], scales [N, G] (f16)."""
    n, k = w.shape
    maxq = 2 ** bits - 1
    codes = np.zeros((n, k), np.int64)
    zeros, scales = [], []
    for c in range(0, k, group):
        g = w[:, c:c + group].astype(np.float32)
        lo = np.minimum(g.min(axis=1), 0)
        hi = np.maximum(g.max(axis=1), 0)
        if sym:
            hi = np.maximum(np.abs(lo), hi)
            lo = -hi
        scale = ((hi - lo) / maxq).astype(np.float16)
        scale[scale == 0] = 1
        s32 = scale.astype(np.float32)[:, None]
        zero = (np.full(n, (maxq + 1) // 2) if sym
                else np.clip(np.round(-lo / s32[:, 0]), 0, maxq)).astype(np.int64)
        codes[:, c:c + group] = np.clip(np.round(g / s32) + zero[:, None], 0, maxq)
        zeros.append(zero)
        scales.append(scale)
    return codes, np.stack(zeros, 1), np.stack(scales, 1)


def pack(values, bits, axis, order=None):
    """Packs 32 / bits unsigned values along `axis` into int32 words, value
    t of a word at bits [bits * t, bits * (t + 1)); with `order`, value t is
    element order[t] of its run."""
    per = 32 // bits
    v = np.moveaxis(values.astype(np.uint32), axis, -1)
    v = v.reshape(v.shape[:-1] + (-1, per))
    if order is not None:
        v = v[..., order]
    words = np.zeros(v.shape[:-1], np.uint32)
    for t in range(per):
        words |= v[..., t] << np.uint32(bits * t)
    return np.moveaxis(words, -1, axis).view(np.int32)


def unpack(words, bits, axis):
    per = 32 // bits
    w = np.moveaxis(words.view(np.uint32), axis, -1)
    shifts = np.arange(0, 32, bits, dtype=np.uint32)
    v = (w[..., None] >> shifts) & np.uint32(2 ** bits - 1)
    v = v.reshape(w.shape[:-1] + (w.shape[-1] * per,))
    return np.moveaxis(v, -1, axis).astype(np.int64)


def gptq_tensors(w, bits, group, sym, v2, act_order):
    n, k = w.shape
    codes, zeros, scales = quantize(w, bits, group, sym)
    stored = zeros if v2 else (zeros - 1) & (2 ** bits - 1)
    g_idx = np.arange(k, dtype=np.int32) // group
    if act_order:
        g_idx = np.random.default_rng(0).permutation(g_idx).astype(np.int32)
    return {"qweight": pack(codes.T, bits, 0), "qzeros": pack(stored.T, bits, 1),
            "scales": scales.T.copy(), "g_idx": g_idx}


def gptq_decode(t, bits, v2):
    q = unpack(t["qweight"], bits, 0)                   # [K, N]
    z = unpack(t["qzeros"], bits, 1) + (0 if v2 else 1)  # [G, N]
    g = t["g_idx"].astype(np.int64)
    s = t["scales"].astype(np.float32)
    return (s[g] * (q - z[g]).astype(np.float32)).T


def awq_tensors(w, group):
    codes, zeros, scales = quantize(w, 4, group, False)
    return {"qweight": pack(codes.T, 4, 1, AWQ_ORDER),
            "qzeros": pack(zeros.T, 4, 1, AWQ_ORDER), "scales": scales.T.copy()}


def awq_decode(t, group):
    q, z = unpack(t["qweight"], 4, 1), unpack(t["qzeros"], 4, 1)
    rev = np.arange(q.shape[1]).reshape(-1, 8)[:, AWQ_REVERSE_ORDER].reshape(-1)
    q, z = q[:, rev], z[:, rev]
    g = np.arange(q.shape[0]) // group
    return ((q - z[g]).astype(np.float32) * t["scales"].astype(np.float32)[g]).T


NF4 = np.array([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
    0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
    0.7229568362236023, 1.0], np.float32)


def bnb_tensors(w, block, double):
    n, k = w.shape
    flat = w.astype(np.float32).reshape(-1, block)
    absmax = np.abs(flat).max(axis=1).astype(np.float32)
    scaled = np.clip(flat * (np.float32(1) / absmax)[:, None], -1, 1).reshape(-1)
    q = np.argmin(np.abs(scaled[:, None] - NF4[None, :]), axis=1).astype(np.uint8)
    t = {"weight": (q[::2] << 4 | q[1::2]).reshape(-1, 1),
         "weight.quant_map": NF4.copy()}
    state = {"quant_type": "nf4", "blocksize": block, "dtype": "float32",
             "shape": [n, k]}
    if double:
        offset = np.float32(absmax.mean())
        centred = (absmax - offset).astype(np.float32)
        nested_map = np.linspace(-1, 1, 256).astype(np.float32)
        pad = (-len(centred)) % 256
        groups = np.concatenate([centred, np.zeros(pad, np.float32)]).reshape(-1, 256)
        nested_absmax = np.abs(groups).max(axis=1).astype(np.float32)
        nested_absmax[nested_absmax == 0] = 1
        codes = np.argmin(np.abs((groups / nested_absmax[:, None]).reshape(-1)[:, None]
                                 - nested_map[None, :]), axis=1)[:len(centred)]
        t["weight.absmax"] = codes.astype(np.uint8)
        t["weight.nested_absmax"] = nested_absmax
        t["weight.nested_quant_map"] = nested_map
        state.update(nested_blocksize=256, nested_offset=float(offset),
                     nested_dtype="float32")
    else:
        t["weight.absmax"] = absmax
    t["weight.quant_state.bitsandbytes__nf4"] = np.frombuffer(
        json.dumps(state).encode(), np.uint8).copy()
    return t


def bnb_decode(t, shape):
    packed = t["weight"].reshape(-1)
    index = np.empty(packed.size * 2, np.int64)
    index[1::2], index[::2] = packed & 0xF, packed >> 4
    state = json.loads(bytes(t["weight.quant_state.bitsandbytes__nf4"]))
    block = state["blocksize"]
    absmax = t["weight.absmax"]
    if "nested_offset" in state:
        nested = t["weight.nested_absmax"][np.arange(absmax.size) // 256]
        absmax = (t["weight.nested_quant_map"][absmax] * nested).astype(np.float32)
        absmax = (absmax + np.float32(state["nested_offset"])).astype(np.float32)
    values = t["weight.quant_map"][index].reshape(-1, block) * absmax[:, None]
    return values.astype(np.float32).reshape(shape)


def edit(directory, changes):
    """`set`: quantization_config keys set to JSON values; `drop`: tensors
    removed (for the error tests)."""
    path = os.path.join(directory, "config.json")
    with open(path) as f:
        config = json.load(f)
    tensors = read_safetensors(os.path.join(directory, "model.safetensors"))
    # FP8 codes are read as bytes: written back as F8_E4M3.
    fp8 = {name: t for name, t in
           safetensors_dtypes(os.path.join(directory, "model.safetensors")).items()
           if t == "F8_E4M3"}
    for change in changes:
        key, _, value = change.partition("=")
        if value:
            config["quantization_config"][key] = json.loads(value)
        else:
            del tensors[key]
    with open(path, "w") as f:
        json.dump(config, f, indent=1)
    write_safetensors(os.path.join(directory, "model.safetensors"), tensors, fp8)


def main():
    if sys.argv[1] == "edit":
        return edit(sys.argv[2], sys.argv[3:])
    src, dst, method, bits, group = sys.argv[1:6]
    options = set(sys.argv[6:])
    bits, group = int(bits), int(group)
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    quantized, decoded = {}, {}
    for name, w in tensors.items():
        stem = name[:-len(".weight")]
        if not name.endswith(".weight") or stem.split(".")[-1] not in LAYERS:
            quantized[name] = decoded[name] = w
            continue
        g = group if group > 0 else w.shape[1]
        if method == "gptq":
            t = gptq_tensors(w, bits, g, "sym" in options, "v2" in options,
                             "act-order" in options)
            decoded[name] = gptq_decode(t, bits, "v2" in options)
        elif method == "bnb":
            t = bnb_tensors(w, g, "double" in options)
            decoded[name] = bnb_decode(t, w.shape)
            for suffix, a in t.items():
                quantized[f"{stem}.{suffix}"] = a
            continue
        else:
            t = awq_tensors(w, g)
            decoded[name] = awq_decode(t, g)
        for suffix, a in t.items():
            quantized[f"{stem}.{suffix}"] = a
    with open(os.path.join(src, "config.json")) as f:
        config = json.load(f)
    plain = dict(config)
    if method == "gptq":
        config["quantization_config"] = {
            "quant_method": "gptq", "bits": bits, "group_size": group,
            "desc_act": "act-order" in options, "sym": "sym" in options,
            "checkpoint_format": "gptq_v2" if "v2" in options else "gptq"}
    elif method == "bnb":
        config["quantization_config"] = {
            "quant_method": "bitsandbytes", "load_in_4bit": True,
            "load_in_8bit": False, "bnb_4bit_quant_type": "nf4",
            "bnb_4bit_use_double_quant": "double" in options,
            "bnb_4bit_compute_dtype": "float32", "bnb_4bit_quant_storage": "uint8"}
    else:
        config["quantization_config"] = {
            "quant_method": "awq", "bits": 4, "group_size": group,
            "zero_point": True, "version": "gemm"}
    for path, t, c in ((dst, quantized, config),
                       (dst + "-dequantized", decoded, plain)):
        os.makedirs(path, exist_ok=True)
        write_safetensors(os.path.join(path, "model.safetensors"), t)
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump(c, f, indent=1)


if __name__ == "__main__":
    main()

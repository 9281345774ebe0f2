"""fp8_checkpoint.py SRC NATIVE DECODED RxC [--nan=TENSOR]: from the f32
checkpoint SRC, writes NATIVE, a checkpoint in DeepSeek-V3's FP8 layout
(each projection's `weight` as F8_E4M3 codes [N, K] beside
`weight_scale_inv` [ceil(N / R), ceil(K / C)] f32, config.json's
quantization_config {"quant_method": "fp8", "fmt": "e4m3",
"weight_block_size": [R, C]}; RxC may be one number, R = C), and DECODED, the f32
checkpoint holding the values those codes decode to (code x scale, in
f32; DECODED `-`: not written). The other tensors (embedding, head,
norms) stay f32 in both. A model
compiled from NATIVE computes what the same model compiled from DECODED
computes, up to f32 rounding. The quantization is fake_quantize.py's fp8
(a block's absmax / 448, the nearest E4M3 value, ties to even). --nan
writes a NaN code (0x7f) as element 0 of NATIVE's TENSOR."""
import json
import os
import shutil
import sys

import numpy as np

from fake_quantize import e4m3
from safetensors_io import read as read_safetensors, write as write_safetensors


def e4m3_bytes(r):
    """The E4M3 bytes of `r` (f32 values that E4M3 holds exactly)."""
    a = np.abs(r).astype(np.float64)
    sign = (np.signbit(r).astype(np.uint8) << 7)
    e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    normal = a >= 2.0 ** -6
    mant = np.where(normal, np.round((a / 2.0 ** e - 1) * 8), np.round(a / 2.0 ** -9))
    field = np.where(normal, e + 7, 0)
    code = (field.astype(np.int64) << 3) | mant.astype(np.int64)
    code = np.where(a == 0, 0, code)
    return (sign | code.astype(np.uint8)).astype(np.uint8)


def quantize(w, rows, cols):
    n, k = w.shape
    scales = np.zeros(((n + rows - 1) // rows, (k + cols - 1) // cols), np.float32)
    codes = np.zeros((n, k), np.uint8)
    decoded = np.zeros((n, k), np.float32)
    for i, r in enumerate(range(0, n, rows)):
        for j, c in enumerate(range(0, k, cols)):
            g = w[r:r + rows, c:c + cols].astype(np.float32)
            s = np.float32(np.abs(g).max()) / np.float32(448)
            x = (g / s if s > 0 else np.zeros_like(g)).astype(np.float32)
            q = e4m3(x)
            scales[i, j] = s
            codes[r:r + rows, c:c + cols] = e4m3_bytes(q)
            decoded[r:r + rows, c:c + cols] = q * s
    return codes, scales, decoded


def main(src, native, decoded_dir, block, nan=None):
    rows, cols = (int(x) for x in (block.split("x") * 2)[:2])
    for dst in (native, decoded_dir)[:1 if decoded_dir == "-" else 2]:
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.safetensors", "*.onnx*"))
    with open(os.path.join(src, "config.json")) as f:
        config = json.load(f)
    config["quantization_config"] = {"quant_method": "fp8", "fmt": "e4m3",
                                     "activation_scheme": "dynamic",
                                     "weight_block_size": [rows, cols]}
    with open(os.path.join(native, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    for name in sorted(os.listdir(src)):
        if not name.endswith(".safetensors"):
            continue
        tensors = read_safetensors(os.path.join(src, name))
        nat, dec, types = {}, {}, {}
        for key, a in tensors.items():
            if a.dtype == np.float32 and a.ndim == 2 and key.endswith("_proj.weight"):
                codes, scales, values = quantize(a, rows, cols)
                if key == nan:
                    codes.reshape(-1)[0] = 0x7F
                nat[key] = codes
                types[key] = "F8_E4M3"
                nat[key + "_scale_inv"] = scales
                dec[key] = values
            else:
                nat[key] = dec[key] = a
        write_safetensors(os.path.join(native, name), nat, types)
        if decoded_dir != "-":
            write_safetensors(os.path.join(decoded_dir, name), dec)


if __name__ == "__main__":
    nans = [a[len("--nan="):] for a in sys.argv[5:] if a.startswith("--nan=")]
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], nans[0] if nans else None)

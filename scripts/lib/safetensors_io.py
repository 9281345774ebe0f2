"""Reading and writing safetensors files with numpy, for the test-input and
reference generators (the compiler's own reader is lib/Frontend/Checkpoint).

    read(path) -> {name: array}: F32, F16, I32, I64 and U8 as such, BF16
        widened to float32, F8_E4M3 as its bytes (uint8).
    dtypes(path) -> {name: header dtype}.
    write(path, tensors, dtypes=None): float32, float16, int32, int64 and
        uint8 arrays (others are converted to float32), in the order given,
        the header padded to 8 bytes; `dtypes` may name another header
        dtype for a tensor of bytes (F8_E4M3: FP8 codes as uint8).
"""
import json
import struct

import numpy as np

_READ = {"F32": np.float32, "F16": np.float16, "I32": np.int32,
         "I64": np.int64, "U8": np.uint8, "BF16": np.uint16,
         "F8_E4M3": np.uint8}
_WRITE = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
          np.dtype(np.int32): "I32", np.dtype(np.int64): "I64",
          np.dtype(np.uint8): "U8"}


def _header(f):
    n = struct.unpack("<Q", f.read(8))[0]
    return json.loads(f.read(n))


def dtypes(path):
    with open(path, "rb") as f:
        header = _header(f)
    return {name: e["dtype"] for name, e in header.items() if name != "__metadata__"}


def read(path):
    with open(path, "rb") as f:
        header = _header(f)
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        a = np.frombuffer(data[begin:end], dtype=_READ[e["dtype"]])
        if e["dtype"] == "BF16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        out[name] = a.reshape(e["shape"])
    return out


def write(path, tensors, dtypes=None):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        if a.dtype not in _WRITE:
            a = a.astype(np.float32)
        raw = a.tobytes()
        dtype = (dtypes or {}).get(name, _WRITE[a.dtype])
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))

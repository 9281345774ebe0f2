#!/usr/bin/env python3
"""Runs Mnemo's PTX on a GPU and compares it with float64 references.

    python3 scripts/gpu/check_ptx.py CASE_DIR [--out DIR] [--mnemo-run PATH]

CASE_DIR is written by scripts/gpu/make_cases.py (PTX with the launch plan
in its `// mnemo.*` header, cases.json). For every case this loads the PTX
with CuPy, makes fresh random inputs, fills every temporary buffer with NaN
bytes, encodes every TMA tensor map buffer (`cuTensorMapEncodeTiled` through
the driver library, after the buffer it maps exists; never poisoned),
launches the kernels exactly as the plan says (grid, block, buffers,
scalars), and compares the output with a float64 numpy reference computed
here from the same inputs (test/Numerics/numpy_refs.py for attention and
RoPE). A case passes when every output is finite and max |diff| is within
its tolerance (1e-3 for attention, 1e-4 for the layers and models; relative
error 2e-2 for bf16 cases and bf16-weight models). With --mnemo-run,
every case also runs through `mnemo-run --device=cuda` (the runtime's CUDA
executor) on the same inputs, against the same reference: from the case's
.mnemo artifact when there is one (weights uploaded as plan buffers), else
from its PTX. An artifact of several kernels runs twice, replayed as a CUDA
graph and launched kernel by kernel (--cuda-graph on|off), each --repeat
times; both outputs are checked and the median latencies printed.
"""

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import cupy as cp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "Numerics"))
import numpy_refs  # noqa: E402
from rowwise import worst_row_numpy  # noqa: E402  (beside this script)


# Tensor map fields of the driver's cuTensorMapEncodeTiled: data type and
# swizzle enums by the plan's names, element bytes per data type.
TENSOR_MAP_DTYPES = {"f16": 6, "f32": 7, "bf16": 9}  # CU_TENSOR_MAP_DATA_TYPE_*
TENSOR_MAP_SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}  # bytes -> CU_TENSOR_MAP_SWIZZLE_*
TENSOR_MAP_ELEMENT_BYTES = {"f16": 2, "f32": 4, "bf16": 2}
TENSOR_MAP_BYTES = 128


def parse_tensor_map(p):
    """The map of a `mnemo.buffer N tensormap of SRC DTYPE dims D0x.. strides
    S1x.. box B0x.. swizzle BYTES bytes 128` line (p: its words): dtype, dims,
    strides (bytes, dims 1..rank-1; `-` for rank 1), box, all innermost-first,
    and swizzle in bytes."""
    fields = dict(zip(p[6::2], p[7::2]))
    if len(p) != 16 or p[3] != "of" or list(fields) != ["dims", "strides", "box", "swizzle",
                                                       "bytes"]:
        raise ValueError(f"malformed tensormap line: {' '.join(p)}")

    def sizes(word):
        return [] if fields[word] == "-" else [int(x) for x in fields[word].split("x")]
    desc = {"dtype": p[5], "dims": sizes("dims"), "strides": sizes("strides"),
            "box": sizes("box"), "swizzle": int(fields["swizzle"])}
    rank = len(desc["dims"])
    if (not 1 <= rank <= 5 or len(desc["strides"]) != rank - 1 or len(desc["box"]) != rank
            or desc["dtype"] not in TENSOR_MAP_DTYPES
            or desc["swizzle"] not in TENSOR_MAP_SWIZZLES
            or fields["bytes"] != str(TENSOR_MAP_BYTES)):
        raise ValueError(f"unsupported tensormap line: {' '.join(p)}")
    return desc


def parse_plan(text):
    """The `// mnemo.*` lines of a PTX file (one function). Buffers are
    (kind, ref, size); a tensormap's ref is its source buffer's index and its
    map description is in plan["tensormaps"][index] (parse_tensor_map)."""
    plan = {"buffers": {}, "launches": [], "outputs": [], "inputs": [], "output_names": [],
            "tensormaps": {}}
    for line in text.splitlines():
        if not line.startswith("// mnemo."):
            continue
        p = line[3:].split()
        if p[0] == "mnemo.buffer":
            kind = p[2]
            ref = None if kind == "temporary" else p[3]
            if kind == "tensormap":
                plan["tensormaps"][int(p[1])] = parse_tensor_map(p)
                ref = p[4]
            size = p[-1]
            plan["buffers"][int(p[1])] = (kind, ref, None if size == "?" else int(size))
        elif p[0] == "mnemo.launch":
            plan["launches"].append({"kernel": p[1], "grid": p[3:6], "block": p[7:10],
                                     "shared": p[11], "args": p[13:]})
        elif p[0] == "mnemo.input":
            plan["inputs"].append(p[2])
        elif p[0] == "mnemo.output":
            plan["outputs"].append(int(p[3]))
            plan["output_names"].append(p[4])
            plan.setdefault("output_dtypes", []).append(p[5])
    return plan


def round_bf16(x):
    """float32 values rounded to the nearest bf16 (even on ties), as float32."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def device_array(x, dtype):
    """The bytes a kernel reads for `x`: bf16 as its upper 16 bits."""
    if dtype == "bf16":
        return cp.asarray((round_bf16(x).view(np.uint32) >> 16).astype(np.uint16))
    if dtype == "f16":
        return cp.asarray(x.astype(np.float16))
    return cp.asarray(np.ascontiguousarray(x))


def reference(ref, inputs, case_dir):
    op = ref["op"]
    f64 = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in inputs.items()}
    if op == "attention":
        q, k = inputs["q"], inputs["k"]
        rope = ref.get("rope")
        if rope:  # at positions skv - sq + [0, sq) for Q, [0, skv) for K
            sq, skv, d = q.shape[2], k.shape[2], q.shape[3]
            for x in rope["on"]:
                y = q if x == "q" else k
                first = skv - y.shape[2]
                if rope.get("tables"):
                    y = numpy_refs.rope_tables(y, inputs["cos"][first:], inputs["sin"][first:],
                                               rope.get("interleaved", False))
                else:
                    y = numpy_refs.rope(y, inputs["pos"][first:], rope["theta"], rope.get("r", d),
                                        rope.get("interleaved", False), rope.get("scaling"))
                q, k = (y, k) if x == "q" else (q, y)
        return numpy_refs.attention(q, k, inputs["v"],
                                    causal=ref.get("causal", False), offset=ref.get("offset", 0),
                                    window=ref.get("window"), softcap=ref.get("softcap"),
                                    sink=inputs.get("sink"))
    if op == "linear":
        w = f64["w"].T if ref.get("layout", "out_in") == "out_in" else f64["w"]
        x = f64["g"] / (1.0 + np.exp(-f64["g"])) * f64["u"] if ref.get("swiglu") else f64.get("x")
        if "rms_norm" in ref:
            x0, nw = f64["x0"], f64["nw"] + (1.0 if ref["rms_norm"]["unit_offset"] else 0.0)
            x = x0 / np.sqrt((x0 ** 2).mean(axis=-1, keepdims=True) + ref["rms_norm"]["eps"]) * nw
        return x @ w + (f64["b"] if "b" in f64 else 0.0)
    if op == "rms_norm":
        x = f64["x"]
        return x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + ref["eps"]) * f64["w"]
    if op == "rope":
        x = inputs["x"]
        return numpy_refs.rope(x, inputs["pos"], ref["theta"], x.shape[-1], False,
                               ref.get("scaling"))
    if op == "swiglu":
        g = f64["g"]
        return g / (1.0 + np.exp(-g)) * f64["u"]
    if op == "embedding":
        return f64["t"][inputs["ids"]]
    if op == "add":
        return f64["a"] + f64["b"]
    if op == "stored":
        return np.load(os.path.join(case_dir, ref["file"])).astype(np.float64)
    raise ValueError(f"unknown reference {op}")


def plan_launches(module, plan, buffer_arg):
    """The plan's launches as (kernel, grid, block, args, shared bytes): kernels
    from the CuPy `module` (dynamic shared memory above 48 KiB enabled),
    buffer arguments from buffer_arg(index), scalars as numpy scalars (an f32
    as its bits). Dynamic launch sizes or scalars are refused."""
    kernels, out = {}, []
    for launch in plan["launches"]:
        name = launch["kernel"]
        if "?" in launch["grid"] + launch["block"] + [launch["shared"]]:
            raise RuntimeError(f"{name}: dynamic launch configuration")
        shared = int(launch["shared"])
        if name not in kernels:
            kernels[name] = module.get_function(name)
            if shared > 48 * 1024:
                kernels[name].max_dynamic_shared_size_bytes = shared
        args = []
        for a in launch["args"]:
            kind, value = a.split(":")
            if value == "?":
                raise RuntimeError(f"{name}: dynamic scalar argument")
            if kind == "buffer":
                args.append(buffer_arg(int(value)))
            elif kind == "f32":
                args.append(np.uint32(int(value) & 0xFFFFFFFF))
            else:
                args.append({"i64": np.int64, "i32": np.int32}[kind](int(value)))
        out.append((kernels[name], tuple(int(d) for d in launch["grid"]),
                    tuple(int(d) for d in launch["block"]), tuple(args), shared))
    return out


_driver = None


def cuda_driver():
    """The CUDA driver library (libcuda.so.1) through ctypes, loaded on first use,
    with the prototypes of the entry points used here."""
    global _driver
    if _driver is None:
        lib = ctypes.CDLL("libcuda.so.1")
        u64p, u32p = ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32)
        lib.cuTensorMapEncodeTiled.restype = ctypes.c_int
        lib.cuTensorMapEncodeTiled.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, u64p, u64p,
            u32p, u32p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.cuGetErrorName.restype = ctypes.c_int
        lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        _driver = lib
    return _driver


def tensor_map_span(desc):
    """Bytes from the mapped tensor's base address to its last element's end."""
    elem = TENSOR_MAP_ELEMENT_BYTES[desc["dtype"]]
    strides = [elem] + desc["strides"]
    return elem + sum((d - 1) * s for d, s in zip(desc["dims"], strides))


def encode_tensor_map(desc, source_ptr, source_bytes=None):
    """The 128-byte CUtensorMap of `desc` (parse_tensor_map) over the device
    address source_ptr, by cuTensorMapEncodeTiled: element strides 1,
    interleave none, L2 promotion 128B, out-of-bounds fill none (zeros). With
    source_bytes, a map reaching past the source buffer is refused."""
    if source_bytes is not None and tensor_map_span(desc) > source_bytes:
        raise RuntimeError(f"tensor map spans {tensor_map_span(desc)} bytes, its source "
                           f"has {source_bytes}")
    lib, rank = cuda_driver(), len(desc["dims"])
    dims = (ctypes.c_uint64 * rank)(*desc["dims"])
    strides = (ctypes.c_uint64 * max(rank - 1, 1))(*desc["strides"])  # unread at rank 1
    box = (ctypes.c_uint32 * rank)(*desc["box"])
    element_strides = (ctypes.c_uint32 * rank)(*([1] * rank))
    # CUtensorMap is 128 bytes, 64-byte aligned: align within a larger buffer.
    storage = (ctypes.c_uint64 * ((TENSOR_MAP_BYTES + 64) // 8))()
    address = ctypes.addressof(storage)
    address += -address % 64
    result = lib.cuTensorMapEncodeTiled(
        ctypes.c_void_p(address), TENSOR_MAP_DTYPES[desc["dtype"]], rank,
        ctypes.c_void_p(source_ptr), dims, strides, box, element_strides,
        0, TENSOR_MAP_SWIZZLES[desc["swizzle"]], 2, 0)  # interleave, swizzle, L2, OOB fill
    if result:
        name = ctypes.c_char_p()
        lib.cuGetErrorName(result, ctypes.byref(name))
        error = name.value.decode() if name.value else f"CUresult {result}"
        raise RuntimeError(f"cuTensorMapEncodeTiled failed: {error} for {desc}")
    return ctypes.string_at(address, TENSOR_MAP_BYTES)


def tensor_map_source(plan, idx):
    """(source index, map description) of tensormap buffer idx; the source must
    be an input or temporary buffer."""
    src = int(plan["buffers"][idx][1])
    if plan["buffers"].get(src, ("?",))[0] not in ("input", "temporary"):
        raise RuntimeError(f"buffer {idx}: tensor map of buffer {src}, not an input or "
                           f"temporary")
    return src, plan["tensormaps"][idx]


def run_plan(ptx_path, plan, inputs, dtypes):
    module = cp.RawModule(path=ptx_path)
    names = list(inputs)
    buffers = {}
    for idx, (kind, ref, size) in plan["buffers"].items():
        if kind == "input":
            name = names[int(ref)]
            buffers[idx] = device_array(inputs[name], dtypes.get(name, "f32"))
        elif kind == "temporary":
            if size is None:
                raise RuntimeError(f"buffer {idx} has a dynamic size")
            buffers[idx] = cp.full(size, 0xFF, dtype=cp.uint8)  # NaN poison
        elif kind != "tensormap":  # encoded below, once their sources exist
            raise RuntimeError(f"weight buffers are not supported here ({ref})")
    for idx in plan["tensormaps"]:
        src, desc = tensor_map_source(plan, idx)
        encoded = encode_tensor_map(desc, buffers[src].data.ptr, buffers[src].nbytes)
        buffers[idx] = cp.asarray(np.frombuffer(encoded, np.uint8))
    for kernel, grid, block, args, shared in plan_launches(module, plan,
                                                          buffers.__getitem__):
        kernel(grid, block, args, shared_mem=shared)
    cp.cuda.runtime.deviceSynchronize()
    return buffers[plan["outputs"][0]], len(plan["launches"])


def run_mnemo_run(tool, ptx, plan, inputs, dtypes, shape, options=()):
    """The case through the runtime's CUDA executor with extra `options`;
    returns the output (bf16 goes in and out as float32 files, f16 as
    float16) and the median latency mnemo-run printed, in ms."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [tool, ptx, "--device=cuda", "--output-dir", os.path.join(tmp, "out"), *options]
        for name, (key, array) in zip(plan["inputs"], inputs.items()):
            path = os.path.join(tmp, name + ".npy")
            np.save(path, array.astype(np.float16) if dtypes[key] == "f16" else array)
            args += ["--input", f"{name}={path}"]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"mnemo-run: {r.stderr.strip()}")
        out = np.load(os.path.join(tmp, "out", plan["output_names"][0] + ".npy"))
    latency = float(re.search(r"latency: (\S+) ms", r.stdout)[1])
    return out.astype(np.float32).reshape(shape), latency


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cases")
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--mnemo-run", help="also run every case with this mnemo-run --device=cuda")
    p.add_argument("--repeat", type=int, default=20,
                   help="runs of each model artifact per executor mode (CUDA graph, "
                        "kernel by kernel), for their median latencies")
    a = p.parse_args()
    manifest = json.load(open(os.path.join(a.cases, "cases.json")))
    print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    rng = np.random.default_rng()
    results, failed = [], 0
    for case in manifest:
        inputs = {}
        for inp in case["inputs"]:
            shape = tuple(inp["shape"])
            if "file" in inp:
                inputs[inp["name"]] = np.load(os.path.join(a.cases, inp["file"]))
            elif "ints" in inp:
                inputs[inp["name"]] = rng.integers(0, inp["ints"], size=shape).astype(np.int64)
            elif inp.get("positions"):  # a sequence's positions, at a random start
                inputs[inp["name"]] = np.arange(shape[-1], dtype=np.int64) + rng.integers(0, 5000)
            else:
                x = rng.standard_normal(shape).astype(np.float32)
                if inp.get("dtype") == "bf16":
                    x = round_bf16(x)
                elif inp.get("dtype") == "f16":
                    x = x.astype(np.float16).astype(np.float32)
                inputs[inp["name"]] = x
        dtypes = {inp["name"]: inp.get("dtype", "f32") for inp in case["inputs"]}
        row = {"name": case["name"], "tolerance": case["tolerance"]}
        try:
            ref = reference(case["reference"], inputs, a.cases)
            ptx = os.path.join(a.cases, case["ptx"])
            start = time.perf_counter()
            plan = parse_plan(open(ptx).read())
            out_buf, launches = run_plan(ptx, plan, inputs, dtypes)
            out_dtype = plan["output_dtypes"][0]
            row["seconds"] = time.perf_counter() - start
            if out_dtype == "bf16":
                bits = cp.asnumpy(out_buf.view(cp.uint16)[: ref.size]).astype(np.uint32) << 16
                out = bits.view(np.float32).reshape(ref.shape)
            elif out_dtype == "f16":
                out = cp.asnumpy(out_buf.view(cp.float16)[: ref.size]).astype(np.float32).reshape(ref.shape)
            else:
                out = cp.asnumpy(out_buf.view(cp.float32)[: ref.size]).reshape(ref.shape)
            rel_tol = case["reference"].get("rel")
            row["tolerance"] = case["tolerance"] if rel_tol is None else f"rel {rel_tol}"

            def within(y):
                """Finite, and within the case's absolute bound (every element)
                or relative bound (every row, rowwise.py)."""
                d = y.astype(np.float64) - ref
                rel, _ = worst_row_numpy(y, ref)
                bound = rel <= rel_tol if rel_tol is not None else np.abs(d).max() <= case["tolerance"]
                return bool(np.isfinite(y).all() and bound), float(np.abs(d).max()), rel

            ok, max_abs, rel = within(out)
            row.update(launches=launches, finite=bool(np.isfinite(out).all()),
                       max_abs=max_abs, rel=rel, ok=ok)
            if a.mnemo_run:
                # Models run in both executor modes, and are timed.
                model = os.path.join(a.cases, case.get("artifact", case["ptx"]))
                modes = {"graph": ["--cuda-graph", "on"], "kernels": ["--cuda-graph", "off"]} \
                    if "artifact" in case and launches > 1 else {"default": []}
                worst = 0.0
                for mode, options in modes.items():
                    if "artifact" in case:
                        options = options + ["--repeat", str(a.repeat)]
                    rt, ms = run_mnemo_run(a.mnemo_run, model, plan, inputs, dtypes,
                                           ref.shape, options)
                    rt_ok, rt_abs, _ = within(rt)
                    worst = max(worst, rt_abs)
                    row["ok"] = row["ok"] and rt_ok
                    if "artifact" in case:
                        row[f"ms_{mode}"] = ms
                row["runtime_max_abs"] = worst
        except Exception as e:  # report and go on with the next case
            row.update(ok=False, error=f"{type(e).__name__}: {e}")
        failed += not row["ok"]
        results.append(row)
    json.dump(results, open(os.path.join(a.out, "check_ptx.json"), "w"), indent=1)
    print(f"{'case':32} {'launches':>8} {'max|diff|':>10} {'row rel':>9} {'mnemo-run':>10}  result")
    for r in results:
        if "error" in r:
            print(f"{r['name']:32} {'':>8} {'':>10} {'':>9}  FAIL {r['error']}")
            continue
        rt = f"{r['runtime_max_abs']:10.2e}" if "runtime_max_abs" in r else f"{'-':>10}"
        print(f"{r['name']:32} {r['launches']:>8} {r['max_abs']:10.2e} {r['rel']:9.1e} {rt}  "
              f"{'ok' if r['ok'] else 'FAIL'}{'' if r['finite'] else ' (non-finite)'}")
    timed = [r for r in results if "ms_graph" in r]
    if timed:
        print(f"\nmodel latency through mnemo-run (median of {a.repeat} runs each, ms)")
        print(f"{'case':32} {'launches':>8} {'graph':>8} {'kernels':>8} {'speed-up':>8}")
        for r in timed:
            print(f"{r['name']:32} {r['launches']:>8} {r['ms_graph']:8.3f} "
                  f"{r['ms_kernels']:8.3f} {r['ms_kernels'] / r['ms_graph']:7.2f}x")
    print(f"check_ptx: {len(results) - failed} of {len(results)} cases pass")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

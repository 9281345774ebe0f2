#!/usr/bin/env python3
"""Runs Mnemo's GPU artifacts on a GPU and compares them with float64 references.

    python3 scripts/gpu/check_ptx.py CASE_DIR [--out DIR] [--mnemo-run PATH]

CASE_DIR is written by scripts/gpu/make_cases.py: per case an artifact
(CASE.mnemo, mnemoc --target=sm_90a|sm_80), its launch plan as JSON
(CASE.plan.json, from `mnemo-run CASE.mnemo --dump-plan`, read by plan.py's
load_plan) and an entry of cases.json. For every case this loads the PTX
that the plan locates inside the artifact with CuPy, makes fresh random
inputs, uploads every weight buffer from the artifact (or its side weights
file), fills every temporary buffer with NaN bytes, encodes every TMA
tensor map buffer (`cuTensorMapEncodeTiled` through the driver library,
after the buffer it maps exists; never poisoned), launches the kernels
exactly as the plan says (grid, block, dynamic shared memory, buffers,
scalars), and compares the output with a float64 numpy reference computed
here from the same inputs (test/Numerics/numpy_refs.py for attention and
RoPE). A plan the runtime reports as unsupported (dynamic shapes) fails
with its reason. A case passes when every output is finite and within its
tolerance: max |diff| within 1e-3 for attention, 1e-4 for the layers and
models; or, for bf16 cases and bf16-weight models, every row's relative
error within 2e-2 (rowwise.py). With --mnemo-run, every case's artifact
also runs through `mnemo-run --device=cuda` (the runtime's CUDA executor)
on the same inputs, against the same reference. An artifact of several
kernels runs twice, replayed as a CUDA graph and launched kernel by kernel
(--cuda-graph on|off), each --repeat times; both outputs are checked and
the median latencies printed.
"""

import argparse
import atexit
import ctypes
import hashlib
import json
import os
import re
import shutil
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
from plan import (TENSOR_MAP_BYTES, TENSOR_MAP_DTYPES, TENSOR_MAP_SWIZZLES,  # noqa: E402
                  buffer_weight_bytes, gpu_binary, load_plan, ptx_text,
                  tensor_map_source, tensor_map_span)


def round_bf16(x):
    """float32 values rounded to the nearest bf16 (even on ties), as float32."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


NUMPY_DTYPES = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32}


def device_array(x, dtype):
    """The bytes a kernel reads for `x` as a tensor of `dtype` (the plan's
    name): bf16 as its upper 16 bits."""
    if dtype == "bf16":
        return cp.asarray((round_bf16(x).view(np.uint32) >> 16).astype(np.uint16))
    if dtype == "f16":
        return cp.asarray(x.astype(np.float16))
    return cp.asarray(np.ascontiguousarray(x, NUMPY_DTYPES.get(dtype)))


def reference(ref, inputs, case_dir):
    op = ref["op"]
    f64 = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in inputs.items()}
    if op == "attention":
        q, k = inputs["q"], inputs["k"]
        rope = ref.get("rope")
        if rope:  # at positions skv - sq + [0, sq) for Q, [0, skv) for K
            skv, d = k.shape[2], q.shape[3]
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
        out = numpy_refs.attention(q, k, inputs["v"],
                                   causal=ref.get("causal", False), offset=ref.get("offset", 0),
                                   window=ref.get("window"), softcap=ref.get("softcap"),
                                   mask=inputs.get("mask"), sink=inputs.get("sink"))
        if ref.get("mask_lowest"):
            # In f32 a score plus f32's lowest is that lowest: a row masked
            # whole so (every key visible: no causal, window or sink) is
            # the mean of V, as the op computes it in f32.
            v = inputs["v"].astype(np.float64)
            whole = np.all(np.broadcast_to(inputs["mask"], out.shape[:-1] + (k.shape[2],))
                           == np.finfo(np.float32).min, axis=-1)
            mean = np.repeat(v.mean(axis=2, keepdims=True), out.shape[1] // v.shape[1], axis=1)
            out = np.where(whole[..., None], mean, out)
        return out
    if op == "linear":
        w = f64["w"].T if ref.get("layout", "out_in") == "out_in" else f64["w"]
        x = f64["g"] / (1.0 + np.exp(-f64["g"])) * f64["u"] if ref.get("swiglu") else f64.get("x")
        if "rms_norm" in ref:
            x0, nw = f64["x0"], f64["nw"] + (1.0 if ref["rms_norm"]["unit_offset"] else 0.0)
            x = x0 / np.sqrt((x0 ** 2).mean(axis=-1, keepdims=True) + ref["rms_norm"]["eps"]) * nw
        return x @ w + (f64["b"] if "b" in f64 else 0.0) + (f64["res"] if "res" in f64 else 0.0)
    if op == "grouped_linear":  # blocks of rows through their group's [N, K] weight
        x, w, groups = f64["x"], f64["w"], inputs["g"]
        y = np.zeros((x.shape[0], w.shape[1]))
        for r in range(x.shape[0]):
            e = groups[r // ref["rows"]]
            if 0 <= e < w.shape[0]:
                y[r] = w[e] @ x[r]
        return y
    if op == "rms_norm":
        x = f64["x"]
        return x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + ref["eps"]) * f64["w"]
    if op == "rope":
        x = inputs["x"]
        return numpy_refs.rope(x, inputs["pos"], ref["theta"], x.shape[-1], False,
                               ref.get("scaling"))
    if op == "einsum":
        return np.einsum(ref["spec"], f64["x"], f64["w"])
    if op == "max":
        return f64["x"].max(axis=-1)
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


_module_dir = None
# The driver's codes for an image it cannot load (CUDA_ERROR_INVALID_IMAGE,
# _NO_BINARY_FOR_GPU, _UNSUPPORTED_PTX_VERSION): the PTX is loaded instead,
# as the runtime does.
_IMAGE_REFUSED = (200, 209, 222)


def _module_file(data, suffix):
    """`data` in a private temporary folder, removed at exit, under a name
    made of its hash (CuPy caches modules by path, so two different
    modules never share one)."""
    global _module_dir
    if _module_dir is None:
        _module_dir = tempfile.mkdtemp(prefix="mnemo-ptx-")
        atexit.register(shutil.rmtree, _module_dir, True)
    path = os.path.join(_module_dir, hashlib.sha256(data).hexdigest()[:32] + suffix)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)
    return path


def load_module(plan):
    """The CuPy module of the plan's artifact: its cubin for this device's
    chip when mnemoc made one (plan.py's gpu_binary; no compile of the PTX
    by the driver), else, or when the driver refuses that image, the PTX
    (ptx_text). CuPy loads both from a file (`RawModule(code=...)` compiles
    CUDA C++ with NVRTC)."""
    major, minor = divmod(int(cp.cuda.Device().compute_capability), 10)
    binary = gpu_binary(plan, (major, minor))
    if binary is not None:
        module = cp.RawModule(path=_module_file(binary, ".cubin"))
        try:
            # The file is loaded when a kernel is first asked for.
            if plan["launches"]:
                module.get_function(plan["launches"][0]["kernel"])
            return module
        except cp.cuda.driver.CUDADriverError as e:
            if e.status not in _IMAGE_REFUSED:
                raise
    return cp.RawModule(path=_module_file(ptx_text(plan).encode(), ".ptx"))


def plan_launches(module, plan, buffer_arg):
    """The plan's launches as (kernel, grid, block, args, shared bytes): kernels
    from the CuPy `module` (dynamic shared memory above 48 KiB enabled, up to
    the most any launch of the kernel asks, with all of L1 as shared memory), buffer arguments from
    buffer_arg(index), scalars as numpy scalars (an f32 as its bits)."""
    kernels, opted, out = {}, {}, []
    for launch in plan["launches"]:
        name, shared = launch["kernel"], launch["shared_bytes"]
        if name not in kernels:
            kernels[name] = module.get_function(name)
        if shared > max(48 * 1024, opted.get(name, 0)):
            kernels[name].max_dynamic_shared_size_bytes = shared
            # As the runtime's executor: all of L1 as shared memory, so
            # that the blocks a decode kernel's split count assumes fit.
            kernels[name].preferred_shared_memory_carveout = 100
            opted[name] = shared
        args = []
        for arg in launch["args"]:
            (kind, value), = arg.items()
            if kind == "buffer":
                args.append(buffer_arg(value))
            elif kind == "f32":
                args.append(np.uint32(value & 0xFFFFFFFF))
            else:
                args.append({"i64": np.int64, "i32": np.int32}[kind](value))
        out.append((kernels[name], tuple(launch["grid"]), tuple(launch["block"]), tuple(args),
                    shared))
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


def encode_tensor_map(desc, source_ptr, source_bytes=None):
    """The 128-byte CUtensorMap of `desc` (plan.py's tensor_map_source) over the device
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


def upload_buffers(plan, inputs, fill=0xFF):
    """Device arrays of the plan's buffers, {number: CuPy array}: the inputs
    (numpy arrays in the function's input order) in the plan's dtypes, each
    weight from the artifact or its side file, the temporaries filled with
    `fill` bytes (0xFF: NaN), and the tensor maps encoded over their sources
    once those exist."""
    if len(inputs) != len(plan["inputs"]):
        raise RuntimeError(f"{len(inputs)} inputs for a function of {len(plan['inputs'])}")
    buffers = {}
    for idx, buf in enumerate(plan["buffers"]):
        kind = buf["kind"]
        if kind == "input":
            sig, x = plan["inputs"][buf["input"]], inputs[buf["input"]]
            if tuple(sig["shape"]) != x.shape:
                raise RuntimeError(f"input {buf['input']} ({sig['name']}): the plan's shape "
                                   f"is {sig['shape']}, the case's {list(x.shape)}")
            buffers[idx] = device_array(x, sig["dtype"])
            if buffers[idx].nbytes != buf["bytes"]:
                raise RuntimeError(f"buffer {idx}: the plan says {buf['bytes']} bytes, input "
                                   f"{buf['input']} has {buffers[idx].nbytes}")
        elif kind == "weight":
            buffers[idx] = cp.asarray(np.frombuffer(buffer_weight_bytes(plan, idx), np.uint8))
        elif kind == "temporary":
            buffers[idx] = cp.full(max(buf["bytes"], 1), fill, dtype=cp.uint8)
    for idx in plan["tensor_maps"]:
        src, desc = tensor_map_source(plan, idx)
        encoded = encode_tensor_map(desc, buffers[src].data.ptr, buffers[src].nbytes)
        buffers[idx] = cp.asarray(np.frombuffer(encoded, np.uint8))
    return buffers


def run_plan(plan, inputs):
    """Runs the plan (load_plan) once with CuPy on `inputs` (numpy arrays in
    the function's input order), temporaries poisoned; returns the first
    output's buffer and the number of launches."""
    module = load_module(plan)
    buffers = upload_buffers(plan, inputs)
    for kernel, grid, block, args, shared in plan_launches(module, plan,
                                                          buffers.__getitem__):
        kernel(grid, block, args, shared_mem=shared)
    cp.cuda.runtime.deviceSynchronize()
    return buffers[plan["output_buffers"][0]], len(plan["launches"])


def run_mnemo_run(tool, artifact, plan, inputs, shape, options=()):
    """The artifact's function (the plan's) through the runtime's CUDA
    executor with extra `options`, on `inputs` (numpy arrays in the
    function's input order); returns the first output (bf16 goes in and out
    as float32 files, f16 as float16) and the median latency mnemo-run
    printed, in ms."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [tool, artifact, "--device=cuda", "--function", plan["function"],
                "--output-dir", os.path.join(tmp, "out"), *options]
        for i, (sig, array) in enumerate(zip(plan["inputs"], inputs)):
            path = os.path.join(tmp, f"input{i}.npy")
            np.save(path, array.astype(np.float16) if sig["dtype"] == "f16" else array)
            args += ["--input", f"{sig['name']}={path}"]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"mnemo-run: {r.stderr.strip()}")
        out = np.load(os.path.join(tmp, "out", plan["outputs"][0]["name"] + ".npy"))
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
                if inp.get("additive_mask"):  # a fifth masked, the first query row all
                    masked = -np.inf if inp["additive_mask"] == "-inf" else \
                        np.finfo(np.float32).min
                    x[rng.random(shape) < 0.2] = masked
                    if len(shape) >= 2 and shape[-2] > 1:
                        x[..., 0, :] = masked
                if inp.get("dtype") == "bf16":
                    x = round_bf16(x)
                elif inp.get("dtype") == "f16":
                    x = x.astype(np.float16).astype(np.float32)
                inputs[inp["name"]] = x
        row = {"name": case["name"], "tolerance": case["tolerance"]}
        try:
            if "plan" not in case:
                raise RuntimeError("no plan JSON in cases.json (written by an older "
                                   "make_cases.py?)")
            ref = reference(case["reference"], inputs, a.cases)
            start = time.perf_counter()
            plan = load_plan(os.path.join(a.cases, case["plan"]))  # refuses "unsupported"
            out_buf, launches = run_plan(plan, list(inputs.values()))
            out_dtype = plan["outputs"][0]["dtype"]
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
                # Artifacts of several kernels run in both executor modes;
                # every artifact is timed.
                artifact = os.path.join(a.cases, case["artifact"])
                modes = {"graph": ["--cuda-graph", "on"], "kernels": ["--cuda-graph", "off"]} \
                    if launches > 1 else {"default": []}
                worst = 0.0
                for mode, options in modes.items():
                    rt, ms = run_mnemo_run(a.mnemo_run, artifact, plan, list(inputs.values()),
                                           ref.shape, options + ["--repeat", str(a.repeat)])
                    rt_ok, rt_abs, _ = within(rt)
                    worst = max(worst, rt_abs)
                    row["ok"] = row["ok"] and rt_ok
                    row[f"ms_{mode}"] = ms
                row["runtime_max_abs"] = worst
        except Exception as e:  # report and go on with the next case
            row.update(ok=False, error=f"{type(e).__name__}: {e}")
        failed += not row["ok"]
        results.append(row)
    os.makedirs(a.out, exist_ok=True)
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

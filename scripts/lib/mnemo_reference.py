"""Runs MLIR functions through Mnemo's host reference path.

The reference path is `mnemo-opt --mnemo-reference-pipeline` (the reference
decomposition of every mnemo op, bufferized and lowered to LLVM) executed by
`mlir-runner`. Results come back bit-exact: each is bitcast to integers and
printed with printMemrefI32/I64, then reinterpreted here.

Used by the numeric tests (test/Numerics) and by scripts/demo.sh.
"""

import os
import re
import subprocess

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLIR_TYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    np.dtype(np.float64): "f64",
    np.dtype(np.int64): "i64",
    np.dtype(np.int32): "i32",
    np.dtype(np.int8): "i8",
}
_BITS = {"f32": "i32", "f16": "i16", "f64": "i64", "i32": "i32", "i64": "i64"}
_DECL = ("func.func private @printMemrefI32(memref<*xi32>) "
         "attributes { llvm.emit_c_interface }\n"
         "func.func private @printMemrefI64(memref<*xi64>) "
         "attributes { llvm.emit_c_interface }\n")


class ReferenceError(RuntimeError):
    pass


def tensor_type(shape, elem):
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{elem}>" if dims else f"tensor<{elem}>"


def dense(array):
    """An exact `dense<"0x...">` literal (little-endian raw bytes)."""
    data = np.ascontiguousarray(array)
    return f'dense<"0x{data.tobytes().hex().upper()}">'


def print_bits(value, shape, dtype, tag):
    """MLIR lines printing the raw bits of float tensor `value` of `shape`
    (ints, or "?" for dynamic dims) and numpy `dtype`; `tag` keeps SSA names
    unique."""
    elem = MLIR_TYPES[np.dtype(dtype)]
    dims = []
    for i, d in enumerate(shape):
        if d == "?":
            dims += [f"  %{tag}_c{i} = arith.constant {i} : index",
                     f"  %{tag}_d{i} = tensor.dim {value}, %{tag}_c{i} : "
                     f"{tensor_type(shape, elem)}"]
    dyn = ", ".join(f"%{tag}_d{i}" for i, d in enumerate(shape) if d == "?")
    bits = _BITS[elem]
    wide = "i64" if bits == "i64" else "i32"
    rank = len(shape)
    ident = ", ".join(f"d{i}" for i in range(rank))
    iters = ", ".join(['"parallel"'] * rank)
    maps = f"[affine_map<({ident}) -> ({ident})>, affine_map<({ident}) -> ({ident})>]"
    src, wtype = tensor_type(shape, elem), tensor_type(shape, wide)
    if bits == wide:
        body = [f"    %{tag}_b = arith.bitcast %{tag}_in : {elem} to {wide}"]
    else:
        body = [f"    %{tag}_n = arith.bitcast %{tag}_in : {elem} to {bits}",
                f"    %{tag}_b = arith.extui %{tag}_n : {bits} to {wide}"]
    mtype = wtype.replace("tensor<", "memref<")
    fn = "printMemrefI64" if wide == "i64" else "printMemrefI32"
    return dims + [
        f"  %{tag}_init = tensor.empty({dyn}) : {wtype}",
        f"  %{tag}_bits = linalg.generic {{indexing_maps = {maps}, "
        f"iterator_types = [{iters}]}} ins({value} : {src}) "
        f"outs(%{tag}_init : {wtype}) {{",
        f"  ^bb0(%{tag}_in: {elem}, %{tag}_out: {wide}):",
        *body,
        f"    linalg.yield %{tag}_b : {wide}",
        f"  }} -> {wtype}",
        f"  %{tag}_buf = bufferization.to_buffer %{tag}_bits : {wtype} to {mtype}",
        f"  %{tag}_unranked = memref.cast %{tag}_buf : {mtype} to memref<*x{wide}>",
        f"  call @{fn}(%{tag}_unranked) : (memref<*x{wide}>) -> ()",
    ]


def decode(ints, dtype, shape):
    """Reinterprets printed integers as `dtype` values of `shape`."""
    ints = np.array(ints, dtype=np.int64)
    dtype = np.dtype(dtype)
    unsigned = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
    return ints.astype(unsigned).view(dtype).reshape(shape)


def _tool(env, default):
    return os.environ.get(env, default)


def _run(cmd, stdin):
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ReferenceError(f"{os.path.basename(cmd[0])} failed "
                             f"({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def execute(module_text, passes=""):
    """Lowers and runs a module whose @main prints with print_bits; returns
    (sizes, integers) of each printed tensor, in order. `passes` (a textual
    pipeline nested in builtin.module) runs before the reference pipeline,
    e.g. "func.func(mnemo-tile-attention)" to execute the tiled form."""
    tools = _tool("MNEMO_TOOLS_DIR", os.path.join(ROOT, "build", "bin"))
    libdir = _tool("MLIR_LIB_DIR", "/usr/lib/llvm-22/lib")
    runner = _tool("MLIR_RUNNER", "/usr/lib/llvm-22/bin/mlir-runner")
    pipeline = ",".join(p for p in (passes, "mnemo-reference-pipeline") if p)
    llvm_ir = _run([os.path.join(tools, "mnemo-opt"), "-",
                    f"--pass-pipeline=builtin.module({pipeline})"],
                   module_text + _DECL)
    libs = ",".join(os.path.join(libdir, l) for l in
                    ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    out = _run([runner, "-", "-e", "main", "-entry-point-result=void",
                f"-shared-libs={libs}"], llvm_ir)
    results = []
    for block in out.split("Unranked Memref")[1:]:
        header, data = block.split("data =", 1)
        sizes = re.search(r"sizes = \[([^\]]*)\]", header).group(1)
        results.append(([int(x) for x in sizes.split(",") if x.strip()],
                         [int(x) for x in re.findall(r"-?\d+", data)]))
    return results

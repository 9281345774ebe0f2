"""Runs mnemo ops through the host reference path and compares with numpy.

A test builds `Case`s (an MLIR snippet computing `%result` from named
inputs, the numpy inputs, and the expected output computed independently in
numpy), then calls `run_cases`. All cases go into one module whose `@main`
prints each result's raw bits (printMemrefI32/I64 of a bitcast, so nothing is
lost to decimal printing); the module is lowered with
`mnemo-opt --mnemo-reference-pipeline` and executed with `mlir-runner`.
"""

import os
import re
import subprocess
import sys
import tempfile

import numpy as np

_MLIR_TYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    np.dtype(np.float64): "f64",
    np.dtype(np.int64): "i64",
    np.dtype(np.int32): "i32",
}
_BITS = {"f32": "i32", "f16": "i16", "f64": "i64"}


def tensor_type(shape, elem):
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{elem}>" if dims else f"tensor<{elem}>"


def dense(array):
    """An exact `dense<"0x...">` literal (little-endian raw bytes)."""
    data = np.ascontiguousarray(array)
    return f'dense<"0x{data.tobytes().hex().upper()}">'


class Case:
    """One op application.

    body: MLIR lines that define `%result` from `%<name>` of each input;
      `{T:name}` expands to the type of input `name`, `{R}` to the result type.
    inputs: ordered dict name -> numpy array.
    expected: numpy array (float64 is fine); result dtype given by `dtype`.
    dynamic: input name -> list of dims to make dynamic with tensor.cast;
      `result_dynamic` lists the result dims `{R}` leaves dynamic.
    """

    def __init__(self, name, body, inputs, expected, dtype=np.float32,
                 atol=1e-5, rtol=0.0, dynamic=None, result_dynamic=()):
        self.name = name
        self.body = body
        self.inputs = inputs
        self.expected = np.asarray(expected, dtype=np.float64)
        self.dtype = np.dtype(dtype)
        self.atol = atol
        self.rtol = rtol
        self.dynamic = dynamic or {}
        self.result_dynamic = list(result_dynamic)

    def result_type(self, dynamic=False):
        shape = ["?" if dynamic and i in self.result_dynamic else d
                 for i, d in enumerate(self.expected.shape)]
        return tensor_type(shape, _MLIR_TYPES[self.dtype])

    def input_type(self, name):
        arr = self.inputs[name]
        shape = ["?" if i in self.dynamic.get(name, []) else d
                 for i, d in enumerate(arr.shape)]
        return tensor_type(shape, _MLIR_TYPES[arr.dtype])

    def function(self, index):
        lines = [f"func.func @case{index}() {{"]
        for name, arr in self.inputs.items():
            static = tensor_type(arr.shape, _MLIR_TYPES[arr.dtype])
            lines.append(f"  %{name}_c = arith.constant {dense(arr)} : {static}")
            if name in self.dynamic:
                lines.append(f"  %{name} = tensor.cast %{name}_c : {static} to "
                             f"{self.input_type(name)}")
            else:
                lines.append(f"  %{name} = tensor.cast %{name}_c : {static} to "
                             f"{static}")
        body = self.body
        for name in self.inputs:
            body = body.replace("{T:" + name + "}", self.input_type(name))
        body = body.replace("{R}", self.result_type(dynamic=True))
        lines += ["  " + l for l in body.strip().splitlines()]
        lines.append(f"  %result_static = tensor.cast %result : "
                     f"{self.result_type(dynamic=True)} to {self.result_type()}")
        elem = _MLIR_TYPES[self.dtype]
        bits = _BITS[elem]
        rtype = self.result_type()
        btype = tensor_type(self.expected.shape, bits)
        rank = self.expected.ndim
        ident = ", ".join(f"d{i}" for i in range(rank))
        iters = ", ".join(['"parallel"'] * rank)
        lines += [
            f"  %bits_init = tensor.empty() : {btype}",
            f"  %bits = linalg.generic {{indexing_maps = "
            f"[affine_map<({ident}) -> ({ident})>, affine_map<({ident}) -> ({ident})>], "
            f"iterator_types = [{iters}]}} "
            f"ins(%result_static : {rtype}) outs(%bits_init : {btype}) {{",
            f"  ^bb0(%bits_in: {elem}, %bits_out: {bits}):",
            f"    %bitcast = arith.bitcast %bits_in : {elem} to {bits}",
            f"    linalg.yield %bitcast : {bits}",
            f"  }} -> {btype}",
        ]
        wide = "i64" if bits == "i64" else "i32"
        if bits == "i16":
            lines += [
                f"  %wide_init = tensor.empty() : {tensor_type(self.expected.shape, 'i32')}",
                f"  %wide = linalg.generic {{indexing_maps = "
                f"[affine_map<({ident}) -> ({ident})>, affine_map<({ident}) -> ({ident})>], "
                f"iterator_types = [{iters}]}} "
                f"ins(%bits : {btype}) outs(%wide_init : {tensor_type(self.expected.shape, 'i32')}) {{",
                f"  ^bb0(%wide_in: i16, %wide_out: i32):",
                f"    %widened = arith.extui %wide_in : i16 to i32",
                f"    linalg.yield %widened : i32",
                f"  }} -> {tensor_type(self.expected.shape, 'i32')}",
            ]
            out, otype = "%wide", tensor_type(self.expected.shape, "i32")
        else:
            out, otype = "%bits", btype
        mtype = otype.replace("tensor<", "memref<")
        fn = "printMemrefI64" if wide == "i64" else "printMemrefI32"
        lines += [
            f"  %buf = bufferization.to_buffer {out} : {otype} to {mtype}",
            f"  %unranked = memref.cast %buf : {mtype} to memref<*x{wide}>",
            f"  call @{fn}(%unranked) : (memref<*x{wide}>) -> ()",
            "  return",
            "}",
        ]
        return "\n".join(lines)

    def decode(self, ints):
        ints = np.array(ints, dtype=np.int64)
        if self.dtype == np.float32:
            raw = ints.astype(np.uint32).view(np.float32)
        elif self.dtype == np.float16:
            raw = ints.astype(np.uint16).view(np.float16)
        else:
            raw = ints.astype(np.uint64).view(np.float64)
        return raw.reshape(self.expected.shape).astype(np.float64)


def build_module(cases):
    parts = [c.function(i) for i, c in enumerate(cases)]
    calls = "\n".join(f"  call @case{i}() : () -> ()" for i in range(len(cases)))
    parts.append("func.func @main() {\n" + calls + "\n  return\n}")
    parts.append("func.func private @printMemrefI32(memref<*xi32>) "
                 "attributes { llvm.emit_c_interface }")
    parts.append("func.func private @printMemrefI64(memref<*xi64>) "
                 "attributes { llvm.emit_c_interface }")
    return "\n\n".join(parts) + "\n"


def _run(cmd, stdin=None):
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}")
    return proc.stdout


def execute(module_text):
    tools = os.environ["MNEMO_TOOLS_DIR"]
    libdir = os.environ["MLIR_LIB_DIR"]
    llvm_ir = _run([os.path.join(tools, "mnemo-opt"), "-",
                    "--mnemo-reference-pipeline"], stdin=module_text)
    libs = ",".join(os.path.join(libdir, l) for l in
                    ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    return _run([os.environ["MLIR_RUNNER"], "-", "-e", "main",
                 "-entry-point-result=void", f"-shared-libs={libs}"],
                stdin=llvm_ir)


def parse_outputs(text):
    blocks = text.split("Unranked Memref")[1:]
    results = []
    for block in blocks:
        data = block.split("data =", 1)[1]
        results.append([int(x) for x in re.findall(r"-?\d+", data)])
    return results


def run_cases(suite, cases):
    """Runs the cases, prints one line each, exits non-zero on any failure."""
    module = build_module(cases)
    if os.environ.get("MNEMO_NUMERICS_KEEP"):
        with open(os.environ["MNEMO_NUMERICS_KEEP"], "w") as f:
            f.write(module)
    outputs = parse_outputs(execute(module))
    if len(outputs) != len(cases):
        raise SystemExit(f"expected {len(cases)} results, got {len(outputs)}")
    failures = 0
    for case, ints in zip(cases, outputs):
        got = case.decode(ints)
        bad = ~np.isfinite(got)
        err = np.abs(got - case.expected)
        limit = case.atol + case.rtol * np.abs(case.expected)
        ok = not bad.any() and bool((err <= limit).all())
        worst = float(err.max()) if err.size else 0.0
        print(f"{suite}/{case.name}: max|diff| = {worst:.3g} "
              f"(atol {case.atol:g}) {'ok' if ok else 'FAIL'}")
        failures += not ok
    passed = len(cases) - failures
    print(f"{suite}: {passed} of {len(cases)} cases passed")
    if failures:
        raise SystemExit(1)


def rng(seed):
    return np.random.default_rng(seed)

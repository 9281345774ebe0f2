"""Runs mnemo ops through the host reference path and compares with numpy.

A test builds `Case`s (an MLIR snippet computing `%result` from named
inputs, the numpy inputs, and the expected output computed independently in
numpy), then calls `run_cases`. All cases go into one module whose `@main`
prints each result's raw bits (printMemrefI32/I64 of a bitcast, so nothing is
lost to decimal printing); the module is lowered with
`mnemo-opt --mnemo-reference-pipeline` and executed with `mlir-runner`.
"""

import os

import numpy as np

from mnemo_reference import (MLIR_TYPES as _MLIR_TYPES, ReferenceError, decode,
                             dense, execute, print_bits, tensor_type)


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
        lines += print_bits("%result_static", self.expected.shape, self.dtype,
                            "out")
        lines += ["  return", "}"]
        return "\n".join(lines)

    def decode(self, ints):
        return decode(ints, self.dtype, self.expected.shape).astype(np.float64)


def build_module(cases):
    parts = [c.function(i) for i, c in enumerate(cases)]
    calls = "\n".join(f"  call @case{i}() : () -> ()" for i in range(len(cases)))
    parts.append("func.func @main() {\n" + calls + "\n  return\n}")
    return "\n\n".join(parts) + "\n"


def run_cases(suite, cases, passes=""):
    """Runs the cases (after the optional `passes`, see execute), prints one
    line each, exits non-zero on any failure."""
    module = build_module(cases)
    if os.environ.get("MNEMO_NUMERICS_KEEP"):
        with open(os.environ["MNEMO_NUMERICS_KEEP"], "w") as f:
            f.write(module)
    try:
        outputs = execute(module, passes)
    except ReferenceError as e:
        raise SystemExit(str(e))
    if len(outputs) != len(cases):
        raise SystemExit(f"expected {len(cases)} results, got {len(outputs)}")
    failures = 0
    for case, (_, ints) in zip(cases, outputs):
        got = case.decode(ints)
        # A non-finite result (a masked score's -inf) must be the expected
        # one exactly.
        same = got == case.expected
        bad = ~np.isfinite(got) & ~same
        with np.errstate(invalid="ignore"):
            err = np.where(same, 0.0, np.abs(got - case.expected))
            limit = case.atol + case.rtol * np.abs(case.expected)
        ok = not bad.any() and bool((same | (err <= limit)).all())
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

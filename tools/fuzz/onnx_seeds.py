"""Writes the seed corpus of the ONNX fuzz target: self-contained models
(initializers inline, so that mutations reach the importer instead of
stopping at a missing external file).

Usage: onnx_seeds.py OUT_DIR [--with-exports]

  - every ONNX model of the importer's tests (test/Frontend/ONNX) whose
    initializers, inlined, keep it under 64 KiB: the conformance cases of
    Attention-23/24, the contrib ops, the importer's error models;
  - one tiny model per elementwise, reduction and shape operator that those
    do not cover, so that every handler has a seed;
  - with --with-exports, the reference export of llama_gqa with its weights
    inlined (1.7 MiB): the raising of attention, RoPE, RMSNorm and SwiGLU as
    exporters write them. Slower to run; for long runs (scripts/fuzz.sh).
"""

import argparse
import hashlib
import os
import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIMIT = 64 * 1024


def tiny_models():
    """One small model per operator without a seed among the tests'."""
    f = TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", f, ["batch", 3, 4])
    y = helper.make_tensor_value_info("y", f, ["batch", 3, 4])
    out = helper.make_tensor_value_info("out", f, None)

    def model(name, nodes, inputs, initializers=(), opset=18, domain=None):
        graph = helper.make_graph(nodes, name, inputs, [out],
                                  initializer=list(initializers))
        opsets = [helper.make_opsetid("", opset)]
        if domain:
            opsets.append(helper.make_opsetid(domain, 1))
        m = helper.make_model(graph, opset_imports=opsets)
        m.ir_version = 8
        return name, m

    for op in ["Abs", "Erf", "Exp", "Log", "Neg", "Reciprocal", "Relu",
               "Sigmoid", "Sqrt", "Tanh", "Cos", "Sin", "Identity"]:
        yield model(op, [helper.make_node(op, ["x"], ["out"])], [x])
    for op in ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]:
        yield model(op, [helper.make_node(op, ["x", "y"], ["out"])], [x, y])
    for op in ["Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Equal"]:
        yield model(op, [helper.make_node(op, ["x", "y"], ["c"]),
                         helper.make_node("Cast", ["c"], ["out"], to=f)],
                    [x, y])
    for op in ["And", "Or", "Xor"]:
        yield model(op, [helper.make_node("Less", ["x", "y"], ["a"]),
                         helper.make_node("Greater", ["x", "y"], ["b"]),
                         helper.make_node(op, ["a", "b"], ["c"]),
                         helper.make_node("Cast", ["c"], ["out"], to=f)],
                    [x, y])
    yield model("Gelu", [helper.make_node("Gelu", ["x"], ["out"],
                                          approximate="tanh")], [x], opset=20)
    axes = numpy_helper.from_array(np.array([-1], np.int64), "axes")
    for op in ["ReduceSum", "ReduceMean", "ReduceMax"]:
        yield model(op, [helper.make_node(op, ["x", "axes"], ["out"],
                                          keepdims=1)], [x], [axes])
    w = numpy_helper.from_array(
        np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5), "w")
    c = numpy_helper.from_array(np.ones(5, np.float32), "c")
    x2 = helper.make_tensor_value_info("x", f, ["batch", 4])
    yield model("Gemm", [helper.make_node("Gemm", ["x", "w", "c"], ["out"],
                                          alpha=0.5, beta=2.0)],
                [x2], [w, c])
    yield model("Flatten", [helper.make_node("Flatten", ["x"], ["out"],
                                             axis=1)], [x])
    yield model("Trilu", [helper.make_node("Trilu", ["x"], ["out"],
                                           upper=0)], [x])
    scale = numpy_helper.from_array(np.full(4, 0.5, np.float32), "scale")
    bias = numpy_helper.from_array(np.zeros(4, np.float32), "bias")
    yield model("LayerNormalization",
                [helper.make_node("LayerNormalization", ["x", "scale", "bias"],
                                  ["out"], axis=-1, epsilon=1e-5)],
                [x], [scale, bias])
    yield model("Softmax", [helper.make_node("Softmax", ["x"], ["out"],
                                             axis=-1)], [x])
    yield model("CumSum", [helper.make_node("CumSum", ["x", "axis"], ["out"])],
                [x], [numpy_helper.from_array(np.array(2, np.int64), "axis")])


def inlined(path):
    """The model at `path` with its external data read in, or None."""
    try:
        m = onnx.load(str(path), load_external_data=True)
    except Exception:  # A deliberately broken test model: as it is.
        return path.read_bytes()
    for t in m.graph.initializer:
        if t.data_location == TensorProto.EXTERNAL:
            return None  # load() left it external: unreadable.
    return m.SerializeToString()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--with-exports", action="store_true")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def write(data):
        name = hashlib.sha1(data).hexdigest()[:16] + ".onnx"
        (out / name).write_bytes(data)

    count = 0
    tests = ROOT / "test" / "Frontend" / "ONNX"
    for path in sorted(tests.rglob("*.onnx")):
        data = inlined(path) if os.path.getsize(path) <= LIMIT else None
        if data is not None and len(data) <= LIMIT:
            write(data)
            count += 1
    for _, m in tiny_models():
        write(m.SerializeToString())
        count += 1
    if args.with_exports:
        export = tests / "Inputs" / "refs_public" / "llama_gqa" / "model.onnx"
        write(inlined(export))
        count += 1
    print(f"{count} seeds in {out}")


if __name__ == "__main__":
    main()

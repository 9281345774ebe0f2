"""Writes the small ONNX models of the importer's tests into a directory.

Usage: make_models.py OUT_DIR
  small.onnx         x[batch, 4] + w, then Softmax; batch is a dim_param
  not_onnx.onnx      a text file
  truncated.onnx     the first half of small.onnx
  unknown_op.onnx    a node of an operator nobody implements
  missing_data.onnx  an initializer in an external file that does not exist
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def main(out):
    os.makedirs(out, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    w = numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
    small = model([helper.make_node("Add", ["x", "w"], ["s"], name="node_add"),
                   helper.make_node("Softmax", ["s"], ["y"], name="node_softmax")],
                  [x], [y], [w])
    data = small.SerializeToString()
    with open(os.path.join(out, "small.onnx"), "wb") as f:
        f.write(data)
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[:len(data) // 2])
    with open(os.path.join(out, "not_onnx.onnx"), "w") as f:
        f.write("this is not a protobuf\n")

    unknown = model([helper.make_node("Frobnicate", ["x"], ["y"],
                                      name="node_frob")], [x], [y])
    onnx.save(unknown, os.path.join(out, "unknown_op.onnx"))

    ext = numpy_helper.from_array(np.zeros(4, dtype=np.float32), "w")
    ext.ClearField("raw_data")
    ext.data_location = TensorProto.EXTERNAL
    for key, value in [("location", "missing.onnx.data"), ("offset", "0"),
                       ("length", "16")]:
        entry = ext.external_data.add()
        entry.key, entry.value = key, value
    missing = model([helper.make_node("Add", ["x", "w"], ["y"],
                                      name="node_add")], [x], [y], [ext])
    with open(os.path.join(out, "missing_data.onnx"), "wb") as f:
        f.write(missing.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])

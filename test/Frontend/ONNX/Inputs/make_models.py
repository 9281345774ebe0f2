"""Writes the small ONNX models of the importer's tests into a directory.

Usage: make_models.py OUT_DIR
  small.onnx         x[batch, 4] + w, then Softmax; batch is a dim_param
  not_onnx.onnx      a text file
  truncated.onnx     the first half of small.onnx
  unknown_op.onnx    a node of an operator nobody implements
  missing_data.onnx  an initializer in an external file that does not exist
  short_data.onnx    an initializer past the end of its external file
  opset12.onnx       an ai.onnx opset below the supported 13..25
  type_mismatch.onnx Add of a float and an int64 tensor
  shape_mismatch.onnx MatMul of [batch, 4] by [3, 2]
  unbound_dim.onnx   an output declared [batch, 5] computed as [batch, 4]
  checker.onnx       Softmax with a float `axis` (the onnx checker rejects it)
  external17.onnx    valid external data at opset 17 (the checker runs)
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
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

    # Valid external data beside an opset-17 model (the onnx checker runs on
    # it and must find the file next to the model, from any directory).
    for entry in ext.external_data:
        if entry.key == "location":
            entry.value = "external17.onnx.data"
    with open(os.path.join(out, "external17.onnx.data"), "wb") as f:
        f.write(np.arange(4, dtype=np.float32).tobytes())
    with open(os.path.join(out, "external17.onnx"), "wb") as f:
        f.write(model([helper.make_node("Add", ["x", "w"], ["y"], name="node_add")],
                      [x], [y], [ext]).SerializeToString())

    # External data shorter than the offset + length the tensor claims.
    for entry in ext.external_data:
        if entry.key == "location":
            entry.value = "short.onnx.data"
    with open(os.path.join(out, "short.onnx.data"), "wb") as f:
        f.write(b"\0" * 8)
    short = model([helper.make_node("Add", ["x", "w"], ["y"],
                                    name="node_add")], [x], [y], [ext])
    with open(os.path.join(out, "short_data.onnx"), "wb") as f:
        f.write(short.SerializeToString())

    # An opset outside the supported range.
    onnx.save(model([helper.make_node("Add", ["x", "w"], ["y"], name="node_add")],
                    [x], [y], [w], opset=12),
              os.path.join(out, "opset12.onnx"))

    # Element types that do not match.
    i = helper.make_tensor_value_info("i", TensorProto.INT64, ["batch", 4])
    onnx.save(model([helper.make_node("Add", ["x", "i"], ["y"], name="node_mixed")],
                    [x, i], [y]),
              os.path.join(out, "type_mismatch.onnx"))

    # Shapes that do not fit: a MatMul of [batch, 4] by [3, 2].
    m32 = numpy_helper.from_array(np.zeros((3, 2), dtype=np.float32), "m")
    out2 = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])
    onnx.save(model([helper.make_node("MatMul", ["x", "m"], ["y"], name="node_mm")],
                    [x], [out2], [m32]),
              os.path.join(out, "shape_mismatch.onnx"))

    # An output dim that cannot be bound to what the graph computes.
    out5 = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 5])
    onnx.save(model([helper.make_node("Add", ["x", "w"], ["y"], name="node_add")],
                    [x], [out5], [w]),
              os.path.join(out, "unbound_dim.onnx"))

    # An attribute of the wrong type: left to the onnx checker.
    softmax = helper.make_node("Softmax", ["x"], ["y"], name="node_softmax")
    softmax.attribute.append(helper.make_attribute("axis", 1.0))
    onnx.save(model([softmax], [x], [y]), os.path.join(out, "checker.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])

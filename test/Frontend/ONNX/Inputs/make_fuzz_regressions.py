"""Writes the ONNX fuzzer's findings, reduced to small models, into a
directory (each crashed the importer before its fix; now each is a one-line
error or a module).

Usage: make_fuzz_regressions.py OUT_DIR
  unsqueeze_no_inputs.onnx  Unsqueeze without inputs (the shape folder read
                            input 0 of every node)
  equal_empty_shape.onnx    Equal of a scalar's (empty) shape and [1] (the
                            folder indexed the empty operand)
  add_empty_shape.onnx      Add of a scalar's (empty) shape and [1]
  and_one_input.onnx        And of one input (the folder read two)
  matmul_no_inputs.onnx     MatMul without inputs (the attention raiser read
                            its inputs before any handler checked them)
  add_one_input.onnx        Add of one input (the RoPE raiser read two)
  rope_mul_one_input.onnx   Add(Mul(x), x): the RoPE raiser read the Mul's
                            second input
  attention_value_length.onnx
                            Attention-23 with 5 values for 6 keys (the
                            verifier's message was a second line)
  transpose_scalar.onnx     Transpose of a scalar (the identity; a rank-0
                            linalg.transpose crashed MLIR's verifier)
  rms_norm_huge_dim.onnx    RMSNormalization of x[3, 2^63 - 1] (declared
                            dimensions were not bounded: the element count
                            overflowed, UBSan)
  relu_negative_dim.onnx    Relu of x[2, -4] (a negative declared dimension)
  add_empty_huge_dims.onnx  Add of an empty [0, 2^22, 2^22, 2^22, 7] constant
                            (the folder's strides overflowed, UBSan)
  reshape_overflow.onnx     Reshape of a constant to [2^62, 4] (the shape
                            folder's product overflowed)
  reduce_sum_dynamic.onnx   ReduceSum over every axis of [batch, 3, 4] (the
                            mean's divisor multiplied the dynamic extent's
                            marker: an overflow UBSan reports)
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes, inputs, outputs, initializers=(), opset=18):
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              initializer=list(initializers))
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    x = helper.make_tensor_value_info("x", f, [2, 4])
    s = helper.make_tensor_value_info("s", f, [])
    y = helper.make_tensor_value_info("y", f, None)
    yi = helper.make_tensor_value_info("y", i64, None)
    yb = helper.make_tensor_value_info("y", TensorProto.BOOL, None)
    one = numpy_helper.from_array(np.array([1], np.int64), "one")
    save(f"{out}/unsqueeze_no_inputs.onnx",
         [helper.make_node("Unsqueeze", [], ["y"], name="n")], [x], [y])
    shape = helper.make_node("Shape", ["s"], ["e"], name="shape")
    save(f"{out}/equal_empty_shape.onnx",
         [shape, helper.make_node("Equal", ["e", "one"], ["y"], name="n")],
         [s], [yb], [one])
    save(f"{out}/add_empty_shape.onnx",
         [shape, helper.make_node("Add", ["e", "one"], ["y"], name="n")],
         [s], [yi], [one])
    save(f"{out}/and_one_input.onnx",
         [shape, helper.make_node("Equal", ["e", "e"], ["b"], name="eq"),
          helper.make_node("And", ["b"], ["y"], name="n")], [s], [yb])
    save(f"{out}/matmul_no_inputs.onnx",
         [helper.make_node("MatMul", [], ["y"], name="n")], [x], [y])
    save(f"{out}/add_one_input.onnx",
         [helper.make_node("Add", ["x"], ["y"], name="n")], [x], [y])
    save(f"{out}/rope_mul_one_input.onnx",
         [helper.make_node("Mul", ["x"], ["m"], name="mul"),
          helper.make_node("Add", ["m", "x"], ["y"], name="n")], [x], [y])
    qkv = [helper.make_tensor_value_info(n, f, [1, 2, length, 8])
           for n, length in (("q", 4), ("k", 6), ("v", 5))]
    xd = helper.make_tensor_value_info("x", f, ["batch", 3, 4])
    save(f"{out}/reduce_sum_dynamic.onnx",
         [helper.make_node("ReduceSum", ["x"], ["y"], name="n", keepdims=1)],
         [xd], [y])
    save(f"{out}/attention_value_length.onnx",
         [helper.make_node("Attention", ["q", "k", "v"], ["y"], name="n")],
         qkv, [y], opset=23)
    # Constant Ranges of 2^40 elements were folded into arrays (out of
    # memory): the integer one stays a computed range, the float one is an
    # error.
    for name, t, np_t in (("range_huge_int", i64, np.int64),
                          ("range_huge_float", f, np.float32)):
        bounds = [numpy_helper.from_array(np.array(v, np_t), n)
                  for n, v in (("start", 0), ("limit", 2**40), ("delta", 1))]
        save(f"{out}/{name}.onnx",
             [helper.make_node("Range", ["start", "limit", "delta"], ["y"],
                               name="n")],
             [], [helper.make_tensor_value_info("y", t, None)], bounds,
             opset=18)
    # Float Range bounds that are not one value of the range's type: an
    # empty start was read past its end (ASan SEGV), an integer limit as a
    # float.
    for name, start, limit in (
            ("range_empty_start", np.zeros((0,), np.float32), np.float32(4)),
            ("range_int_limit", np.float32(0), np.int64(4))):
        bounds = [numpy_helper.from_array(np.asarray(v), n) for n, v in
                  (("start", start), ("limit", limit),
                   ("delta", np.float32(1)))]
        save(f"{out}/{name}.onnx",
             [helper.make_node("Range", ["start", "limit", "delta"], ["y"],
                               name="n")],
             [], [helper.make_tensor_value_info("y", f, None)], bounds,
             opset=18)
    # ScatterND with float indices: they were read as integers, past the
    # attribute's data (ASan heap-use-after-free, 2026-12-04).
    save(f"{out}/scatter_nd_float_indices.onnx",
         [helper.make_node("ScatterND", ["data", "indices", "updates"],
                           ["y"], name="n")],
         [], [helper.make_tensor_value_info("y", f, None)],
         [numpy_helper.from_array(np.zeros((4,), np.float32), "data"),
          numpy_helper.from_array(np.full((1,), -np.inf, np.float32),
                                  "indices"),
          numpy_helper.from_array(np.zeros((1,), np.float32), "updates")],
         opset=18)
    # Transpose of a scalar: the importer made a rank-0 linalg.transpose,
    # whose upstream verifier crashes (the ASan/UBSan run, 2026-12-04).
    save(f"{out}/transpose_scalar.onnx",
         [helper.make_node("Transpose", ["s"], ["y"], name="n")],
         [helper.make_tensor_value_info("s", f, [])],
         [helper.make_tensor_value_info("y", f, None)])
    # RMSNormalization over axis 0 of x[3, 2^63 - 1]: the declared dimension
    # was taken as it was, and the element count overflowed (UBSan,
    # 2026-12-04). A negative dimension is refused the same way.
    for name, dims in (("rms_norm_huge_dim", [3, 2**63 - 1]),
                       ("relu_negative_dim", [2, -4])):
        op = "RMSNormalization" if name.startswith("rms") else "Relu"
        ins = ["x", "w"] if op == "RMSNormalization" else ["x"]
        save(f"{out}/{name}.onnx",
             [helper.make_node(op, ins, ["y"], name="n", **(
                 {"axis": 0} if op == "RMSNormalization" else {}))],
             [helper.make_tensor_value_info("x", f, dims),
              helper.make_tensor_value_info("w", f, [3])][:len(ins)],
             [helper.make_tensor_value_info("y", f, None)], opset=23)
    # Add of an empty constant [0, 2^22, 2^22, 2^22, 7] with itself: the
    # folder's strides over the other dims passed int64 (UBSan, 2026-12-04).
    empty = helper.make_tensor("a", TensorProto.FLOAT,
                               [0, 1 << 22, 1 << 22, 1 << 22, 7], [])
    save(f"{out}/add_empty_huge_dims.onnx",
         [helper.make_node("Add", ["a", "a"], ["y"], name="n")],
         [], [helper.make_tensor_value_info("y", f, None)], [empty])
    # Reshape of a constant to [2^62, 4]: the shape folder's product of the
    # known dims passed int64.
    save(f"{out}/reshape_overflow.onnx",
         [helper.make_node("Reshape", ["c", "s"], ["y"], name="n")],
         [], [helper.make_tensor_value_info("y", f, None)],
         [numpy_helper.from_array(np.zeros((2, 3), np.float32), "c"),
          numpy_helper.from_array(np.array([1 << 62, 4], np.int64), "s")])
    # A name with a line break, quoted in an error: the error came out as
    # two lines (names are escaped now, \x0a).
    save(f"{out}/name_newline.onnx",
         [helper.make_node("Relu", ["x"], ["y"], name="n")], [x],
         [helper.make_tensor_value_info("y\nz", f, None)])


if __name__ == "__main__":
    main(sys.argv[1])

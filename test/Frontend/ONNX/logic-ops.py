# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t
# RUN: mnemoc %t/logic.onnx -o %t/logic.mnemo
# RUN: %mnemo_run %t/logic.mnemo --input A=%t/A.npy --input B=%t/B.npy --output-dir %t/out
# RUN: %python %S/Inputs/compare_logits.py %t/out/Y.npy %t/expected.npy | FileCheck %s
# CHECK: max |diff| {{.*}} ok
"""Comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual), logic
(And, Or, Xor, Not), Gelu-20 (exact and tanh), Trilu (upper with k = 1, lower
with k = -1) and Mod in one graph, against numpy. Ties are planted so Equal
and the non-strict comparisons matter."""

import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper

out = sys.argv[1]
rng = np.random.default_rng(3)
a = rng.standard_normal((3, 7)).astype(np.float32)
b = rng.standard_normal((3, 7)).astype(np.float32)
b[0, :3] = a[0, :3]
n = helper.make_node
nodes = [
    n("Less", ["A", "B"], ["lt"]), n("Equal", ["A", "B"], ["eq"]),
    n("LessOrEqual", ["A", "B"], ["le"]), n("Greater", ["A", "B"], ["gt"]),
    n("GreaterOrEqual", ["A", "B"], ["ge"]),
    n("Not", ["eq"], ["ne"]), n("And", ["le", "ne"], ["c1"]),
    n("Or", ["gt", "eq"], ["c2"]), n("Xor", ["ge", "c2"], ["c3"]),
    n("Gelu", ["A"], ["ga"]), n("Gelu", ["B"], ["gb"], approximate="tanh"),
    n("Where", ["c1", "ga", "gb"], ["w1"]),
    n("Where", ["c3", "A", "w1"], ["w2"]),
    n("Trilu", ["w2", "one"], ["up"], upper=1),
    n("Trilu", ["B", "minus_one"], ["lo"], upper=0),
    n("Mod", ["A", "B"], ["md"], fmod=1),
    n("Add", ["up", "lo"], ["ul"]),
    n("Add", ["ul", "md"], ["Y"]),
]
g = helper.make_graph(
    nodes, "logic",
    [helper.make_tensor_value_info(x, TensorProto.FLOAT, [3, 7]) for x in "AB"],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 7])],
    [helper.make_tensor("one", TensorProto.INT64, [], [1]),
     helper.make_tensor("minus_one", TensorProto.INT64, [], [-1])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
m.ir_version = 9
open(os.path.join(out, "logic.onnx"), "wb").write(m.SerializeToString())
np.save(os.path.join(out, "A.npy"), a)
np.save(os.path.join(out, "B.npy"), b)

a64, b64 = a.astype(np.float64), b.astype(np.float64)
erf = np.vectorize(math.erf)
ga = a64 * 0.5 * (1 + erf(a64 / math.sqrt(2)))
gb = 0.5 * b64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (b64 + 0.044715 * b64**3)))
c1 = (a <= b) & ~(a == b)
c3 = (a >= b) ^ ((a > b) | (a == b))
w2 = np.where(c3, a64, np.where(c1, ga, gb))
expected = np.triu(w2, 1) + np.tril(b64, -1) + np.fmod(a64, b64)
np.save(os.path.join(out, "expected.npy"), expected)

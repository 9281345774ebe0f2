"""Writes Attention-23 test models and their numpy references.

Usage: make_attention.py OUT_DIR
  gqa_causal_mask.onnx  Q [1,4,5,8], K [1,2,7,8], V [1,2,7,6], is_causal,
                        scale 0.3, float attn_mask [5,7]; inputs/expected .npy
  bool_mask.onnx        Q [2,2,4,8], K/V [2,2,6,8], boolean attn_mask
                        [2,1,4,6] with a fully masked row
  bad_mode.onnx         an attribute value the importer refuses
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper

import numpy_refs  # test/Numerics, on the tests' PYTHONPATH


def attention_model(path, shapes, attrs, mask_type=None):
    names = ["Q", "K", "V"] + (["attn_mask"] if mask_type is not None else [])
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
              for n, s in zip(["Q", "K", "V"], shapes[:3])]
    if mask_type is not None:
        inputs.append(helper.make_tensor_value_info("attn_mask", mask_type, shapes[3]))
    out = [shapes[0][0], shapes[0][1], shapes[0][2], shapes[2][3]]
    node = helper.make_node("Attention", names, ["Y"], name="node_attention", **attrs)
    graph = helper.make_graph([node], "attention", inputs,
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, out)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 10
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    r = np.random.default_rng(23)

    q = r.standard_normal((1, 4, 5, 8)).astype(np.float32)
    k = r.standard_normal((1, 2, 7, 8)).astype(np.float32)
    v = r.standard_normal((1, 2, 7, 6)).astype(np.float32)
    m = r.standard_normal((5, 7)).astype(np.float32)
    attention_model(os.path.join(out, "gqa_causal_mask.onnx"),
                    [q.shape, k.shape, v.shape, m.shape],
                    {"is_causal": 1, "scale": 0.3}, TensorProto.FLOAT)
    for name, a in (("Q", q), ("K", k), ("V", v), ("attn_mask", m)):
        np.save(os.path.join(out, f"gqa_{name}.npy"), a)
    np.save(os.path.join(out, "gqa_expected.npy"),
            numpy_refs.attention(q, k, v, scale=0.3, causal=True, mask=m))

    q = r.standard_normal((2, 2, 4, 8)).astype(np.float32)
    k = r.standard_normal((2, 2, 6, 8)).astype(np.float32)
    v = r.standard_normal((2, 2, 6, 8)).astype(np.float32)
    keep = r.random((2, 1, 4, 6)) > 0.3
    keep[1, 0, 2, :] = False
    attention_model(os.path.join(out, "bool_mask.onnx"),
                    [q.shape, k.shape, v.shape, keep.shape], {}, TensorProto.BOOL)
    for name, a in (("Q", q), ("K", k), ("V", v), ("attn_mask", keep)):
        np.save(os.path.join(out, f"bool_{name}.npy"), a)
    np.save(os.path.join(out, "bool_expected.npy"),
            numpy_refs.attention(q, k, v, mask=np.where(keep, 0.0, -np.inf)))

    attention_model(os.path.join(out, "bad_mode.onnx"),
                    [q.shape, k.shape, v.shape], {"qk_matmul_output_mode": 7})


if __name__ == "__main__":
    main(sys.argv[1])

# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t %mnemo_run | FileCheck %s
"""Each raising pattern on a small hand-written graph: `mnemoc --report`
names the pattern that fired and `--emit=mnemo` shows the mnemo op with the
attributes it recovered; then the model is compiled for the host, run, and
compared with numpy evaluating the graph as written. Graphs that only look
like a pattern stay generic and still compute the same thing."""

import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

# CHECK-LABEL: case attention_gqa_causal
# CHECK: raised: attention (MatMul-Softmax-MatMul) 1
# CHECK: mnemo.attention {{.*}} causal scale({{0.3[45][0-9]*}}) : tensor<1x4x9x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x6xf32>
# CHECK: attention_gqa_causal: max |diff| {{.*}} ok
# CHECK-LABEL: case attention_window_offset
# CHECK: raised: attention (MatMul-Softmax-MatMul) 1
# CHECK: mnemo.attention {{.*}} causal window(4) scale({{0.3[45][0-9]*}}) q_offset(
# CHECK: attention_window_offset: max |diff| {{.*}} ok
# CHECK-LABEL: case attention_where_split_scale
# CHECK: raised: attention (MatMul-Softmax-MatMul) 1
# CHECK: mnemo.attention {{.*}} scale({{0.1[45][0-9]*}}) mask(%{{.+}} : tensor<2x1x5x7xf32>)
# CHECK: attention_where_split_scale: max |diff| {{.*}} ok
# CHECK-LABEL: case attention_input_mask
# CHECK: raised: attention (MatMul-Softmax-MatMul) 1
# CHECK: mnemo.attention {{.*}} scale(1.0{{0*}}e+00) mask(%arg3 : tensor<2x1x5x7xf32>)
# CHECK: attention_input_mask: max |diff| {{.*}} ok
# CHECK-LABEL: case attention_range_mask
# CHECK: raised: attention (MatMul-Softmax-MatMul) 1
# CHECK: mnemo.attention {{.*}} causal scale({{0.3[45][0-9]*}}) q_offset(%c5)
# CHECK-NOT: mask(
# CHECK: attention_range_mask: max |diff| {{.*}} ok
# CHECK-LABEL: case attention_trilu_window
# CHECK: raised: attention (MatMul-Softmax-MatMul) 1
# CHECK: mnemo.attention {{.*}} causal window(3) scale(
# CHECK-NOT: mask(
# CHECK: attention_trilu_window: max |diff| {{.*}} ok
# CHECK-LABEL: case softmax_not_last_axis
# CHECK: raised: none
# CHECK-NOT: mnemo.attention
# CHECK: softmax_not_last_axis: max |diff| {{.*}} ok
# CHECK-LABEL: case rope_rotate_half_partial
# CHECK: raised: rope_tables (rotate-half) 1
# CHECK: mnemo.rope_tables {{.*}} : tensor<2x3x7x8xf32>, tensor<1x7x8xf32> -> tensor<2x3x7x8xf32>
# CHECK: rope_rotate_half_partial: max |diff| {{.*}} ok
# CHECK-LABEL: case rope_graph_tables
# CHECK: raised: rope_tables (rotate-half) 1
# CHECK: mnemo.rope_tables {{.*}} : tensor<2x4x7x16xf32>, tensor<2x7x16xf32> -> tensor<2x4x7x16xf32>
# CHECK: rope_graph_tables: max |diff| {{.*}} ok
# CHECK-LABEL: case rope_interleaved
# CHECK: raised: rope_tables (interleaved) 1
# CHECK: mnemo.rope_tables {{.*}} interleaved : tensor<1x2x6x8xf32>, tensor<1x6x8xf32> -> tensor<1x2x6x8xf32>
# CHECK: rope_interleaved: max |diff| {{.*}} ok
# CHECK-LABEL: case rope_split_halves
# CHECK: raised: rope_tables (split halves) 1
# CHECK: mnemo.rope_tables {{.*}} : tensor<1x2x6x8xf32>, tensor<1x6x8xf32> -> tensor<1x2x6x8xf32>
# CHECK: rope_split_halves: max |diff| {{.*}} ok
# CHECK-LABEL: case rms_norm_pow_div_opset17
# CHECK: raised: rms_norm (ReduceMean-Sqrt) 1
# CHECK: mnemo.rms_norm %arg0, %{{.+}} eps({{9.99999[0-9]*E-6}})
# CHECK: rms_norm_pow_div_opset17: max |diff| {{.*}} ok
# CHECK-LABEL: case rms_norm_reciprocal_opset18
# CHECK: raised: rms_norm (ReduceMean-Sqrt) 1
# CHECK: rms_norm_reciprocal_opset18: max |diff| {{.*}} ok
# CHECK-LABEL: case rms_norm_wrong_axis
# CHECK: raised: none
# CHECK: rms_norm_wrong_axis: max |diff| {{.*}} ok
# CHECK-LABEL: case swiglu
# CHECK: raised: swiglu (Sigmoid-Mul) 1
# CHECK: mnemo.swiglu
# CHECK: swiglu: max |diff| {{.*}} ok

OUT, MNEMO_RUN = sys.argv[1], sys.argv[2]
MNEMOC = os.path.join(os.environ["MNEMO_TOOLS_DIR"], "mnemoc")
rng = np.random.default_rng(5)
NEG = np.float32(np.finfo(np.float32).min)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def ints(name, values):
    return const(name, np.array(values, dtype=np.int64))


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def run_case(name, nodes, inputs, inits, out_shape, expected, opset=23):
    print(f"case {name}", flush=True)
    vis = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape)
           for k, v in inputs.items()]
    graph = helper.make_graph(
        nodes, name, vis,
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, out_shape)],
        inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 17 else 10
    path = os.path.join(OUT, name + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    mlir = subprocess.run([MNEMOC, path, "--emit=mnemo", "--report", "-o", "-"],
                          check=True, capture_output=True, text=True)
    print(mlir.stderr.strip())
    for line in mlir.stdout.splitlines():
        if "mnemo." in line and "mnemo.name" not in line:
            print(line.strip())
    artifact = os.path.join(OUT, name + ".mnemo")
    subprocess.run([MNEMOC, path, "-o", artifact], check=True)
    args = [MNEMO_RUN, artifact, "--output-dir", os.path.join(OUT, name)]
    for k, v in inputs.items():
        np.save(os.path.join(OUT, f"{name}_{k}.npy"), v)
        args += ["--input", f"{k}={os.path.join(OUT, f'{name}_{k}.npy')}"]
    subprocess.run(args, check=True, capture_output=True)
    got = np.load(os.path.join(OUT, name, "Y.npy"))
    diff = float(np.abs(got.astype(np.float64) - expected).max())
    ok = got.shape == expected.shape and diff <= 1e-4
    print(f"{name}: max |diff| {diff:.3g} {'ok' if ok else 'FAIL'}")


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def repeat_kv(nodes, inits, name, b, hkv, g, s, d):
    """Hugging Face's repeat_kv: [B,Hkv,S,D] -> [B,Hkv*G,S,D]."""
    inits += [ints(f"{name}_ax", [2]), ints(f"{name}_shape5", [b, hkv, g, s, d]),
              ints(f"{name}_shape4", [b, hkv * g, s, d])]
    nodes += [helper.make_node("Unsqueeze", [name, f"{name}_ax"], [f"{name}_u"]),
              helper.make_node("Expand", [f"{name}_u", f"{name}_shape5"], [f"{name}_e"]),
              helper.make_node("Reshape", [f"{name}_e", f"{name}_shape4"], [f"{name}_r"])]
    return f"{name}_r"


def attention_gqa_causal():
    q, k, v = normal(1, 4, 9, 8), normal(1, 2, 9, 8), normal(1, 2, 9, 6)
    mask = np.where(np.tril(np.ones((9, 9), bool)), 0, NEG)[None, None].astype(np.float32)
    nodes, inits = [], [const("scale", np.float32(0.35)), const("mask", mask)]
    kr = repeat_kv(nodes, inits, "K", 1, 2, 2, 9, 8)
    vr = repeat_kv(nodes, inits, "V", 1, 2, 2, 9, 6)
    nodes += [helper.make_node("Transpose", [kr], ["kt"], perm=[0, 1, 3, 2]),
              helper.make_node("MatMul", ["Q", "kt"], ["s"]),
              helper.make_node("Mul", ["s", "scale"], ["ss"]),
              helper.make_node("Add", ["ss", "mask"], ["sm"]),
              helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", vr], ["Y"])]
    kk, vv = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)
    want = softmax(q.astype(np.float64) @ kk.transpose(0, 1, 3, 2) * 0.35 + mask) @ vv
    run_case("attention_gqa_causal", nodes, {"Q": q, "K": k, "V": v}, inits,
             [1, 4, 9, 6], want)


def attention_window_offset():
    q, k, v = normal(2, 2, 5, 8), normal(2, 2, 11, 8), normal(2, 2, 11, 8)
    i, j = np.arange(5)[:, None] + 6, np.arange(11)[None, :]
    mask = np.where((j <= i) & (i - j < 4), 0, -np.inf).astype(np.float32)
    d = np.float32(1 / 0.35)
    nodes = [helper.make_node("Transpose", ["K"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["Q", "kt"], ["s"]),
             helper.make_node("Div", ["s", "d"], ["ss"]),
             helper.make_node("Add", ["mask", "ss"], ["sm"]),
             helper.make_node("Softmax", ["sm"], ["p"], axis=3),
             helper.make_node("MatMul", ["p", "V"], ["Y"])]
    want = softmax(q.astype(np.float64) @ k.transpose(0, 1, 3, 2) / d + mask) @ v
    run_case("attention_window_offset", nodes, {"Q": q, "K": k, "V": v},
             [const("d", d), const("mask", mask)], [2, 2, 5, 8], want)


def attention_where_split_scale():
    q, k, v = normal(2, 3, 5, 4), normal(2, 3, 7, 4), normal(2, 3, 7, 4)
    keep = rng.random((2, 1, 5, 7)) > 0.4
    keep[..., 0] = True
    c = np.float32(np.sqrt(0.15))
    nodes = [helper.make_node("Mul", ["Q", "c"], ["qs"]),
             helper.make_node("Transpose", ["K"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("Mul", ["c", "kt"], ["kts"]),
             helper.make_node("MatMul", ["qs", "kts"], ["s"]),
             helper.make_node("Where", ["keep", "s", "fill"], ["sm"]),
             helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "V"], ["Y"])]
    s = (q * c).astype(np.float64) @ (k * c).transpose(0, 1, 3, 2)
    want = softmax(np.where(keep, s, -np.inf)) @ v
    run_case("attention_where_split_scale", nodes, {"Q": q, "K": k, "V": v},
             [const("c", c), const("keep", keep),
              const("fill", np.float32(-np.inf))], [2, 3, 5, 4], want)


def attention_input_mask():
    q, k, v = normal(2, 2, 5, 8), normal(2, 2, 7, 8), normal(2, 2, 7, 8)
    m = normal(2, 1, 5, 7)
    nodes = [helper.make_node("Transpose", ["K"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["Q", "kt"], ["s"]),
             helper.make_node("Add", ["s", "M"], ["sm"]),
             helper.make_node("Softmax", ["sm"], ["p"]),
             helper.make_node("MatMul", ["p", "V"], ["Y"])]
    want = softmax(q.astype(np.float64) @ k.transpose(0, 1, 3, 2) + m) @ v
    run_case("attention_input_mask", nodes, {"Q": q, "K": k, "V": v, "M": m},
             [], [2, 2, 5, 8], want)


def attention_range_mask():
    """A causal mask with a query offset computed in the graph: key
    positions Range(0, Skv) against query positions Range(Skv-Sq, Skv),
    Greater -> Where(-inf, 0) -> Expand to the batch."""
    q, k, v = normal(2, 2, 4, 8), normal(2, 2, 9, 8), normal(2, 2, 9, 8)
    nodes = [helper.make_node("Range", ["zero", "skv", "one"], ["kpos"]),
             helper.make_node("Range", ["off", "skv", "one"], ["qpos"]),
             helper.make_node("Unsqueeze", ["qpos", "ax1"], ["qcol"]),
             helper.make_node("Greater", ["kpos", "qcol"], ["future"]),
             helper.make_node("Where", ["future", "ninf", "fzero"], ["m2"]),
             helper.make_node("Expand", ["m2", "mshape"], ["mask"]),
             helper.make_node("Transpose", ["K"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["Q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "scale"], ["ss"]),
             helper.make_node("Add", ["ss", "mask"], ["sm"]),
             helper.make_node("Softmax", ["sm"], ["p"]),
             helper.make_node("MatMul", ["p", "V"], ["Y"])]
    inits = [ints("zero", 0), ints("skv", 9), ints("one", 1), ints("off", 5),
             ints("ax1", [1]), const("ninf", np.float32(-np.inf)),
             const("fzero", np.float32(0)), ints("mshape", [2, 1, 4, 9]),
             const("scale", np.float32(0.35))]
    i, j = np.arange(4)[:, None] + 5, np.arange(9)[None, :]
    mask = np.where(j > i, -np.inf, 0.0)
    want = softmax(q.astype(np.float64) @ k.transpose(0, 1, 3, 2) * 0.35 + mask) @ v
    run_case("attention_range_mask", nodes, {"Q": q, "K": k, "V": v}, inits,
             [2, 2, 4, 8], want)


def attention_trilu_window():
    """A sliding-window mask from two Trilu of a ConstantOfShape of ones,
    combined with Not/And and cast to bool, used through Where."""
    s_len, w = 7, 3
    q, k, v = normal(1, 2, s_len, 4), normal(1, 2, s_len, 4), normal(1, 2, s_len, 4)
    nodes = [helper.make_node("ConstantOfShape", ["sq2"], ["ones"],
                              value=helper.make_tensor("", TensorProto.FLOAT,
                                                       [1], [1.0])),
             helper.make_node("Trilu", ["ones"], ["low"], upper=0),
             helper.make_node("Trilu", ["ones", "kw"], ["far"], upper=0),
             helper.make_node("Cast", ["low"], ["lowb"], to=TensorProto.BOOL),
             helper.make_node("Cast", ["far"], ["farb"], to=TensorProto.BOOL),
             helper.make_node("Not", ["farb"], ["near"]),
             helper.make_node("And", ["lowb", "near"], ["keep"]),
             helper.make_node("Transpose", ["K"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["Q", "kt"], ["s"]),
             helper.make_node("Where", ["keep", "s", "ninf"], ["sm"]),
             helper.make_node("Softmax", ["sm"], ["p"]),
             helper.make_node("MatMul", ["p", "V"], ["Y"])]
    inits = [ints("sq2", [s_len, s_len]), ints("kw", -w),
             const("ninf", np.float32(-np.inf))]
    i, j = np.arange(s_len)[:, None], np.arange(s_len)[None, :]
    keep = (j <= i) & (i - j < w)
    want = softmax(np.where(keep, q.astype(np.float64) @ k.transpose(0, 1, 3, 2),
                            -np.inf)) @ v
    run_case("attention_trilu_window", nodes, {"Q": q, "K": k, "V": v}, inits,
             [1, 2, s_len, 4], want)


def softmax_not_last_axis():
    q, k, v = normal(1, 2, 6, 4), normal(1, 2, 6, 4), normal(1, 2, 6, 4)
    nodes = [helper.make_node("Transpose", ["K"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["Q", "kt"], ["s"]),
             helper.make_node("Softmax", ["s"], ["p"], axis=2),
             helper.make_node("MatMul", ["p", "V"], ["Y"])]
    s = q.astype(np.float64) @ k.transpose(0, 1, 3, 2)
    e = np.exp(s - s.max(axis=2, keepdims=True))
    want = (e / e.sum(axis=2, keepdims=True)) @ v
    run_case("softmax_not_last_axis", nodes, {"Q": q, "K": k, "V": v}, [],
             [1, 2, 6, 4], want)


def rotate_half_nodes(x, cos, sin, width, out, prefix):
    h = width // 2
    return [helper.make_node("Slice", [x, f"{prefix}0", f"{prefix}h", f"{prefix}ax"], [f"{prefix}x1"]),
            helper.make_node("Slice", [x, f"{prefix}h", f"{prefix}big", f"{prefix}ax"], [f"{prefix}x2"]),
            helper.make_node("Neg", [f"{prefix}x2"], [f"{prefix}n"]),
            helper.make_node("Concat", [f"{prefix}n", f"{prefix}x1"], [f"{prefix}rot"], axis=-1),
            helper.make_node("Mul", [x, cos], [f"{prefix}xc"]),
            helper.make_node("Mul", [f"{prefix}rot", sin], [f"{prefix}rs"]),
            helper.make_node("Add", [f"{prefix}xc", f"{prefix}rs"], [out])], \
        [ints(f"{prefix}0", [0]), ints(f"{prefix}h", [h]),
         ints(f"{prefix}big", [2**62]), ints(f"{prefix}ax", [-1])]


def rotate_half_ref(x, cos, sin):
    h = x.shape[-1] // 2
    rot = np.concatenate([-x[..., h:], x[..., :h]], axis=-1)
    return x.astype(np.float64) * cos + rot * sin


def tables(s, r, theta=10000.0):
    inv = 1.0 / theta ** (np.arange(0, r, 2) / r)
    ang = np.outer(np.arange(s), inv)
    ang = np.concatenate([ang, ang], axis=-1)
    return (np.cos(ang)[None, None].astype(np.float32),
            np.sin(ang)[None, None].astype(np.float32))


def rope_rotate_half_partial():
    x = normal(2, 3, 7, 16)
    cos, sin = tables(7, 8)
    nodes, inits = rotate_half_nodes("xr", "cos", "sin", 8, "y8", "r")
    nodes = [helper.make_node("Slice", ["X", "r0", "e8", "rax"], ["xr"]),
             helper.make_node("Slice", ["X", "e8", "rbig", "rax"], ["xp"])] + nodes + \
            [helper.make_node("Concat", ["y8", "xp"], ["Y"], axis=3)]
    inits += [ints("e8", [8]), const("cos", cos), const("sin", sin)]
    want = np.concatenate([rotate_half_ref(x[..., :8], cos, sin), x[..., 8:]], -1)
    run_case("rope_rotate_half_partial", nodes, {"X": x}, inits, [2, 3, 7, 16], want)


def rope_graph_tables():
    x, cos, sin = normal(2, 4, 7, 16), normal(2, 1, 7, 16), normal(2, 1, 7, 16)
    nodes, inits = rotate_half_nodes("X", "C", "S", 16, "Y", "r")
    run_case("rope_graph_tables", nodes, {"X": x, "C": cos, "S": sin}, inits,
             [2, 4, 7, 16], rotate_half_ref(x, cos, sin))


def rope_interleaved():
    x = normal(1, 2, 6, 8)
    inv = 1.0 / 10000.0 ** (np.arange(0, 8, 2) / 8)
    ang = np.repeat(np.outer(np.arange(6), inv), 2, axis=-1)
    cos = np.cos(ang)[None, None].astype(np.float32)
    sin = np.sin(ang)[None, None].astype(np.float32)
    nodes = [helper.make_node("Slice", ["X", "s0", "big", "ax", "two"], ["xe"]),
             helper.make_node("Slice", ["X", "s1", "big", "ax", "two"], ["xo"]),
             helper.make_node("Neg", ["xo"], ["nxo"]),
             helper.make_node("Unsqueeze", ["nxo", "last"], ["u0"]),
             helper.make_node("Unsqueeze", ["xe", "last"], ["u1"]),
             helper.make_node("Concat", ["u0", "u1"], ["st"], axis=-1),
             helper.make_node("Reshape", ["st", "shape"], ["rot"]),
             helper.make_node("Mul", ["X", "cos"], ["xc"]),
             helper.make_node("Mul", ["sin", "rot"], ["rs"]),
             helper.make_node("Add", ["rs", "xc"], ["Y"])]
    inits = [ints("s0", [0]), ints("s1", [1]), ints("big", [2**62]), ints("ax", [-1]),
             ints("two", [2]), ints("last", [-1]), ints("shape", [1, 2, 6, 8]),
             const("cos", cos), const("sin", sin)]
    x64 = x.astype(np.float64)
    rot = np.empty_like(x64)
    rot[..., 0::2], rot[..., 1::2] = -x64[..., 1::2], x64[..., 0::2]
    run_case("rope_interleaved", nodes, {"X": x}, inits, [1, 2, 6, 8],
             x64 * cos + rot * sin)


def rope_split_halves():
    x = normal(1, 2, 6, 8)
    cos, sin = (t[..., :4] for t in tables(6, 8))
    nodes = [helper.make_node("Slice", ["X", "s0", "big", "ax", "two"], ["a"]),
             helper.make_node("Slice", ["X", "s1", "big", "ax", "two"], ["b"]),
             helper.make_node("Mul", ["a", "cos"], ["ac"]),
             helper.make_node("Mul", ["sin", "b"], ["bs"]),
             helper.make_node("Sub", ["ac", "bs"], ["lo"]),
             helper.make_node("Mul", ["b", "cos"], ["bc"]),
             helper.make_node("Mul", ["a", "sin"], ["as"]),
             helper.make_node("Add", ["as", "bc"], ["hi"]),
             helper.make_node("Concat", ["lo", "hi"], ["Y"], axis=-1)]
    inits = [ints("s0", [0]), ints("s1", [1]), ints("big", [2**62]), ints("ax", [3]),
             ints("two", [2]), const("cos", cos), const("sin", sin)]
    a, b = x[..., 0::2].astype(np.float64), x[..., 1::2]
    want = np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)
    run_case("rope_split_halves", nodes, {"X": x}, inits, [1, 2, 6, 8], want)


def rms_norm(name, opset, reciprocal, axis=-1):
    x, w = normal(2, 5, 12), normal(12)
    nodes = [helper.make_node("Mul", ["X", "X"], ["sq"]) if reciprocal else
             helper.make_node("Pow", ["X", "two"], ["sq"])]
    if opset >= 18:
        nodes.append(helper.make_node("ReduceMean", ["sq", "axes"], ["m"]))
    else:
        nodes.append(helper.make_node("ReduceMean", ["sq"], ["m"], axes=[axis]))
    nodes += [helper.make_node("Add", ["eps", "m"], ["me"]),
              helper.make_node("Sqrt", ["me"], ["r"])]
    if reciprocal:
        nodes += [helper.make_node("Reciprocal", ["r"], ["ir"]),
                  helper.make_node("Mul", ["ir", "X"], ["n"]),
                  helper.make_node("Mul", ["n", "w"], ["Y"])]
    else:
        nodes += [helper.make_node("Div", ["X", "r"], ["n"]),
                  helper.make_node("Mul", ["w", "n"], ["Y"])]
    inits = [const("two", np.float32(2.0)), const("eps", np.float32(1e-5)),
             const("w", w), ints("axes", [axis])]
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt((x64 * x64).mean(axis=axis, keepdims=True) + 1e-5) * w
    run_case(name, nodes, {"X": x}, inits, [2, 5, 12], want, opset=opset)


def swiglu():
    g, u = normal(2, 5, 12), normal(2, 5, 12)
    nodes = [helper.make_node("Sigmoid", ["G"], ["sg"]),
             helper.make_node("Mul", ["sg", "G"], ["silu"]),
             helper.make_node("Mul", ["U", "silu"], ["Y"])]
    g64 = g.astype(np.float64)
    run_case("swiglu", nodes, {"G": g, "U": u}, [], [2, 5, 12],
             g64 / (1 + np.exp(-g64)) * u)


attention_gqa_causal()
attention_window_offset()
attention_where_split_scale()
attention_input_mask()
attention_range_mask()
attention_trilu_window()
softmax_not_last_axis()
rope_rotate_half_partial()
rope_graph_tables()
rope_interleaved()
rope_split_halves()
rms_norm("rms_norm_pow_div_opset17", 17, reciprocal=False)
rms_norm("rms_norm_reciprocal_opset18", 18, reciprocal=True)
rms_norm("rms_norm_wrong_axis", 17, reciprocal=False, axis=1)
swiglu()

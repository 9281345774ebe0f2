# RUN: rm -rf %t && mkdir -p %t/real
# RUN: mnemoc %mnemo_src/examples/tiny-decoder/model.mlir --input-shape input_ids=1x9 --target=sm_90a --external-weights -o %t/real/decoder.mnemo
# RUN: mnemoc %mnemo_src/test/Target/NVPTX/attention.mlir --target=sm_80 -o %t/real/attention.mnemo
# RUN: mnemoc %mnemo_src/test/Target/NVPTX/attention.mlir --target=host -o %t/real/host.mnemo
# RUN: mnemoc %mnemo_src/test/Runtime/Inputs/dynamic-attention.mlir --target=sm_90a -o %t/real/dynamic.mnemo
# RUN: %python %s %t %mnemo_run %mnemo_runtime_shapes_test %fake_cuda_no_graphs | FileCheck %s
"""scripts/gpu/plan.py, through which the GPU checks and benchmarks read an
artifact's launch plan (the JSON of `mnemo-run ARTIFACT --dump-plan`): a
plan written here, with a stand-in artifact and side weights file, is read,
its code and weights found at their offsets (also after the folder moved),
and a plan the runtime cannot run or a malformed one is refused with a
message; dump_plan runs the tool in the artifact's folder. A dynamic plan
written here (sizes as expressions of the input dims) is evaluated at two
shapes (an empty grid's launch dropped), every expression operation at
its edge values, and bad shapes or sizes the runtime would refuse are
refused. Then the same on mnemoc's artifacts through mnemo-run: the tiny
decoder's plan for sm_90a (weights in the side file, read back after the
folder moved), a function with dynamic shapes refused without shapes or
with the runtime's reason, a CPU plan read but its code refused as PTX, and
the dynamic bf16 attention for sm_90a at a prefill, a decode step and a
batch of 2 at 3000 tokens, its launches as the runtime's executor makes
them (on the driver stand-in, kernel by kernel)."""

import json
import os
import shutil
import stat
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("MNEMO_SRC", os.path.join(
    os.path.dirname(__file__), "..", "..")), "scripts", "gpu"))
from plan import (PlanError, dump_plan, gpu_binary, load_plan, ptx_text,  # noqa: E402
                  tensor_map_source, tensor_map_span, weight_bytes)

DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4}

tmp = os.path.abspath(sys.argv[1])
folder = os.path.join(tmp, "cases")
os.makedirs(folder)
ptx = b"//\n.version 8.0\n.target sm_90a\n.visible .entry k0() { ret; }\n"
head, tail = b"MNA1-header....", b"\x00" * 7 + b"W" * 64  # code, then a weight
with open(os.path.join(folder, "m.mnemo"), "wb") as f:
    f.write(head + ptx + tail)
with open(os.path.join(folder, "m.mnemo.weights"), "wb") as f:
    f.write(b"\x01" * 64 + b"\x02" * 32)
doc = {
    "artifact": os.path.join(folder, "m.mnemo"),  # absolute, as if dumped from elsewhere
    "target": {"triple": "nvptx64-nvidia-cuda", "cpu": "sm_90a", "features": ""},
    "code_format": "ptx",
    "code": {"offset": len(head), "size": len(ptx)},
    "weights": [
        {"name": "embed", "dtype": "f32", "shape": [8], "file": "m.mnemo.weights",
         "offset": 64, "size": 32},
        {"name": "inside", "dtype": "bf16", "shape": [32], "file": "m.mnemo",
         "offset": len(head) + len(ptx) + 7, "size": 64}],
    "functions": [{
        "name": "forward",
        "inputs": [{"name": "x", "dtype": "bf16", "shape": [2, 64], "max_shape": [2, 64]}],
        "outputs": [{"name": "y", "dtype": "f32", "shape": [2, 8], "max_shape": [2, 8]}],
        "unsupported": "",
        "buffers": [
            {"kind": "input", "input": 0, "bytes": 256},
            {"kind": "tensor_map", "source": 0, "dtype": "bf16", "dims": [64, 2],
             "strides": [128], "box": [64, 1], "swizzle": 128, "bytes": 128},
            {"kind": "weight", "weight": 0, "bytes": 32},
            {"kind": "temporary", "bytes": 64},
            {"kind": "weight", "weight": 1, "bytes": 64}],
        "launches": [{"kernel": "k0", "grid": [2, 1, 1], "block": [128, 1, 1],
                      "shared_bytes": 65536,
                      "args": [{"buffer": 1}, {"buffer": 2}, {"buffer": 4}, {"buffer": 3},
                               {"i64": -3}, {"i32": 7}, {"f32": 1065353216}]}],
        "output_buffers": [3]},
        {"name": "dynamic", "inputs": [], "outputs": [],
         "unsupported": "dynamic shapes are not supported by the CUDA executor yet"}],
}
plan_json = os.path.join(folder, "m.plan.json")


def write(d, path=plan_json):
    with open(path, "w") as f:
        json.dump(d, f)
    return path


def summary(p):
    print(f"{p['function']}: {p['code_format']} for {p['target']['cpu']}, "
          f"{len(p['buffers'])} buffers, tensor maps {p['tensor_maps']}, "
          f"outputs in {p['output_buffers']}")
    print(f"code: {ptx_text(p).splitlines()[2]}")
    print("weights: " + ", ".join(f"{w['name']} {weight_bytes(p, k)[:1]!r} x{w['size']}"
                                  for k, w in enumerate(p["weights"])))
    src, desc = tensor_map_source(p, p["tensor_maps"][0])
    print(f"tensor map of buffer {src}: {desc}, spans {tensor_map_span(desc)} bytes")
    launch = p["launches"][0]
    print(f"launch {launch['kernel']} grid {launch['grid']} shared {launch['shared_bytes']} "
          f"args {launch['args']}")


# CHECK: forward: ptx for sm_90a, 5 buffers, tensor maps [1], outputs in [3]
# CHECK-NEXT: code: .target sm_90a
# CHECK-NEXT: weights: embed b'\x02' x32, inside b'W' x64
# CHECK-NEXT: tensor map of buffer 0: {'dtype': 'bf16', 'dims': [64, 2], 'strides': [128], 'box': [64, 1], 'swizzle': 128}, spans 256 bytes
# CHECK-NEXT: launch k0 grid [2, 1, 1] shared 65536 args [{'buffer': 1}, {'buffer': 2}, {'buffer': 4}, {'buffer': 3}, {'i64': -3}, {'i32': 7}, {'f32': 1065353216}]
summary(load_plan(write(doc)))

# The folder moves (to the GPU machine): paths are found beside the JSON.
# CHECK-NEXT: moved: forward: ptx for sm_90a
# CHECK-NEXT: code: .target sm_90a
# CHECK-NEXT: weights: embed b'\x02' x32, inside b'W' x64
# CHECK-NEXT: tensor map of buffer 0: {{.*}}, spans 256 bytes
# CHECK-NEXT: launch k0 grid [2, 1, 1] {{.*}}
moved = os.path.join(tmp, "moved")
shutil.move(folder, moved)
print("moved: ", end="")
summary(load_plan(os.path.join(moved, "m.plan.json")))
shutil.move(moved, folder)


def refused(what, d, function=None, read_code=False):
    try:
        p = load_plan(write(d), function)
        if read_code:
            ptx_text(p)
        print(f"{what}: accepted")
    except PlanError as e:
        print(f"{what}: {str(e).replace(plan_json, 'PLAN')}")


def edited(edit):
    d = json.loads(json.dumps(doc))
    edit(d, d["functions"][0])
    return d


# CHECK-NEXT: by name: PLAN: function 'dynamic': the runtime cannot run it: dynamic shapes are not supported by the CUDA executor yet
refused("by name", doc, "dynamic")
# CHECK-NEXT: no such function: PLAN: no function 'nope' (has forward, dynamic)
refused("no such function", doc, "nope")
# CHECK-NEXT: first unsupported: PLAN: function 'forward': the runtime cannot run it: too big
refused("first unsupported", edited(lambda d, f: f.update(unsupported="too big")))
# CHECK-NEXT: input index: PLAN: function 'forward': buffer 0: input 1 of 1
refused("input index", edited(lambda d, f: f["buffers"][0].update(input=1)))
# CHECK-NEXT: weight size: PLAN: function 'forward': buffer 2: 16 bytes, weight 0 has 32
refused("weight size", edited(lambda d, f: f["buffers"][2].update(bytes=16)))
# CHECK-NEXT: map span: PLAN: function 'forward': buffer 1: the tensor map spans 384 bytes, buffer 0 has 256
refused("map span", edited(lambda d, f: f["buffers"][1].update(dims=[64, 3])))
# CHECK-NEXT: map of a map: PLAN: function 'forward': buffer 1: tensor map of buffer 1, not an input, weight or temporary buffer
refused("map of a map", edited(lambda d, f: f["buffers"][1].update(source=1)))
# CHECK-NEXT: swizzle: PLAN: function 'forward': buffer 1: tensor map swizzle 16
refused("swizzle", edited(lambda d, f: f["buffers"][1].update(swizzle=16)))
# CHECK-NEXT: kind: PLAN: function 'forward': buffer 3: unknown kind 'scratch'
refused("kind", edited(lambda d, f: f["buffers"][3].update(kind="scratch")))
# CHECK-NEXT: argument: PLAN: function 'forward': launch 0 (k0): buffer 5 of 5
refused("argument", edited(lambda d, f: f["launches"][0]["args"].append({"buffer": 5})))
# CHECK-NEXT: scalar: PLAN: function 'forward': launch 0 (k0): malformed argument {'f64': 1}
refused("scalar", edited(lambda d, f: f["launches"][0]["args"].append({"f64": 1})))
# CHECK-NEXT: grid: PLAN: function 'forward': launch 0 (k0) grid: expected 3 integers, got [2, 1]
refused("grid", edited(lambda d, f: f["launches"][0].update(grid=[2, 1])))
# CHECK-NEXT: outputs: PLAN: function 'forward': 2 output buffers for 1 outputs
refused("outputs", edited(lambda d, f: f.update(output_buffers=[3, 3])))
# CHECK-NEXT: not a plan: PLAN: malformed plan: KeyError: 'functions'
refused("not a plan", {"artifact": "m.mnemo"})
# CHECK-NEXT: CPU code: {{.*}}m.mnemo: holds elf code, not PTX (compile for a GPU target, --target=sm_90a)
refused("CPU code", edited(lambda d, f: d.update(code_format="elf")), read_code=True)
# CHECK-NEXT: short file: {{.*}}m.mnemo: the code at bytes [1000000, 1000061), past the file's end (147 bytes)
refused("short file", edited(lambda d, f: d["code"].update(offset=1000000)), read_code=True)
# CHECK-NEXT: side file: {{.*}}m.mnemo.weights: weight 0 (embed) at bytes [90, 122), past the file's end (96 bytes)
d = edited(lambda d, f: d["weights"][0].update(offset=90))
try:
    weight_bytes(load_plan(write(d)), 0)
except PlanError as e:
    print(f"side file: {e}")

# The cubins mnemoc's ptxas made (gpu_binaries): the one of the device's
# chip exactly, as the runtime takes it; none for another chip; a chip the
# runtime would refuse, or a binary past the file's end, refused.
# CHECK-NEXT: binary for 9.0: b'MNA1-h' (6 bytes), for 8.6: None, 8.0 of none: None
d = edited(lambda d, f: d.update(gpu_binaries=[{"chip": "sm_90a", "offset": 0, "size": 6}]))
p = load_plan(write(d))
print(f"binary for 9.0: {gpu_binary(p, (9, 0))!r} ({len(gpu_binary(p, (9, 0)))} bytes), "
      f"for 8.6: {gpu_binary(p, (8, 6))}, 8.0 of none: {gpu_binary(load_plan(write(doc)), (8, 0))}")
# CHECK-NEXT: chip: PLAN: GPU binary 0: chip 'compute_90' is not sm_NN[a]
refused("chip", edited(lambda d, f: d.update(gpu_binaries=[{"chip": "compute_90", "offset": 0,
                                                              "size": 6}])))
# CHECK-NEXT: empty binary: PLAN: GPU binary 0 size: expected an integer >= 1, got 0
refused("empty binary", edited(lambda d, f: d.update(gpu_binaries=[{"chip": "sm_80", "offset": 0,
                                                                      "size": 0}])))
# CHECK-NEXT: past the end: {{.*}}m.mnemo: the sm_80 binary at bytes [140, 150), past the file's end (147 bytes)
try:
    gpu_binary(load_plan(write(edited(lambda d, f: d.update(
        gpu_binaries=[{"chip": "sm_80", "offset": 140, "size": 10}])))), (8, 0))
except PlanError as e:
    print(f"past the end: {e}")

# A dynamic plan: one input of N rows (N in 1..8), the tensor map's rows,
# the output's rows and bytes, the first kernel's grid (ceil(N/2)) and
# three scalars (N; N - 4 and N + 5 + 2^32 as i32) computed from N; the
# second kernel runs N - 4 blocks when N > 4, else none (dropped).
dyn = json.loads(json.dumps(doc))
dyn["weights"] = []
dyn["functions"] = [{
    "name": "rows",
    "inputs": [{"name": "x", "dtype": "bf16", "shape": [-1, 64], "max_shape": [8, 64]}],
    "outputs": [{"name": "y", "dtype": "f32", "shape": [-1, 8], "max_shape": [8, 8]}],
    "unsupported": "",
    "exprs": [["input_dim", 0, 0, 0, 0], ["const", 0, 0, 0, 32], ["mul", 0, 1, 0, 0],
              ["const", 0, 0, 0, 2], ["ceil_div_s", 0, 3, 0, 0], ["const", 0, 0, 0, 4],
              ["sub", 0, 5, 0, 0], ["sgt", 0, 5, 0, 0], ["const", 0, 0, 0, 0],
              ["select", 6, 8, 7, 0], ["const", 0, 0, 0, 2**32 + 5], ["add", 10, 0, 0, 0]],
    "output_dim_exprs": [0, -1],
    "buffers": [
        {"kind": "input", "input": 0, "bytes": 0},
        {"kind": "tensor_map", "source": 0, "dtype": "bf16", "dims": [64, 0], "strides": [128],
         "box": [64, 1], "swizzle": 128, "dims_exprs": [-1, 0], "bytes": 128},
        {"kind": "temporary", "bytes": 0, "bytes_expr": 2},
        {"kind": "temporary", "bytes": 16}],
    "launches": [
        {"kernel": "k0", "grid": [0, 1, 1], "grid_exprs": [4, -1, -1], "block": [128, 1, 1],
         "shared_bytes": 0, "args": [{"buffer": 1}, {"buffer": 2}, {"i64_expr": 0},
                                     {"i32_expr": 6}, {"i32_expr": 11}, {"i32": 7}]},
        {"kernel": "k1", "grid": [0, 1, 1], "grid_exprs": [9, -1, -1], "block": [32, 1, 1],
         "shared_bytes": 0, "args": [{"buffer": 3}, {"i64_expr": 9}]}],
    "output_buffers": [2]}]


def dyn_edited(edit):
    d = json.loads(json.dumps(dyn))
    edit(d["functions"][0])
    return d


def at_shapes(what, d, shapes, function=None):
    """Prints the plan of `function` at `shapes`, or why it is refused."""
    try:
        p = load_plan(write(d), function, shapes)
    except PlanError as e:
        print(f"{what}: {str(e).replace(plan_json, 'PLAN')}")
        return
    print(f"{what}: " + "; ".join(f"{l['kernel']} grid {l['grid']} args {l['args']}"
                                  for l in p["launches"]))
    print(f"{what}: bytes {[b['bytes'] for b in p['buffers']]}, map dims "
          f"{p['buffers'][p['tensor_maps'][0]]['dims']}, x {p['inputs'][0]['shape']}, "
          f"y {p['outputs'][0]['shape']}, exprs left: "
          f"{[k for b in p['buffers'] + p['launches'] for k in b if 'expr' in k]}")


# CHECK-NEXT: N=3: k0 grid [2, 1, 1] args [{'buffer': 1}, {'buffer': 2}, {'i64': 3}, {'i32': -1}, {'i32': 8}, {'i32': 7}]
# CHECK-NEXT: N=3: bytes [384, 128, 96, 16], map dims [64, 3], x [3, 64], y [3, 8], exprs left: []
at_shapes("N=3", dyn, [[3, 64]])
# CHECK-NEXT: N=6: k0 grid [3, 1, 1] args [{'buffer': 1}, {'buffer': 2}, {'i64': 6}, {'i32': 2}, {'i32': 11}, {'i32': 7}]; k1 grid [2, 1, 1] args [{'buffer': 3}, {'i64': 2}]
# CHECK-NEXT: N=6: bytes [768, 128, 192, 16], map dims [64, 6], x [6, 64], y [6, 8], exprs left: []
at_shapes("N=6", dyn, ((6, 64),))
# CHECK-NEXT: no shapes: PLAN: function 'rows': its sizes depend on the input dims (a dynamic plan); load it at input shapes (load_plan(..., shapes=...)), or compile it with --input-shape
refused("no shapes", dyn)
# CHECK-NEXT: count: PLAN: function 'rows': 2 shapes for 1 inputs
at_shapes("count", dyn, [[3, 64], [3, 64]])
# CHECK-NEXT: rank: PLAN: function 'rows': input 'x': rank 1, expected 2
at_shapes("rank", dyn, [[3]])
# CHECK-NEXT: static dim: PLAN: function 'rows': input 'x': dim 1 is 32, expected 64
at_shapes("static dim", dyn, [[3, 32]])
# CHECK-NEXT: empty: PLAN: function 'rows': input 'x': dim 0 is 0, expected 1..8 (dynamic)
at_shapes("empty", dyn, [[0, 64]])
# CHECK-NEXT: over max: PLAN: function 'rows': input 'x': dim 0 is 9, expected 1..8 (dynamic)
at_shapes("over max", dyn, [[9, 64]])
# CHECK-NEXT: not an int: PLAN: function 'rows': input 'x': dim 0 is 3.0, not an integer
at_shapes("not an int", dyn, [[3.0, 64]])
# CHECK-NEXT: not a list: PLAN: function 'rows': shapes 3: expected a list of shapes
at_shapes("not a list", dyn, 3)
# A static plan at its own shapes, and at others.
# CHECK-NEXT: static: forward x [2, 64], 1 launches
p = load_plan(write(doc), shapes=[(2, 64)])
print(f"static: {p['function']} x {p['inputs'][0]['shape']}, {len(p['launches'])} launches")
# CHECK-NEXT: static at 4x64: PLAN: function 'forward': input 'x': dim 0 is 4, expected 2
at_shapes("static at 4x64", doc, [[4, 64]])
# What the runtime refuses at a call, and the static checks on the values.
# CHECK-NEXT: zero divisor: PLAN: function 'rows': expression 4 (ceil_div_s) divides by zero or overflows at these input shapes
at_shapes("zero divisor", dyn_edited(lambda f: f["exprs"][3].__setitem__(4, 0)), [[3, 64]])
# CHECK-NEXT: overflow: PLAN: function 'rows': expression 2 (mul) divides by zero or overflows at these input shapes
at_shapes("overflow", dyn_edited(lambda f: f["exprs"][1].__setitem__(4, 2**62)), [[3, 64]])
# CHECK-NEXT: later operand: PLAN: function 'rows': expression 2: an operand is not an earlier expression
at_shapes("later operand", dyn_edited(lambda f: f["exprs"][2].__setitem__(2, 5)), [[3, 64]])
# CHECK-NEXT: unknown op: PLAN: function 'rows': expression 2: unknown operation 'pow'
at_shapes("unknown op", dyn_edited(lambda f: f["exprs"][2].__setitem__(0, "pow")), [[3, 64]])
# CHECK-NEXT: no such expression: PLAN: function 'rows': launch 0 (k0) grid_exprs: expression 12 of 12
at_shapes("no such expression", dyn_edited(
    lambda f: f["launches"][0].update(grid_exprs=[12, -1, -1])), [[3, 64]])
# CHECK-NEXT: negative bytes: PLAN: function 'rows': buffer 2: would take -1 bytes at these input shapes
at_shapes("negative bytes", dyn_edited(lambda f: f["buffers"][2].update(bytes_expr=6)), [[3, 64]])
# CHECK-NEXT: negative grid: PLAN: function 'rows': launch 0 (k0): would have grid size -1 at these input shapes
at_shapes("negative grid", dyn_edited(
    lambda f: f["launches"][0].update(grid_exprs=[6, -1, -1])), [[3, 64]])
# CHECK-NEXT: map span: PLAN: function 'rows': buffer 1: the tensor map spans 12288 bytes, buffer 0 has 384
at_shapes("map span", dyn_edited(lambda f: f["buffers"][1].update(dims_exprs=[-1, 2])), [[3, 64]])
# CHECK-NEXT: map dims: PLAN: function 'rows': buffer 1 dims_exprs: [0] for 2 values
at_shapes("map dims", dyn_edited(lambda f: f["buffers"][1].update(dims_exprs=[0])), [[3, 64]])
# CHECK-NEXT: small output: PLAN: function 'rows': output 'y': 96 bytes, more than its buffer 2 has (32)
at_shapes("small output", dyn_edited(lambda f: f["buffers"][2].update(bytes_expr=1)), [[3, 64]])
# CHECK-NEXT: output dims: PLAN: function 'rows': output_dim_exprs [0] for 2 output dims
at_shapes("output dims", dyn_edited(lambda f: f.update(output_dim_exprs=[0])), [[3, 64]])
# CHECK-NEXT: negative dim: PLAN: function 'rows': output 'y' would have dim 0 = -1 at these input shapes
at_shapes("negative dim", dyn_edited(lambda f: f.update(output_dim_exprs=[6, -1])), [[3, 64]])

# Every operation, at the edges of its semantics (int64 wrapping for the
# unsigned ones, division rounding): its values passed as i64 arguments.
ops = [("add", -7, 2), ("sub", -7, 2), ("mul", -7, 2), ("div_s", -7, 2),
       ("floor_div_s", -7, 2), ("ceil_div_s", -7, 2), ("floor_div_s", -7, -2),
       ("ceil_div_s", -7, -2), ("ceil_div_s", 7, 2), ("rem_s", -7, 2), ("rem_s", 7, -2),
       ("min_s", -1, 3), ("max_s", -1, 3), ("div_u", -1, 2), ("rem_u", -1, 10),
       ("min_u", -1, 3), ("max_u", -1, 3), ("eq", 3, 3), ("ne", 3, 3), ("slt", -1, 3),
       ("sle", 3, 3), ("sgt", -1, 3), ("sge", -1, 3), ("ult", -1, 3), ("ule", 3, 3),
       ("ugt", -1, 3), ("uge", -1, 3), ("select", 0, 1), ("select", 3, 1)]
ops_doc = json.loads(json.dumps(dyn))
exprs, args = ops_doc["functions"][0]["exprs"], []
for op, a, b in ops:
    exprs += [["const", 0, 0, 0, a], ["const", 0, 0, 0, b]]
    i = len(exprs)
    # select (c ? a : b): a ? 10 : 20 here.
    exprs += ([["const", 0, 0, 0, 10], ["const", 0, 0, 0, 20], ["select", i, i + 1, i - 2, 0]]
              if op == "select" else [[op, i - 2, i - 1, 0, 0]])
    args.append({"i64_expr": len(exprs) - 1})
ops_doc["functions"][0]["launches"][0]["args"] = args
p = load_plan(write(ops_doc), shapes=[[3, 64]])
# CHECK-NEXT: ops: add -5, sub -9, mul -14, div_s -3, floor_div_s -4, ceil_div_s -3, floor_div_s 3, ceil_div_s 4, ceil_div_s 4, rem_s -1, rem_s 1, min_s -1, max_s 3, div_u 9223372036854775807, rem_u 5, min_u 3, max_u -1, eq 1, ne 0, slt 1, sle 1, sgt 0, sge 0, ult 0, ule 1, ugt 1, uge 1, select 20, select 10
print("ops: " + ", ".join(f"{op} {arg['i64']}"
                          for (op, _, _), arg in zip(ops, p["launches"][0]["args"])))
# CHECK-NEXT: int64 edge: PLAN: function 'rows': expression 14 (div_s) divides by zero or overflows at these input shapes
at_shapes("int64 edge", dyn_edited(lambda f: f["exprs"].extend(
    [["const", 0, 0, 0, -2**63], ["const", 0, 0, 0, -1], ["div_s", 12, 13, 0, 0]])), [[3, 64]])

# dump_plan runs the tool in the artifact's folder and keeps its JSON.
# CHECK-NEXT: dumped m.plan.json from m.mnemo --dump-plan: forward, 1 launches
tool = os.path.join(tmp, "fake-mnemo-run")
with open(tool, "w") as f:
    f.write("#!/bin/sh\necho \"$@\" > args\ncat dumped.json\n")
os.chmod(tool, os.stat(tool).st_mode | stat.S_IEXEC)
write(dict(doc, artifact="m.mnemo"), os.path.join(folder, "dumped.json"))
os.remove(plan_json)
path, p = dump_plan(tool, os.path.join(folder, "m.mnemo"))
args = open(os.path.join(folder, "args")).read().strip()
print(f"dumped {os.path.relpath(path, folder)} from {args}: {p['function']}, "
      f"{len(p['launches'])} launches")
# CHECK-NEXT: failing tool: mnemo-run --dump-plan exited 1: {{.*}}
try:
    dump_plan(shutil.which("false"), os.path.join(folder, "m.mnemo"))
except PlanError as e:
    print(f"failing tool: {e}")

# mnemoc's artifacts, dumped by mnemo-run.
# CHECK-NEXT: decoder: forward for sm_90a: input input_ids i64 [1, 9], output logits f32 [1, 9, 64]
# CHECK-NEXT: decoder: {{[1-9][0-9]*}} launches, every kernel in the PTX, output in a temporary
# CHECK-NEXT: decoder: {{[1-9][0-9]*}} weights in decoder.mnemo.weights, as their shapes say; every one a buffer
# CHECK-NEXT: decoder moved: the same code and weights
real, mnemo_run = os.path.join(tmp, "real"), sys.argv[2]
path, p = dump_plan(mnemo_run, os.path.join(real, "decoder.mnemo"))
(i,), (o,) = p["inputs"], p["outputs"]
print(f"decoder: {p['function']} for {p['target']['cpu']}: input {i['name']} {i['dtype']} "
      f"{i['shape']}, output {o['name']} {o['dtype']} {o['shape']}")
code = ptx_text(p)
kernels = {launch["kernel"] for launch in p["launches"]}
assert all(f".entry {k}(" in code for k in kernels), kernels
assert p["buffers"][p["output_buffers"][0]]["kind"] == "temporary"
print(f"decoder: {len(p['launches'])} launches, every kernel in the PTX, output in a temporary")
files = {os.path.relpath(w["file"], real) for w in p["weights"]}
weights = [weight_bytes(p, k) for k in range(len(p["weights"]))]
for w, data in zip(p["weights"], weights):
    n = DTYPE_BYTES[w["dtype"]]
    for d in w["shape"]:
        n *= d
    assert len(data) == n == w["size"], w
used = sorted(b["weight"] for b in p["buffers"] if b["kind"] == "weight")
assert used == list(range(len(weights))), used
print(f"decoder: {len(weights)} weights in {', '.join(sorted(files))}, as their shapes say; "
      f"every one a buffer")
elsewhere = os.path.join(tmp, "elsewhere")
os.makedirs(elsewhere)
for name in ("decoder.mnemo", "decoder.mnemo.weights", "decoder.plan.json"):
    shutil.move(os.path.join(real, name), elsewhere)
q = load_plan(os.path.join(elsewhere, "decoder.plan.json"))
assert ptx_text(q) == code
assert [weight_bytes(q, k) for k in range(len(weights))] == weights
print("decoder moved: the same code and weights")

# CHECK-NEXT: attention: gqa_causal, decode, window_dv, dynamic for sm_80
# CHECK-NEXT: dynamic: {{.*}}attention.plan.json: function 'dynamic': its sizes depend on the input dims (a dynamic plan); load it at input shapes (load_plan(..., shapes=...)), or compile it with --input-shape
path, p = dump_plan(mnemo_run, os.path.join(real, "attention.mnemo"))
names = [f["name"] for f in json.load(open(path))["functions"]]
print(f"attention: {', '.join(names)} for {p['target']['cpu']}")
try:
    load_plan(path, "dynamic")
except PlanError as e:
    print(f"dynamic: {e}")

# CHECK-NEXT: host: elf, 0 buffers, {{[1-9][0-9]*}} calls
# CHECK-NEXT: host code: {{.*}}host.mnemo: holds elf code, not PTX (compile for a GPU target, --target=sm_90a)
_, p = dump_plan(mnemo_run, os.path.join(real, "host.mnemo"))
print(f"host: {p['code_format']}, {len(p['buffers'])} buffers, {len(p['calls'])} calls")
try:
    ptx_text(p)
except PlanError as e:
    print(f"host code: {e}")

# The dynamic bf16 attention (8 query heads over 2 KV heads, D 64) at the
# shapes the runtime's tests run it: a prefill of 7 tokens (one split, the
# combine's grid empty), a decode step over 300 keys (split in 2, then the
# combine of the 8 rows), a batch of 2 at 3000 tokens (188 query tiles of
# 16 positions, no combine). Each the launches the runtime's executor
# makes, on the driver stand-in.
# CHECK-NEXT: dynamic attention: {{.*}}dynamic.plan.json: function 'attend': its sizes depend on the input dims (a dynamic plan); {{.*}}
artifact = os.path.join(real, "dynamic.mnemo")
try:
    dump_plan(mnemo_run, artifact)
except PlanError as e:
    print(f"dynamic attention: {e}")
path, _ = dump_plan(mnemo_run, artifact, shapes=[[1, 8, 7, 64], [1, 2, 7, 64], [1, 2, 7, 64]])
# CHECK-NEXT: B=1,S=7: attention_mma [1, 2, 1]; output [1, 8, 7, 64]; maps [64, 7, 8, 1] [64, 7, 2, 1] [64, 7, 2, 1]
# CHECK-NEXT: decode 1x300: attention_mma [1, 2, 2], attention_combine [8, 1, 1]; output [1, 8, 1, 64]; maps [64, 1, 8, 1] [64, 300, 2, 1] [64, 300, 2, 1]
# CHECK-NEXT: B=2,S=3000: attention_mma [188, 2, 2]; output [2, 8, 3000, 64]; maps [64, 3000, 8, 2] [64, 3000, 2, 2] [64, 3000, 2, 2]
# CHECK-NEXT: the runtime's launches at 7 shapes: the same
shapes_test, fake_cuda = sys.argv[3], sys.argv[4]
cases = {"B=1,S=7": (1, 7, 7), "decode 1x300": (1, 1, 300), "B=2,S=3000": (2, 3000, 3000),
         "B=16,S=4096": (16, 4096, 4096), "decode 4x4096": (4, 1, 4096), "B=3,S=65": (3, 65, 65),
         "B=1,S=1": (1, 1, 1)}
expected, runs = [], []
for n, (name, (b, sq, skv)) in enumerate(cases.items()):
    shapes = [[b, 8, sq, 64], [b, 2, skv, 64], [b, 2, skv, 64]]
    p = load_plan(path, shapes=shapes)
    runs.append(",".join("x".join(map(str, s)) for s in shapes))
    expected += [f"shapes-test: run {n + 1}: {runs[-1]}"] + [
        f"fake-cuda: launch {l['kernel']} grid {' '.join(map(str, l['grid']))}"
        for l in p["launches"]]
    if n < 3:
        maps = " ".join(str(p["buffers"][i]["dims"]) for i in p["tensor_maps"])
        print(f"{name}: " + ", ".join(f"{l['kernel']} {l['grid']}" for l in p["launches"])
              + f"; output {p['outputs'][0]['shape']}; maps {maps}")
r = subprocess.run([shapes_test, artifact, "input0,input1,input2", *runs], capture_output=True,
                   text=True, check=True, env=dict(os.environ, MNEMO_CUDA_DRIVER=fake_cuda))
ran = [line for line in r.stderr.splitlines() if "run " in line or "launch" in line]
assert ran == expected, (ran, expected)
print(f"the runtime's launches at {len(cases)} shapes: the same")

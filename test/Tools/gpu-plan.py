# RUN: rm -rf %t && mkdir -p %t/real
# RUN: mnemoc %mnemo_src/examples/tiny-decoder/model.mlir --input-shape input_ids=1x9 --target=sm_90a --external-weights -o %t/real/decoder.mnemo
# RUN: mnemoc %mnemo_src/test/Target/NVPTX/attention.mlir --target=sm_80 -o %t/real/attention.mnemo
# RUN: mnemoc %mnemo_src/test/Target/NVPTX/attention.mlir --target=host -o %t/real/host.mnemo
# RUN: %python %s %t %mnemo_run | FileCheck %s
"""scripts/gpu/plan.py, through which the GPU checks and benchmarks read an
artifact's launch plan (the JSON of `mnemo-run ARTIFACT --dump-plan`): a
plan written here, with a stand-in artifact and side weights file, is read,
its code and weights found at their offsets (also after the folder moved),
and a plan the runtime cannot run or a malformed one is refused with a
message; dump_plan runs the tool in the artifact's folder. Then the same on
mnemoc's artifacts through mnemo-run: the tiny decoder's plan for sm_90a
(weights in the side file, read back after the folder moved), a function
with dynamic shapes refused with the runtime's reason, a CPU plan read but
its code refused as PTX."""

import json
import os
import shutil
import stat
import sys

sys.path.insert(0, os.path.join(os.environ.get("MNEMO_SRC", os.path.join(
    os.path.dirname(__file__), "..", "..")), "scripts", "gpu"))
from plan import (PlanError, dump_plan, load_plan, ptx_text,  # noqa: E402
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
# CHECK-NEXT: dynamic: {{.*}}attention.plan.json: function 'dynamic': its sizes depend on the input dims (a dynamic plan); compile it with --input-shape, or run it with mnemo-run
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

"""Writes copies of a good GPU artifact with one damaged launch-plan field.

    corrupt_gpu_plan.py GOOD.mnemo OUTDIR
    corrupt_gpu_plan.py --dynamic GOOD.mnemo OUTDIR

GOOD.mnemo is the sm_90a attention kernel's artifact (test/Target/NVPTX/
attention-kernel-ptx.mlir): an input, a tensor map of it, ..., one launch.
With --dynamic, the same kernel at a dynamic batch and sequence
(test/Runtime/Inputs/dynamic-attention.mlir): three temporaries, then
input 0 and its tensor map (buffer 4), whose dims and strides are
expressions. OUTDIR/NAME.mnemo each damage one field of function 0's plan
(NAME says which), re-signed so that the plan's checks, not the checksum,
see it.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corrupt_artifact import ARTIFACT, KERNEL, Artifact  # noqa: E402

# Field numbers (declaration order in artifact.fbs).
FUNCTION = dict(buffers=6, launches=7, output_buffers=8)
BUFFER = dict(kind=0, index=1, bytes=2, tensor_map=3, bytes_expr=4)
TENSOR_MAP = dict(source=0, dtype=1, dims=2, strides=3, box=4, swizzle=5,
                  dims_exprs=6, strides_exprs=7)
LAUNCH = dict(kernel=0, grid=1, block=2, shared_bytes=3, args=4)
ARGUMENT_BYTES = 16  # struct Argument { kind: ubyte; value: uint64 }


def function0(a):
    return a.element(a.root, ARTIFACT["functions"], 0)


def buffer(a, i):
    return a.element(function0(a), FUNCTION["buffers"], i)


def tensor_map(a, i):
    return a.ref(buffer(a, i), BUFFER["tensor_map"])


def launch0(a):
    return a.element(function0(a), FUNCTION["launches"], 0)


def main():
    dynamic = sys.argv[1] == "--dynamic"
    good_path, out = sys.argv[1 + dynamic], sys.argv[2 + dynamic]
    good = open(good_path, "rb").read()
    os.makedirs(out, exist_ok=True)

    def edit(name, change):
        a = Artifact(good)
        change(a)
        a.resign()
        with open(os.path.join(out, name + ".mnemo"), "wb") as f:
            f.write(bytes(a.data))

    def u32(at, value):
        return lambda a: struct.pack_into("<I", a.data, at(a), value)

    def u64(at, value):
        return lambda a: struct.pack_into("<Q", a.data, at(a), value)

    def element(vec, i, size=4):
        return lambda a: vec(a)[0] + size * i

    def field(table, fields, name):
        return lambda a: a.field(table(a), fields[name])

    def vector(table, fields, name):
        return lambda a: a.vector(table(a), fields[name])

    if dynamic:
        dims = vector(lambda a: tensor_map(a, 4), TENSOR_MAP, "dims")
        dims_exprs = vector(lambda a: tensor_map(a, 4), TENSOR_MAP,
                            "dims_exprs")
        strides_exprs = vector(lambda a: tensor_map(a, 4), TENSOR_MAP,
                               "strides_exprs")
        # Dim 1 (the sequence) is an expression; dim 0 (the columns) not.
        edit("map-dim-expr", u32(element(dims_exprs, 1), 99999))
        edit("map-dim-both", u64(element(dims, 1, 8), 7))
        edit("map-stride-expr", u32(element(strides_exprs, 0), 0))
        # Loads, but at a call the sequence dim becomes the output's bytes
        # (buffer 0): the map would reach past its source.
        edit("map-dim-too-long", lambda a: struct.pack_into(
            "<I", a.data, element(dims_exprs, 1)(a), struct.unpack_from(
                "<i", a.data,
                a.field(buffer(a, 0), BUFFER["bytes_expr"]))[0]))
        return

    # Buffer 0 is input 0, buffer 3 a tensor map of buffer 2 (stored fields:
    # a field at its default value, such as index 0, is not in the buffer).
    edit("input-bytes", u64(field(lambda a: buffer(a, 0), BUFFER, "bytes"), 24))
    edit("buffer-kind", lambda a: a.data.__setitem__(
        field(lambda a: buffer(a, 3), BUFFER, "kind")(a), 7))
    edit("map-bytes", u64(field(lambda a: buffer(a, 3), BUFFER, "bytes"), 64))
    edit("map-source", u32(field(lambda a: tensor_map(a, 3), TENSOR_MAP,
                                 "source"), 3))
    edit("map-dims", u64(element(vector(lambda a: tensor_map(a, 3), TENSOR_MAP,
                                        "dims"), 0, 8), 0))
    edit("map-span", u64(element(vector(lambda a: tensor_map(a, 3), TENSOR_MAP,
                                        "dims"), 3, 8), 1 << 20))
    edit("map-stride", u64(element(vector(lambda a: tensor_map(a, 3),
                                          TENSOR_MAP, "strides"), 0, 8), 250))
    edit("map-box", u32(element(vector(lambda a: tensor_map(a, 3), TENSOR_MAP,
                                       "box"), 0), 0))
    edit("map-swizzle", u32(field(lambda a: tensor_map(a, 3), TENSOR_MAP,
                                  "swizzle"), 33))
    edit("grid", u32(element(vector(launch0, LAUNCH, "grid"), 0), 0))
    edit("block", u32(element(vector(launch0, LAUNCH, "block"), 0), 2048))
    edit("shared", u32(field(launch0, LAUNCH, "shared_bytes"), 1 << 21))
    args = vector(launch0, LAUNCH, "args")
    edit("arg-buffer", u64(lambda a: args(a)[0] + 8, 999))
    edit("arg-kind", lambda a: a.data.__setitem__(args(a)[0], 9))
    edit("num-args", lambda a: struct.pack_into(
        "<I", a.data,
        a.field(a.element(a.root, ARTIFACT["kernels"], 0), KERNEL["num_args"]),
        5))
    edit("output-buffer", u32(element(vector(function0, FUNCTION,
                                             "output_buffers"), 0), 999))


if __name__ == "__main__":
    main()

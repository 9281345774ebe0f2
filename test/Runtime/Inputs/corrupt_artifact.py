"""Writes damaged copies of a good .mnemo artifact for the runtime tests.

    corrupt_artifact.py GOOD.mnemo OUTDIR
    corrupt_artifact.py --resign EDITED.mnemo OUT.mnemo

OUTDIR/reject/NAME.mnemo are artifacts the runtime must refuse, one damage
each (NAME says which); OUTDIR/flips/NNNNN.mnemo flip one metadata byte
each. Targeted edits of a field are re-signed (metadata_crc32 recomputed)
so that the check they aim at, not the checksum, rejects them. --resign
re-signs an artifact a test edited itself.

A small reader of the size-prefixed FlatBuffer (runtime/schema/artifact.fbs)
finds the fields; field numbers are their order in the schema.
"""

import os
import random
import struct
import sys
import zlib

# Field numbers (declaration order in artifact.fbs).
ARTIFACT = dict(abi_version=0, target=1, code_format=2, code=3, kernels=4,
                functions=5, weights=6, weights_file=7, weights_offset=8,
                weights_size=9, provenance=10, metadata_crc32=11)
TARGET = dict(triple=0)
KERNEL = dict(symbol=0, num_args=1, num_results=2)
FUNCTION = dict(name=0, inputs=1, outputs=2, weights=3, calls=4,
                output_slots=5)
CALL = dict(kernel=0, args=1, results=2)


class Artifact:
    def __init__(self, data):
        self.data = bytearray(data)
        self.size = struct.unpack_from("<I", self.data, 0)[0]
        self.root = 4 + self.u32(4)

    def u32(self, at):
        return struct.unpack_from("<I", self.data, at)[0]

    def field(self, table, index):
        """Address of field `index` of the table at `table`, or None."""
        vtable = table - struct.unpack_from("<i", self.data, table)[0]
        vsize = struct.unpack_from("<H", self.data, vtable)[0]
        if 4 + 2 * index >= vsize:
            return None
        off = struct.unpack_from("<H", self.data, vtable + 4 + 2 * index)[0]
        return table + off if off else None

    def ref(self, table, index):
        """The table, vector or string field `index` points to."""
        at = self.field(table, index)
        return at + self.u32(at)

    def vector(self, table, index):
        """(start of elements, length) of a vector field."""
        v = self.ref(table, index)
        return v + 4, self.u32(v)

    def element(self, table, index, i):
        """Table element i of a vector-of-tables field."""
        start, _ = self.vector(table, index)
        at = start + 4 * i
        return at + self.u32(at)

    def resign(self):
        at = self.field(self.root, ARTIFACT["metadata_crc32"])
        if at is None:
            return
        struct.pack_into("<I", self.data, at, 0)
        crc = zlib.crc32(bytes(self.data[4:4 + self.size]))
        struct.pack_into("<I", self.data, at, crc)


def main():
    if sys.argv[1] == "--resign":
        a = Artifact(open(sys.argv[2], "rb").read())
        a.resign()
        with open(sys.argv[3], "wb") as f:
            f.write(bytes(a.data))
        return
    good_path, out = sys.argv[1], sys.argv[2]
    good = open(good_path, "rb").read()
    reject = os.path.join(out, "reject")
    flips = os.path.join(out, "flips")
    os.makedirs(reject, exist_ok=True)
    os.makedirs(flips, exist_ok=True)

    def write(name, data):
        with open(os.path.join(reject, name + ".mnemo"), "wb") as f:
            f.write(bytes(data))

    def edit(name, change):
        a = Artifact(good)
        change(a)
        a.resign()
        write(name, a.data)

    a = Artifact(good)
    metadata_end = 4 + a.size
    root = a.root
    weights_size = struct.unpack_from(
        "<Q", a.data, a.field(root, ARTIFACT["weights_size"]))[0]
    assert weights_size > 0 and len(good) > metadata_end, \
        "the good artifact needs an embedded weights segment"

    # Truncations: inside the header, the metadata, the weights.
    for name, n in (("empty", 0), ("1", 1), ("4", 4), ("11", 11),
                    ("12", 12), ("100", 100), ("metadata", metadata_end - 1),
                    ("after-metadata", metadata_end),
                    ("weights", len(good) - 1)):
        write(f"truncated-{name}", good[:n])

    # The header.
    write("identifier", good[:8] + b"XXXX" + good[12:])
    write("size-prefix", good[:3] + bytes([good[3] ^ 0x40]) + good[4:])
    write("root-offset", good[:5] + bytes([good[5] ^ 0x10]) + good[6:])
    write("checksum", good[:metadata_end - 1] +
          bytes([good[metadata_end - 1] ^ 0x01]) + good[metadata_end:])

    # Fields, each re-signed.
    def at(a, table, fields, name):
        where = a.field(table(a), fields[name])
        assert where is not None, f"field '{name}' is not stored"
        return where

    def set_u32(table, fields, name, value):
        return lambda a: struct.pack_into(
            "<I", a.data, at(a, table, fields, name), value)

    def set_u64(table, fields, name, value):
        return lambda a: struct.pack_into(
            "<Q", a.data, at(a, table, fields, name), value)

    def art(a):
        return a.root

    def kernel0(a):
        return a.element(a.root, ARTIFACT["kernels"], 0)

    def function0(a):
        return a.element(a.root, ARTIFACT["functions"], 0)

    def call0(a):
        return a.element(function0(a), FUNCTION["calls"], 0)

    def last_call(a):
        # Call 0 of the last function: its kernel index is not 0 (a
        # default, hence not stored) when there are several functions.
        _, count = a.vector(a.root, ARTIFACT["functions"])
        f = a.element(a.root, ARTIFACT["functions"], count - 1)
        return a.element(f, FUNCTION["calls"], 0)

    edit("abi-version", set_u32(art, ARTIFACT, "abi_version", 4))
    edit("weights-offset-past-end",
         set_u64(art, ARTIFACT, "weights_offset",
                 (len(good) + 127) // 64 * 64))
    weights_offset = struct.unpack_from(
        "<Q", a.data, a.field(root, ARTIFACT["weights_offset"]))[0]
    edit("weights-offset-misaligned",
         set_u64(art, ARTIFACT, "weights_offset", weights_offset + 32))
    # The segment shrinks under the first weight (whose offset, 0, is the
    # field's default and so not stored).
    edit("weight-past-segment", set_u64(art, ARTIFACT, "weights_size", 64))
    edit("kernel-index", set_u32(last_call, CALL, "kernel", 7))
    edit("num-args", lambda a: struct.pack_into(
        "<I", a.data, a.field(kernel0(a), KERNEL["num_args"]),
        a.u32(a.field(kernel0(a), KERNEL["num_args"])) + 1))

    def first_arg(a):
        start, _ = a.vector(call0(a), CALL["args"])
        struct.pack_into("<I", a.data, start, 999)
    edit("arg-slot", first_arg)

    def first_output_slot(a):
        start, _ = a.vector(function0(a), FUNCTION["output_slots"])
        struct.pack_into("<I", a.data, start, 999)
    edit("output-slot", first_output_slot)

    def triple(a):
        s = a.ref(a.ref(a.root, ARTIFACT["target"]), TARGET["triple"])
        a.data[s + 4] = ord("y")  # "x86_64-..." -> "y86_64-..."
    edit("target", triple)

    def symbol(a):
        s = a.ref(kernel0(a), KERNEL["symbol"])
        a.data[s + 4] ^= 0x20
    edit("symbol", symbol)

    def code(offset, value):
        def change(a):
            start, _ = a.vector(a.root, ARTIFACT["code"])
            a.data[start + offset:start + offset + len(value)] = value
        return change
    edit("code-not-elf", code(0, b"JUNK"))
    edit("code-machine", code(18, struct.pack("<H", 0x1234)))

    # Random bytes, bare and behind a plausible header.
    rng = random.Random(7)
    for n in (1, 7, 64, 4096, 100000):
        noise = bytes(rng.randrange(256) for _ in range(n))
        write(f"random-{n}", noise)
        if n >= 12:
            write(f"random-header-{n}", struct.pack("<I", n - 4) +
                  noise[4:8] + b"MNA1" + noise[12:])

    # One flipped byte each, across the metadata past the identifier.
    step = max(1, (metadata_end - 12) // 40)
    for at in range(12, metadata_end, step):
        data = bytearray(good)
        data[at] ^= 0xff
        with open(os.path.join(flips, f"{at:05d}.mnemo"), "wb") as f:
            f.write(bytes(data))


if __name__ == "__main__":
    main()

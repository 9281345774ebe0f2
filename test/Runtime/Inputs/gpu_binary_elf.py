"""Checks an artifact's GPU binary (gpu-binary-ptxas.test): the image the
plan (`mnemo-run --dump-plan` JSON) places is a CUDA ELF (e_machine 190)
for the expected SM (e_flags: bits 8-15 from ELF ABI version 8, else bits
0-7).

    gpu_binary_elf.py ARTIFACT PLAN_JSON CHIP SM
"""
import json
import struct
import sys

artifact, plan_path, chip, sm = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
plan = json.load(open(plan_path))
(binary,) = plan["gpu_binaries"]
assert binary["chip"] == chip, binary
image = open(artifact, "rb").read()[binary["offset"]:binary["offset"] + binary["size"]]
assert image[:4] == b"\x7fELF", image[:4]
(machine,) = struct.unpack_from("<H", image, 18)
(flags,) = struct.unpack_from("<I", image, 48)
abi = image[8]
arch = (flags >> 8) & 0xFF if abi >= 8 else flags & 0xFF
assert machine == 190 and arch == sm, (machine, hex(flags), abi)
print("cuda elf for the chip", chip, "bytes", len(image))

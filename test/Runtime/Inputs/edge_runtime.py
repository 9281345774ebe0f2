"""Checks of the edge build of the runtime (test/Runtime/edge-runtime.test).

  edge_runtime.py library LIB.a LIBC.so   every symbol the archive needs from
                                          outside comes from the C library;
                                          prints its stripped size and fails
                                          above 150 KB
  edge_runtime.py needed PROGRAM          the shared libraries it needs
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

BOUND = 150_000  # bytes of code and data, stripped


def tool(name):
    for candidate in (name + "-22", name, os.path.join("/usr/lib/llvm-22/bin", name)):
        path = shutil.which(candidate)
        if path:
            return path
    sys.exit(f"edge_runtime.py: {name} not found")


def symbols(args):
    out = subprocess.run([tool("llvm-nm")] + args, check=True,
                         capture_output=True, text=True).stdout
    return out.split()


def library(lib, libc):
    undefined = set(symbols(["-u", "--format=just-symbols", lib]))
    defined = set(symbols(["--defined-only", "--format=just-symbols", lib]))
    provided = {re.sub(r"@.*", "", s)
                for s in symbols(["-D", "--defined-only", "--format=just-symbols", libc])}
    needed = sorted(undefined - defined)
    missing = [s for s in needed if s not in provided]
    if missing:
        sys.exit("edge_runtime.py: not in the C library: " + ", ".join(missing))
    print(f"undefined symbols: {len(needed)}, every one from the C library")

    with tempfile.TemporaryDirectory() as tmp:
        stripped = os.path.join(tmp, "lib.a")
        shutil.copy(lib, stripped)
        subprocess.run([tool("llvm-strip"), "--strip-unneeded", stripped], check=True)
        totals = subprocess.run([tool("llvm-size"), "-t", stripped], check=True,
                                capture_output=True, text=True).stdout.splitlines()[-1]
        text, data, bss = (int(x) for x in totals.split()[:3])
        archive = os.path.getsize(stripped)
    size = text + data + bss
    print(f"stripped size: {size} bytes of code and data (text {text}, data {data}, "
          f"bss {bss}; the archive file {archive} bytes with its relocations)")
    if size > BOUND:
        sys.exit(f"edge_runtime.py: {size} bytes, above the bound of {BOUND}")
    print(f"within {BOUND} bytes")


def needed(program):
    out = subprocess.run([tool("llvm-readelf"), "-d", program], check=True,
                         capture_output=True, text=True).stdout
    for name in re.findall(r"\(NEEDED\).*\[(.*)\]", out):
        print("needs", name)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "library":
        library(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "needed":
        needed(sys.argv[2])
    else:
        sys.exit(__doc__)

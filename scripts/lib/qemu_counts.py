"""Executed AArch64 instructions of a process run under qemu-aarch64.

qemu's `-d in_asm,exec,nochain` log lists each translated block's
instructions once (`IN:` then `0xADDR: WORD  mnemonic ...`) and a `Trace`
line for every execution of a block (chaining off, so none is skipped).
The log is read from a pipe as qemu writes it: a long run never lands on
disk.
"""

import re
import subprocess

_INSN = re.compile(r"^0x([0-9a-f]+):\s+\S+\s+(\S+)")
_TRACE = re.compile(r"^Trace .*\[[0-9a-f]+/([0-9a-f]+)/")


def count(argv, qemu_args=(), prefix="fmla"):
    """Runs `argv` under qemu-aarch64; returns (instructions, instructions
    whose mnemonic starts with `prefix`). Raises CalledProcessError when the
    program fails."""
    cmd = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", *qemu_args,
           "-d", "in_asm,exec,nochain", "-D", "/dev/stderr", *argv]
    blocks, execs = {}, {}
    start, n, f = None, 0, 0
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, bufsize=1 << 20)
    for line in proc.stderr:
        if line.startswith("IN:"):
            start, n, f = None, 0, 0
            continue
        m = _INSN.match(line)
        if m:
            start = int(m.group(1), 16) if start is None else start
            n += 1
            f += m.group(2).startswith(prefix)
            blocks[start] = (n, f)
            continue
        m = _TRACE.search(line)
        if m:
            a = int(m.group(1), 16)
            execs[a] = execs.get(a, 0) + 1
    if proc.wait():
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    total = sum(blocks[a][0] * c for a, c in execs.items() if a in blocks)
    matched = sum(blocks[a][1] * c for a, c in execs.items() if a in blocks)
    return total, matched

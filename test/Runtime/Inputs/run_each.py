"""Runs a command once per file and prints one line per run.

    run_each.py [--expect TEXT] FILE... -- COMMAND...

"{}" in COMMAND stands for the file. Prints "NAME: exit RC: STDERR" where
STDERR must be one line; a run killed by a signal prints "NAME: CRASH", a
multi-line stderr "NAME: MULTILINE", and with --expect a line without TEXT
also gets "UNEXPECTED". Always exits 0: FileCheck judges the output.
"""

import os
import subprocess
import sys

args = sys.argv[1:]
expect = None
if args[:1] == ["--expect"]:
    expect, args = args[1], args[2:]
split = args.index("--")
files, command = args[:split], args[split + 1:]
for path in files:
    name = os.path.basename(path)
    proc = subprocess.run([a.replace("{}", path) for a in command],
                          capture_output=True, text=True, errors="replace")
    err = proc.stderr.rstrip("\n")
    if proc.returncode < 0:
        print(f"{name}: CRASH (signal {-proc.returncode})")
    elif "\n" in err:
        print(f"{name}: MULTILINE: {err!r}")
    else:
        line = f"{name}: exit {proc.returncode}: {err}"
        if expect is not None and expect not in line:
            line += " UNEXPECTED"
        print(line)

#!/usr/bin/env bash
# Sets up and builds Mnemo, then runs every test suite: lit (dialect,
# conversion, numerics, plug-in, tools) and the GoogleTest unit tests.
# Ends with one summary line; exits non-zero when any test fails.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

ensure_packages
build_mnemo all mlir-doc
# The AArch64 runtime and mnemo-run, for the tests that run under qemu.
"$MNEMO_ROOT/scripts/build-aarch64.sh"

status=0
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

log "lit"
"$LLVM_ROOT/bin/lit" -sv --xunit-xml-output "$results/lit.xml" "$MNEMO_BUILD/test" \
  | tee "$results/lit.log" || status=1

log "unit tests"
for suite in MnemoUnitTests MnemoRuntimeUnitTests; do
  "$MNEMO_BUILD/unittests/$suite" --gtest_brief=1 \
    --gtest_output="xml:$results/unit-$suite.xml" || status=1
done

# Summary from the two machine-readable reports.
/usr/bin/python3 - "$results" <<'PY'
import sys, xml.etree.ElementTree as ET
root = sys.argv[1]
def counts(path):
    try:
        r = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return 0, 0, 0
    suites = [r] if r.tag == "testsuite" else r.findall("testsuite")
    total = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0) or 0) for s in suites)
    return total, failed, skipped
lt, lf, ls = counts(f"{root}/lit.xml")
ut = uf = us = 0
for name in ("MnemoUnitTests", "MnemoRuntimeUnitTests"):
    t, f, sk = counts(f"{root}/unit-{name}.xml")
    ut, uf, us = ut + t, uf + f, us + sk
print(f"mnemo tests: lit {lt - lf - ls}/{lt} passed, unit {ut - uf - us}/{ut} passed, "
      f"{lf + uf} failed, {ls + us} skipped")
PY
exit $status

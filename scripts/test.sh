#!/usr/bin/env bash
# Sets up and builds Mnemo, then runs every test suite: lit (dialect,
# conversion, numerics, plug-in, tools) and the GoogleTest unit tests.
# Ends with one summary line; exits non-zero when any test fails.
#
#   scripts/test.sh                              the whole suite
#   scripts/test.sh --sanitize=address,undefined the whole suite, compiler
#                                                and runtime built with ASan
#                                                and UBSan in build-address-undefined/
#   scripts/test.sh --sanitize=thread            the runtime built with TSan
#                                                (build-thread/), its unit
#                                                tests and the lit tests of
#                                                threads and CUDA executors
set -euo pipefail

sanitize=
for arg in "$@"; do
  case $arg in
    --sanitize=address,undefined|--sanitize=undefined,address|--sanitize=address|--sanitize=undefined|--sanitize=thread)
      sanitize=${arg#--sanitize=} ;;
    *) echo "usage: scripts/test.sh [--sanitize=address,undefined|thread]" >&2; exit 2 ;;
  esac
done
if [ -n "$sanitize" ]; then
  MNEMO_BUILD=${MNEMO_BUILD:-$(cd "$(dirname "$0")/.." && pwd)/build-${sanitize//,/-}}
  MNEMO_CMAKE_ARGS=(-DMNEMO_SANITIZERS="$sanitize")
  # Reports end the program with a non-zero exit, so a test fails on them.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
fi
source "$(dirname "$0")/lib/common.sh"

ensure_packages
lit_paths=("$MNEMO_BUILD/test")
if [ "$sanitize" = thread ]; then
  # What runs threads: sessions on 16 threads, identical results on any
  # count, the CUDA executor on its stand-in driver, the generator.
  build_mnemo mnemoc mnemo-opt MnemoRuntimeUnitTests mnemo-run \
    mnemo-runtime-threads-test mnemo-fake-cuda mnemo-fake-cuda-no-graphs \
    mnemo-embed-example mnemo-generate-example
  lit_paths=()
  for t in sessions-threads threads-identical cuda-executor cuda generator \
           gpu-shapes gpu-dynamic-attention embed-example; do
    lit_paths+=("$MNEMO_BUILD/test/Runtime/$t.test")
  done
else
  build_mnemo all mlir-doc
fi
# The AArch64 runtime and mnemo-run, for the tests that run under qemu.
"$MNEMO_ROOT/scripts/build-aarch64.sh"

status=0
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

log "lit"
"$LLVM_ROOT/bin/lit" -sv --xunit-xml-output "$results/lit.xml" "${lit_paths[@]}" \
  | tee "$results/lit.log" || status=1

log "unit tests"
suites=(MnemoUnitTests MnemoRuntimeUnitTests)
[ "$sanitize" = thread ] && suites=(MnemoRuntimeUnitTests)
for suite in "${suites[@]}"; do
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

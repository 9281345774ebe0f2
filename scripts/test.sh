#!/usr/bin/env bash
# Sets up and builds Mnemo, then runs every test suite: lit (dialect,
# conversion, numerics, plug-in, tools) and the GoogleTest unit tests.
# Ends with one summary line; exits non-zero when any test fails.
#
#   scripts/test.sh                              the whole suite
#   scripts/test.sh --sanitize=address,undefined the whole suite, compiler
#                                                and runtime built with ASan
#                                                and UBSan in build-address-undefined/
#   scripts/test.sh --sanitize=thread            the runtime alone built with
#                                                TSan (build-thread/), its unit
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
  # Reports end the program with a non-zero exit, so a test fails on them.
  # LLVM's allocators poison and unpoison their blocks from inline header
  # code when the includer is instrumented; libLLVM and libMLIR are not, so
  # such poisoning would flag their own allocations: user poisoning is off.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:allow_user_poisoning=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
fi
if [ "$sanitize" = address,undefined ] || [ "$sanitize" = undefined,address ] ||
   [ "$sanitize" = address ] || [ "$sanitize" = undefined ]; then
  MNEMO_BUILD=${MNEMO_BUILD:-$(cd "$(dirname "$0")/.." && pwd)/build-${sanitize//,/-}}
  MNEMO_CMAKE_ARGS=(-DMNEMO_SANITIZERS="$sanitize")
fi
source "$(dirname "$0")/lib/common.sh"

ensure_packages
lit_paths=("$MNEMO_BUILD/test")
unit_dir=$MNEMO_BUILD/unittests
suites=(MnemoUnitTests MnemoRuntimeUnitTests)
if [ "$sanitize" = thread ]; then
  # The compiler as usual (its threads are LLVM's and MLIR's, which TSan
  # cannot see synchronize), and the runtime alone with TSan: its unit
  # tests and the lit tests that run threads (sessions on 16 threads, the
  # same results on any thread count, the CUDA executor on its stand-in
  # driver, the generator), on the instrumented programs.
  build_mnemo mnemoc mnemo-opt mlir-doc
  tsan=$MNEMO_ROOT/build-thread
  if [ ! -f "$tsan/build.ninja" ]; then
    log "configuring $tsan"
    cmake -G Ninja -S "$MNEMO_ROOT/runtime" -B "$tsan" -DCMAKE_BUILD_TYPE=Release \
      -DMNEMO_RUNTIME_SANITIZERS=thread \
      -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
      >"$tsan.configure.log" 2>&1 || { cat "$tsan.configure.log" >&2; exit 1; }
  fi
  log "building $tsan"
  ninja -C "$tsan"
  export MNEMO_RUNTIME_TOOLS_DIR=$tsan/bin
  lit_paths=()
  for t in sessions-threads threads-identical cuda-executor cuda generator \
           gpu-shapes gpu-dynamic-attention embed-example; do
    lit_paths+=("$MNEMO_BUILD/test/Runtime/$t.test")
  done
  unit_dir=$tsan/unittests
  suites=(MnemoRuntimeUnitTests)
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
for suite in "${suites[@]}"; do
  "$unit_dir/$suite" --gtest_brief=1 \
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

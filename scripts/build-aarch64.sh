#!/usr/bin/env bash
# Cross-builds the runtime, mnemo-run and the C embedding example for
# AArch64 Linux into build/aarch64 (a standalone CMake tree of runtime/;
# no MLIR needed). Run the results with
#   qemu-aarch64 -L /usr/aarch64-linux-gnu build/aarch64/bin/mnemo-run ...
# Needs clang-22, lld, ninja, flatc and Debian's arm64 cross libraries
# (g++-aarch64-linux-gnu pulls them in); qemu-user to run.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

# Only what this build needs (common.sh's list is the full toolchain).
MNEMO_PACKAGES=(cmake ninja-build clang-22 lld-22 flatbuffers-compiler
  libflatbuffers-dev g++-aarch64-linux-gnu qemu-user)
ensure_packages

BUILD=${MNEMO_AARCH64_BUILD:-$MNEMO_ROOT/build/aarch64}
if [ ! -f "$BUILD/build.ninja" ] ||
   ! grep -q '^MNEMO_RUNTIME_EDGE:BOOL=ON' "$BUILD/CMakeCache.txt"; then
  log "configuring $BUILD"
  mkdir -p "$(dirname "$BUILD")"
  cmake -G Ninja -S "$MNEMO_ROOT/runtime" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release -DMNEMO_RUNTIME_EDGE=ON \
    -DCMAKE_TOOLCHAIN_FILE="$MNEMO_ROOT/runtime/cmake/aarch64-linux-gnu.cmake" \
    >"$BUILD.configure.log" 2>&1 \
    || { cat "$BUILD.configure.log" >&2; exit 1; }
fi
log "building $BUILD"
ninja -C "$BUILD" mnemo-run mnemo-embed-example mnemo-runtime-load-test \
  mnemo-runtime-threads-test

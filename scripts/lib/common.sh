# Shared set-up for scripts/demo.sh and scripts/test.sh: install what is
# missing, then configure and build incrementally into build/.
# shellcheck shell=bash

MNEMO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MNEMO_BUILD=${MNEMO_BUILD:-$MNEMO_ROOT/build}
LLVM_ROOT=/usr/lib/llvm-22

# Debian packages the build and the tests use (see TOOLCHAIN notes in README).
MNEMO_PACKAGES=(
  cmake ninja-build ccache clang-22 lld-22 libclang-rt-22-dev llvm-22-dev llvm-22-tools
  libmlir-22-dev mlir-22-tools libgtest-dev python3-numpy python3-onnx
  libflatbuffers-dev flatbuffers-compiler libonnx-dev libprotobuf-dev
  protobuf-compiler gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user
)

log() { printf '\033[1m[mnemo]\033[0m %s\n' "$*" >&2; }

ensure_packages() {
  local missing=()
  for pkg in "${MNEMO_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  log "installing ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "need root to install: ${missing[*]}"; exit 1; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Configures once (or when CMakeLists change; ninja re-runs cmake itself)
# and builds the given targets (default: everything). MNEMO_CMAKE_ARGS adds
# configuration options (scripts/test.sh --sanitize).
MNEMO_CMAKE_ARGS=(${MNEMO_CMAKE_ARGS[@]+"${MNEMO_CMAKE_ARGS[@]}"})
build_mnemo() {
  if [ ! -f "$MNEMO_BUILD/build.ninja" ]; then
    log "configuring $MNEMO_BUILD"
    cmake -G Ninja -S "$MNEMO_ROOT" -B "$MNEMO_BUILD" \
      -DCMAKE_BUILD_TYPE=Release \
      -DMLIR_DIR="$LLVM_ROOT/lib/cmake/mlir" \
      -DLLVM_EXTERNAL_LIT="$LLVM_ROOT/bin/lit" \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DLLVM_USE_LINKER=lld -DMLIR_LINK_MLIR_DYLIB=ON \
      -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
      "${MNEMO_CMAKE_ARGS[@]}" \
      >"$MNEMO_BUILD.configure.log" 2>&1 \
      || { cat "$MNEMO_BUILD.configure.log" >&2; exit 1; }
  fi
  log "building ${*:-all}"
  ninja -C "$MNEMO_BUILD" "$@"
}

# Cross-compiles the Mnemo runtime for AArch64 Linux with clang-22 and lld
# against Debian's cross packages (libc6-dev-arm64-cross,
# libstdc++-12-dev-arm64-cross: headers and libraries under
# /usr/aarch64-linux-gnu, GCC's support files under
# /usr/lib/gcc-cross/aarch64-linux-gnu), which clang finds by itself for
# --target=aarch64-linux-gnu. Binaries run under
#   qemu-aarch64 -L /usr/aarch64-linux-gnu
# (set as the emulator, so CMake's try-runs and tests use it).
#
# Overridable: MNEMO_AARCH64_CLANG, MNEMO_AARCH64_CLANGXX, MNEMO_AARCH64_ROOT.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(MNEMO_AARCH64_TRIPLE aarch64-linux-gnu)
if(NOT MNEMO_AARCH64_ROOT)
  set(MNEMO_AARCH64_ROOT /usr/${MNEMO_AARCH64_TRIPLE})
endif()
if(NOT MNEMO_AARCH64_CLANG)
  set(MNEMO_AARCH64_CLANG clang-22)
endif()
if(NOT MNEMO_AARCH64_CLANGXX)
  set(MNEMO_AARCH64_CLANGXX clang++-22)
endif()
# Try-compiles see the same settings.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
     MNEMO_AARCH64_ROOT MNEMO_AARCH64_CLANG MNEMO_AARCH64_CLANGXX)

set(CMAKE_C_COMPILER ${MNEMO_AARCH64_CLANG})
set(CMAKE_CXX_COMPILER ${MNEMO_AARCH64_CLANGXX})
set(CMAKE_C_COMPILER_TARGET ${MNEMO_AARCH64_TRIPLE})
set(CMAKE_CXX_COMPILER_TARGET ${MNEMO_AARCH64_TRIPLE})

foreach(kind EXE SHARED MODULE)
  set(CMAKE_${kind}_LINKER_FLAGS_INIT "-fuse-ld=lld")
endforeach()

# Libraries and headers come from the cross root only; programs (flatc)
# from the build machine.
set(CMAKE_FIND_ROOT_PATH ${MNEMO_AARCH64_ROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${MNEMO_AARCH64_ROOT})

//===- code_object.h - loading the kernels' shared object -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_CODE_OBJECT_H
#define MNEMO_RUNTIME_CODE_OBJECT_H

#include "mnemo/runtime.h"

#include <cstddef>
#include <cstdint>

namespace mnemo::rt {

/// The kernel ABI: args[0] is the result descriptor block, args[1 + i] the
/// descriptor of argument i.
using KernelFn = void (*)(void **args);

/// A code object loaded with dlopen from a memfd.
struct CodeObject {
  int fd = -1;
  void *handle = nullptr;
  uintptr_t begin = 0; // the loaded image, for "is this address ours"
  uintptr_t end = 0;
  bool hasHooks = false; // it defines `mnemo_hooks`, filled at load
  /// Its table has the alloc and free slots (32 bytes or more): the code
  /// allocates every buffer through them, so the buffers its kernels
  /// return are released with freeBuffer (buffer_cache.h), not std::free.
  bool hasAllocHooks = false;

  bool contains(const void *p) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    return a >= begin && a < end;
  }
};

/// Checks that `data` is a 64-bit little-endian ELF shared object for this
/// machine whose program headers and loadable segments lie within it.
/// `what` names the artifact in messages. On success `*imageSize` is the
/// extent of the loaded image.
mnemo_status_t checkCodeObject(const char *what, const uint8_t *data,
                               size_t size, uint64_t *imageSize);

/// Checks `data`, writes it to a memfd and dlopens it (RTLD_NOW |
/// RTLD_LOCAL). libm is loaded into the global scope first so that the
/// kernels' calls to expf & co. resolve.
mnemo_status_t loadCodeObject(const char *what, const uint8_t *data,
                              size_t size, CodeObject &out);

/// Looks `symbol` up in `code`.
mnemo_status_t findKernel(const char *what, const CodeObject &code,
                          const char *symbol, KernelFn *out);

/// Fills the code object's `mnemo_hooks` table (hooks.h) with the
/// runtime's hook functions and sets `code.hasHooks`: all four slots, and
/// `code.hasAllocHooks`, when the symbol's size says the table has them,
/// else the first two (older code). An object without the table is fine
/// (older artifacts); one whose table is smaller than two slots or not in
/// writable, non-RELRO memory is DATA_LOSS. `data` and `size` are the
/// object's bytes, as passed to loadCodeObject.
mnemo_status_t installHooks(const char *what, const uint8_t *data, size_t size,
                            CodeObject &code);

/// dlcloses and closes `code` and resets it.
void unloadCodeObject(CodeObject &code);

/// "x86_64" or "aarch64": the architecture this runtime was built for.
const char *hostArchitecture();

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_CODE_OBJECT_H

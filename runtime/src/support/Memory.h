//===- Memory.h - allocation without the C++ runtime ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The runtime depends on the C library only (no libstdc++, no libsupc++), so
// that an edge build links into a C program with nothing else: objects are
// made with malloc and placement new, never with operator new, and a
// failed allocation is a null the caller reports, as with new (nothrow).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_SUPPORT_MEMORY_H
#define MNEMO_RUNTIME_SUPPORT_MEMORY_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>

namespace mnemo::rt {

/// Ends the process on an allocation that has no way to fail gracefully
/// (a container growing), as libstdc++ does without exceptions.
[[noreturn]] void abortOutOfMemory(size_t bytes);

/// A new T made from `args`, or null when out of memory.
template <typename T, typename... Args> T *make(Args &&...args) {
  static_assert(alignof(T) <= alignof(std::max_align_t),
                "over-aligned types need aligned_alloc");
  void *p = std::malloc(sizeof(T));
  return p ? ::new (p) T(std::forward<Args>(args)...) : nullptr;
}

/// Destroys and frees what make() made; null is ignored.
template <typename T> void destroy(T *p) {
  if (p) {
    p->~T();
    std::free(p);
  }
}

/// unique_ptr's deleter for make().
struct Destroy {
  template <typename T> void operator()(T *p) const { destroy(p); }
};
/// An owning pointer to what make() made.
template <typename T> using Owned = std::unique_ptr<T, Destroy>;

/// unique_ptr's deleter for malloc'ed bytes.
struct Free {
  void operator()(void *p) const { std::free(p); }
};
/// Owned malloc'ed bytes.
using OwnedBytes = std::unique_ptr<uint8_t[], Free>;

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_SUPPORT_MEMORY_H

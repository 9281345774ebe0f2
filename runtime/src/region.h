//===- region.h - bytes a model reads ---------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_REGION_H
#define MNEMO_RUNTIME_REGION_H

#include "mnemo/runtime.h"

#include <cstddef>
#include <cstdint>

namespace mnemo::rt {

/// A read-only byte range and how to release it.
struct Region {
  enum class Kind { None, Mapped, Borrowed, Owned };
  const uint8_t *data = nullptr;
  size_t size = 0;
  Kind kind = Kind::None;

  bool contains(const void *p) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    auto b = reinterpret_cast<uintptr_t>(data);
    return data && a >= b && a - b < size;
  }
};

/// Maps the regular file at `path` read-only. `role` names it in messages
/// ("artifact", "weights file").
mnemo_status_t mapFile(const char *path, const char *role, Region &out);

/// Wraps caller memory: borrowed when 64-byte aligned, else an aligned copy.
mnemo_status_t wrapMemory(const void *data, size_t size, Region &out);

/// Unmaps or frees `region` as its kind says and resets it.
void releaseRegion(Region &region);

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_REGION_H

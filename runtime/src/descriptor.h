//===- descriptor.h - MLIR strided memref descriptors -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A rank-r descriptor is r-dependent but all 8-byte words:
//   { void *allocated; void *aligned; int64_t offset;
//     int64_t sizes[r]; int64_t strides[r]; }
// so the runtime keeps descriptors in int64_t arrays and reads the two
// pointers through memcpy.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_DESCRIPTOR_H
#define MNEMO_RUNTIME_DESCRIPTOR_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mnemo::rt {

static_assert(sizeof(void *) == sizeof(int64_t),
              "descriptors assume 64-bit pointers");

/// Words a descriptor of `rank` takes.
constexpr size_t descriptorWords(uint32_t rank) { return 3 + 2 * size_t(rank); }

inline void *descriptorAllocated(const int64_t *d) {
  void *p;
  std::memcpy(&p, &d[0], sizeof(p));
  return p;
}
inline void *descriptorAligned(const int64_t *d) {
  void *p;
  std::memcpy(&p, &d[1], sizeof(p));
  return p;
}
inline int64_t descriptorOffset(const int64_t *d) { return d[2]; }
inline const int64_t *descriptorSizes(const int64_t *d) { return d + 3; }
inline const int64_t *descriptorStrides(const int64_t *d, uint32_t rank) {
  return d + 3 + rank;
}

/// Describes the dense row-major tensor `shape` at `data`.
void fillDescriptor(int64_t *d, uint32_t rank, const void *data,
                    const int64_t *shape);

/// Whether the layout is dense row-major (strides of size-1 dims do not
/// matter).
bool isContiguous(const int64_t *sizes, const int64_t *strides, uint32_t rank);

/// Copies the strided tensor whose first element is at `first` into the
/// dense row-major buffer `out`. Sizes must be non-negative.
void copyStrided(const uint8_t *first, const int64_t *sizes,
                 const int64_t *strides, uint32_t rank, size_t elementSize,
                 uint8_t *out);

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_DESCRIPTOR_H

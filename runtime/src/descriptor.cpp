//===- descriptor.cpp - MLIR strided memref descriptors ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "descriptor.h"

using namespace mnemo::rt;

void mnemo::rt::fillDescriptor(int64_t *d, uint32_t rank, const void *data,
                               const int64_t *shape) {
  std::memcpy(&d[0], &data, sizeof(data));
  std::memcpy(&d[1], &data, sizeof(data));
  d[2] = 0;
  int64_t stride = 1;
  for (uint32_t i = rank; i-- > 0;) {
    d[3 + i] = shape[i];
    d[3 + rank + i] = stride;
    stride *= shape[i];
  }
}

bool mnemo::rt::isContiguous(const int64_t *sizes, const int64_t *strides,
                             uint32_t rank) {
  for (uint32_t i = 0; i < rank; ++i)
    if (sizes[i] == 0)
      return true; // no elements: any layout reads nothing
  int64_t expected = 1;
  for (uint32_t i = rank; i-- > 0;) {
    if (sizes[i] != 1 && strides[i] != expected)
      return false;
    expected *= sizes[i];
  }
  return true;
}

void mnemo::rt::copyStrided(const uint8_t *first, const int64_t *sizes,
                            const int64_t *strides, uint32_t rank,
                            size_t elementSize, uint8_t *out) {
  for (uint32_t i = 0; i < rank; ++i)
    if (sizes[i] == 0)
      return;
  if (rank == 0) {
    std::memcpy(out, first, elementSize);
    return;
  }
  // Odometer over all dims but the innermost; the innermost is a strided
  // row copy.
  int64_t index[64] = {};
  const int64_t rowSize = sizes[rank - 1];
  const int64_t rowStride =
      strides[rank - 1] * static_cast<int64_t>(elementSize);
  for (;;) {
    int64_t offset = 0;
    for (uint32_t i = 0; i + 1 < rank; ++i)
      offset += index[i] * strides[i];
    const uint8_t *row = first + offset * static_cast<int64_t>(elementSize);
    if (rowStride == static_cast<int64_t>(elementSize)) {
      std::memcpy(out, row, rowSize * elementSize);
      out += rowSize * elementSize;
    } else {
      for (int64_t j = 0; j < rowSize; ++j, out += elementSize)
        std::memcpy(out, row + j * rowStride, elementSize);
    }
    uint32_t dim = rank - 1;
    while (dim > 0) {
      --dim;
      if (++index[dim] < sizes[dim])
        break;
      index[dim] = 0;
      if (dim == 0)
        return;
    }
    if (rank == 1)
      return;
  }
}

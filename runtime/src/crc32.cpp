//===- crc32.cpp - CRC-32 of the artifact metadata --------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "crc32.h"

namespace {

struct Table {
  uint32_t entries[256];
  constexpr Table() : entries() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      entries[i] = c;
    }
  }
};

constexpr Table kTable;

} // namespace

uint32_t mnemo::rt::crc32(uint32_t crc, const uint8_t *data, size_t size) {
  crc = ~crc;
  for (size_t i = 0; i < size; ++i)
    crc = kTable.entries[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

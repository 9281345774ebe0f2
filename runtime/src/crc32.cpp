//===- crc32.cpp - CRC-32 of the artifact metadata --------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "crc32.h"

namespace {

// Slicing by 8: table k advances a byte's CRC by k more zero bytes, so eight
// bytes fold in with eight lookups (about 2 GB/s, where a weight source of
// several GB is checked at every load).
struct Tables {
  uint32_t entries[8][256];
  constexpr Tables() : entries() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      entries[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int t = 1; t < 8; ++t)
        entries[t][i] = (entries[t - 1][i] >> 8) ^
                        entries[0][entries[t - 1][i] & 0xff];
  }
};

constexpr Tables kTables;

} // namespace

uint32_t mnemo::rt::crc32(uint32_t crc, const uint8_t *data, size_t size) {
  const auto &t = kTables.entries;
  crc = ~crc;
  for (; size >= 8; data += 8, size -= 8) {
    uint32_t lo = crc ^ (uint32_t(data[0]) | uint32_t(data[1]) << 8 |
                         uint32_t(data[2]) << 16 | uint32_t(data[3]) << 24);
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^
          t[4][lo >> 24] ^ t[3][data[4]] ^ t[2][data[5]] ^ t[1][data[6]] ^
          t[0][data[7]];
  }
  for (; size > 0; ++data, --size)
    crc = t[0][(crc ^ *data) & 0xff] ^ (crc >> 8);
  return ~crc;
}

//===- crc32.h - CRC-32 of the artifact metadata ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_CRC32_H
#define MNEMO_RUNTIME_CRC32_H

#include <cstddef>
#include <cstdint>

namespace mnemo::rt {

/// Continues a CRC-32 (IEEE 802.3 polynomial, reflected, as zlib's crc32):
/// start from 0, feed the bytes in pieces, the result is the CRC of them all.
uint32_t crc32(uint32_t crc, const uint8_t *data, size_t size);

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_CRC32_H

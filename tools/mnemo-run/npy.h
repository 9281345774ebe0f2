//===- npy.h - reading and writing .npy files -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The subset of NumPy's .npy format mnemo-run exchanges: format versions 1.0
// and 2.0, C order, little-endian, the dtypes <f4 <f2 <f8 <i8 <i4 |i1 |u1
// |b1. Errors are one-line reasons; the caller adds the file name.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_MNEMO_RUN_NPY_H
#define MNEMO_TOOLS_MNEMO_RUN_NPY_H

#include "mnemo/runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace mnemo::npy {

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

/// A dense row-major array; `data` is 64-byte aligned.
struct Array {
  mnemo_dtype_t dtype = MNEMO_DTYPE_F32;
  std::vector<int64_t> shape;
  std::unique_ptr<uint8_t, FreeDeleter> data;
  size_t bytes = 0;
};

/// The .npy descr of `dtype` ("<f4"), or "" for bf16, which NumPy lacks.
const char *descrOf(mnemo_dtype_t dtype);

/// Parses a whole .npy file. On failure returns false and sets `error`.
bool parse(const uint8_t *file, size_t size, Array &out, std::string &error);

/// Reads and parses the .npy file at `path`.
bool read(const char *path, Array &out, std::string &error);

/// The bytes of a version 1.0 (2.0 when the header needs it) .npy file.
bool serialize(mnemo_dtype_t dtype, const int64_t *shape, size_t rank,
               const void *data, size_t bytes, std::string &out,
               std::string &error);

/// Writes a .npy file to `path`.
bool write(const char *path, mnemo_dtype_t dtype, const int64_t *shape,
           size_t rank, const void *data, size_t bytes, std::string &error);

/// bf16 has no NumPy dtype: a float32 array stands in for it. Narrows `a`
/// to bf16 in place (round to nearest even) when `want` is bf16 and `a` is
/// float32; otherwise leaves it alone.
void narrowStandIn(Array &a, mnemo_dtype_t want);
/// Writes as `write` does, a bf16 tensor widened to a float32 file.
bool writeWidened(const char *path, mnemo_dtype_t dtype, const int64_t *shape,
                  size_t rank, const void *data, size_t bytes,
                  std::string &error);

} // namespace mnemo::npy

#endif // MNEMO_TOOLS_MNEMO_RUN_NPY_H

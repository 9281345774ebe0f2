//===- dtype.cpp - element types --------------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dtype.h"

#include "artifact_generated.h"

namespace fb = ::mnemo::artifact;

// The C enum mirrors the schema's DType value for value.
#define MNEMO_CHECK_DTYPE(C, F)                                                \
  static_assert(static_cast<int>(C) == static_cast<int>(fb::DType::F),         \
                "mnemo_dtype_t and the schema's DType disagree on " #F)
MNEMO_CHECK_DTYPE(MNEMO_DTYPE_F32, F32);
MNEMO_CHECK_DTYPE(MNEMO_DTYPE_F16, F16);
MNEMO_CHECK_DTYPE(MNEMO_DTYPE_BF16, BF16);
MNEMO_CHECK_DTYPE(MNEMO_DTYPE_F64, F64);
MNEMO_CHECK_DTYPE(MNEMO_DTYPE_I64, I64);
MNEMO_CHECK_DTYPE(MNEMO_DTYPE_I32, I32);
MNEMO_CHECK_DTYPE(MNEMO_DTYPE_I8, I8);
MNEMO_CHECK_DTYPE(MNEMO_DTYPE_U8, U8);
MNEMO_CHECK_DTYPE(MNEMO_DTYPE_BOOL, BOOL);
MNEMO_CHECK_DTYPE(MNEMO_DTYPE_F8_E4M3, F8_E4M3);
static_assert(static_cast<int>(fb::DType::MAX) == MNEMO_DTYPE_F8_E4M3,
              "the schema has a DType the runtime does not know");
#undef MNEMO_CHECK_DTYPE

bool mnemo::rt::isValidDType(unsigned value) {
  return value <= static_cast<unsigned>(MNEMO_DTYPE_F8_E4M3);
}

extern "C" {

size_t mnemo_dtype_size(mnemo_dtype_t dtype) {
  switch (dtype) {
  case MNEMO_DTYPE_F64:
  case MNEMO_DTYPE_I64:
    return 8;
  case MNEMO_DTYPE_F32:
  case MNEMO_DTYPE_I32:
    return 4;
  case MNEMO_DTYPE_F16:
  case MNEMO_DTYPE_BF16:
    return 2;
  case MNEMO_DTYPE_I8:
  case MNEMO_DTYPE_U8:
  case MNEMO_DTYPE_BOOL:
  case MNEMO_DTYPE_F8_E4M3:
    return 1;
  default:
    return 0;
  }
}

const char *mnemo_dtype_name(mnemo_dtype_t dtype) {
  switch (dtype) {
  case MNEMO_DTYPE_F32:
    return "f32";
  case MNEMO_DTYPE_F16:
    return "f16";
  case MNEMO_DTYPE_BF16:
    return "bf16";
  case MNEMO_DTYPE_F64:
    return "f64";
  case MNEMO_DTYPE_I64:
    return "i64";
  case MNEMO_DTYPE_I32:
    return "i32";
  case MNEMO_DTYPE_I8:
    return "i8";
  case MNEMO_DTYPE_U8:
    return "u8";
  case MNEMO_DTYPE_BOOL:
    return "bool";
  case MNEMO_DTYPE_F8_E4M3:
    return "f8e4m3";
  default:
    return "unknown";
  }
}

} // extern "C"

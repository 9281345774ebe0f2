//===- Support.cpp - allocation failures and formatting ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "support/Memory.h"
#include "support/String.h"

#include <cstdio>

using namespace mnemo::rt;

void mnemo::rt::abortOutOfMemory(size_t bytes) {
  std::fprintf(stderr, "mnemo runtime: out of memory (%zu bytes)\n", bytes);
  std::abort();
}

String mnemo::rt::formatStringV(const char *format, va_list args) {
  va_list again;
  va_copy(again, args);
  int n = std::vsnprintf(nullptr, 0, format, args);
  String s;
  if (n > 0) {
    Vector<char> buffer(static_cast<size_t>(n) + 1);
    std::vsnprintf(buffer.data(), buffer.size(), format, again);
    s = String(buffer.data(), static_cast<size_t>(n));
  }
  va_end(again);
  return s;
}

String mnemo::rt::formatString(const char *format, ...) {
  va_list args;
  va_start(args, format);
  String s = formatStringV(format, args);
  va_end(args);
  return s;
}

//===- status.cpp - mnemo_status_t ------------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "status.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

struct mnemo_status_s {
  mnemo_status_code_t code;
  const char *message; // points just past the struct, or to a literal
};

namespace {

constexpr size_t kMaxMessage = 1024;

mnemo_status_s outOfMemoryStatus = {MNEMO_STATUS_RESOURCE_EXHAUSTED,
                                    "out of memory"};

} // namespace

mnemo_status_t mnemo::rt::outOfMemory() { return &outOfMemoryStatus; }

mnemo_status_t mnemo::rt::makeStatus(mnemo_status_code_t code,
                                     const char *format, ...) {
  if (code == MNEMO_STATUS_OK)
    code = MNEMO_STATUS_INTERNAL; // an error status always has an error code
  char buffer[kMaxMessage];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  if (n < 0)
    std::snprintf(buffer, sizeof(buffer), "(unformattable message)");
  size_t length = std::strlen(buffer);
  for (size_t i = 0; i < length; ++i) {
    unsigned char c = static_cast<unsigned char>(buffer[i]);
    if (c < 0x20 || c == 0x7f)
      buffer[i] = c == '\n' || c == '\t' || c == '\r' ? ' ' : '?';
  }
  // Trailing blanks (dlerror text ends with one sometimes) are dropped.
  while (length > 0 && buffer[length - 1] == ' ')
    buffer[--length] = '\0';
  auto *status = static_cast<mnemo_status_s *>(
      std::malloc(sizeof(mnemo_status_s) + length + 1));
  if (!status)
    return outOfMemory();
  char *message = reinterpret_cast<char *>(status + 1);
  std::memcpy(message, buffer, length + 1);
  status->code = code;
  status->message = message;
  return status;
}

extern "C" {

mnemo_status_code_t mnemo_status_code(mnemo_status_t status) {
  return status ? status->code : MNEMO_STATUS_OK;
}

const char *mnemo_status_message(mnemo_status_t status) {
  return status ? status->message : "";
}

void mnemo_status_free(mnemo_status_t status) {
  if (status && status != &outOfMemoryStatus)
    std::free(status);
}

const char *mnemo_status_code_name(mnemo_status_code_t code) {
  switch (code) {
  case MNEMO_STATUS_OK:
    return "OK";
  case MNEMO_STATUS_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case MNEMO_STATUS_NOT_FOUND:
    return "NOT_FOUND";
  case MNEMO_STATUS_INCOMPATIBLE:
    return "INCOMPATIBLE";
  case MNEMO_STATUS_RESOURCE_EXHAUSTED:
    return "RESOURCE_EXHAUSTED";
  case MNEMO_STATUS_UNAVAILABLE:
    return "UNAVAILABLE";
  case MNEMO_STATUS_INTERNAL:
    return "INTERNAL";
  case MNEMO_STATUS_DATA_LOSS:
    return "DATA_LOSS";
  default:
    return "UNKNOWN";
  }
}

} // extern "C"

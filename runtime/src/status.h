//===- status.h - building mnemo_status_t values ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Error statuses are heap objects with a code and a one-line message. When
// memory runs out, a static RESOURCE_EXHAUSTED status stands in (freeing it
// is a no-op), so building a status never fails.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_STATUS_H
#define MNEMO_RUNTIME_STATUS_H

#include "mnemo/runtime.h"

namespace mnemo::rt {

/// A status with `code` and a printf-formatted message. Control characters
/// in the message (say, from a name read out of a corrupt file) are replaced
/// so that it stays on one line, and it is cut at a bounded length.
mnemo_status_t makeStatus(mnemo_status_code_t code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/// The shared out-of-memory status.
mnemo_status_t outOfMemory();

} // namespace mnemo::rt

/// Returns from the enclosing function when `expr` yields an error status.
#define MNEMO_RETURN_IF_ERROR(expr)                                            \
  do {                                                                         \
    if (mnemo_status_t status_ = (expr))                                       \
      return status_;                                                          \
  } while (false)

#endif // MNEMO_RUNTIME_STATUS_H

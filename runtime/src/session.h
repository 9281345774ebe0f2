//===- session.h - what the runtime's own code asks of a session -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Session entry points that are not part of the C API: the generator binds
// its KV cache pools through them.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_SESSION_H
#define MNEMO_RUNTIME_SESSION_H

#include "cuda/device_memory.h"

#include "mnemo/runtime.h"

namespace mnemo::rt {

/// Whether `session` runs on a CUDA device.
bool runsOnCuda(const mnemo_session_t *session);

/// Binds input `name`, which the session's function updates in place, to
/// device memory at `shape` (a CUDA session): runs read and update it there,
/// with no copy to or from the host. `memory` must outlive the session.
mnemo_status_t bindResidentInput(mnemo_session_t *session, const char *name,
                                 mnemo_dtype_t dtype, const int64_t *shape,
                                 size_t rank, const cuda::DeviceMemory &memory);

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_SESSION_H

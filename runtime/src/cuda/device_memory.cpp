//===- device_memory.cpp - device memory shared by executors ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "cuda/device_memory.h"

#include "status.h"

#include <cstdlib>
#include <utility>

using namespace mnemo::rt;
using namespace mnemo::rt::cuda;

mnemo_status_t DeviceMemory::create(uint64_t bytes, const char *what,
                                    Owned<DeviceMemory> &out) {
  const Driver *driver = nullptr;
  MNEMO_RETURN_IF_ERROR(getDriver(&driver));
  const Driver &d = *driver;
  CUdeviceptr ptr = 0;
  CUresult r = d.memAlloc(&ptr, bytes ? bytes : 1);
  if (r != 0)
    return driverError(d, r, what, "cuMemAlloc");
  // Zeroed on the legacy default stream, and waited for: a padding row of a
  // page is read (and masked) as a number.
  if ((r = d.memsetD8Async(ptr, 0, bytes, nullptr)) != 0 ||
      (r = d.streamSynchronize(nullptr)) != 0) {
    mnemo_status_t status = driverError(d, r, what, "cuMemsetD8Async");
    d.memFree(ptr);
    return status;
  }
  void *p = std::malloc(sizeof(DeviceMemory));
  out.reset(p ? ::new (p) DeviceMemory(ptr, bytes) : nullptr);
  if (!out) {
    d.memFree(ptr);
    return outOfMemory();
  }
  return nullptr;
}

mnemo_status_t DeviceMemory::grow(Owned<DeviceMemory> &memory,
                                  uint64_t bytes, const char *what) {
  Owned<DeviceMemory> larger;
  MNEMO_RETURN_IF_ERROR(create(bytes, what, larger));
  const Driver *driver = nullptr;
  MNEMO_RETURN_IF_ERROR(getDriver(&driver));
  // Synchronous: the steps that wrote the old memory are done (a step
  // waits for its logits), and the next one reads the new.
  if (CUresult r =
          driver->memcpyDtoD(larger->ptr, memory->ptr, memory->bytes))
    return driverError(*driver, r, what, "cuMemcpyDtoD");
  memory = std::move(larger);
  return nullptr;
}

DeviceMemory::~DeviceMemory() {
  const Driver *driver = nullptr;
  // The driver was loaded when this was made: getDriver does not fail now
  // (it makes the context current on this thread).
  if (mnemo_status_t status = getDriver(&driver)) {
    mnemo_status_free(status);
    return;
  }
  driver->memFree(ptr);
}

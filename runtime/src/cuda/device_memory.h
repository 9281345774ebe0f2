//===- device_memory.h - device memory shared by executors ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A block of device memory that outlives any one executor: a generator's KV
// cache pools, which its prefill and decode executors both bind in place of
// an input (Executor::bindResident), so that the pools stay on the device
// between steps instead of travelling to the host and back at every run.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_CUDA_DEVICE_MEMORY_H
#define MNEMO_RUNTIME_CUDA_DEVICE_MEMORY_H

#include "cuda/driver.h"

#include "support/Memory.h"

namespace mnemo::rt::cuda {

class DeviceMemory {
public:
  /// `bytes` of device memory, zeroed; `what` names it in errors.
  static mnemo_status_t create(uint64_t bytes, const char *what,
                               Owned<DeviceMemory> &out);
  /// Replaces `memory` by `bytes` (more than it has) of zeroed device
  /// memory holding its contents first (copied, then the old freed).
  static mnemo_status_t grow(Owned<DeviceMemory> &memory, uint64_t bytes,
                             const char *what);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;

  CUdeviceptr address() const { return ptr; }
  uint64_t size() const { return bytes; }

private:
  DeviceMemory(CUdeviceptr ptr, uint64_t bytes) : ptr(ptr), bytes(bytes) {}
  CUdeviceptr ptr;
  uint64_t bytes;
};

} // namespace mnemo::rt::cuda

#endif // MNEMO_RUNTIME_CUDA_DEVICE_MEMORY_H

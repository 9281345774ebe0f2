//===- device.cpp - opening the CPU or a CUDA device ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "device.h"

#include "cuda/driver.h"
#include "status.h"
#include "support/Memory.h"

#include <cstdlib>
#include <cstring>

using namespace mnemo::rt;

extern "C" {

mnemo_status_t mnemo_device_open(const char *name, mnemo_device_t **out) {
  if (!name || !out)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_device_open: NULL %s", name ? "out" : "name");
  *out = nullptr;
  mnemo_device_kind_t kind = MNEMO_DEVICE_CPU;
  long ordinal = 0;
  if (std::strcmp(name, "cuda") == 0) {
    kind = MNEMO_DEVICE_CUDA;
  } else if (std::strncmp(name, "cuda:", 5) == 0) {
    kind = MNEMO_DEVICE_CUDA;
    char *end = nullptr;
    ordinal = std::strtol(name + 5, &end, 10);
    if (end == name + 5 || *end || ordinal < 0)
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "device '%s': expected cpu, cuda or cuda:N", name);
  } else if (std::strcmp(name, "cpu") != 0) {
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "device '%s': expected cpu, cuda or cuda:N", name);
  }
  if (kind == MNEMO_DEVICE_CUDA) {
    if (ordinal != 0)
      return makeStatus(MNEMO_STATUS_UNAVAILABLE,
                        "device '%s': this runtime runs on CUDA device 0 "
                        "only",
                        name);
    // The driver is needed by every session on the device: fail here.
    const cuda::Driver *driver = nullptr;
    MNEMO_RETURN_IF_ERROR(cuda::getDriver(&driver));
  }
  auto *device = make<mnemo_device_t>();
  if (!device)
    return outOfMemory();
  device->kind = kind;
  device->ordinal = static_cast<int>(ordinal);
  device->name = kind == MNEMO_DEVICE_CPU ? "cpu" : "cuda:0";
  *out = device;
  return nullptr;
}

void mnemo_device_free(mnemo_device_t *device) { destroy(device); }

mnemo_device_kind_t mnemo_device_kind(const mnemo_device_t *device) {
  return device ? device->kind : MNEMO_DEVICE_CPU;
}

const char *mnemo_device_name(const mnemo_device_t *device) {
  return device ? device->name.c_str() : "cpu";
}

} // extern "C"

//===- device.h - where a session runs --------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_DEVICE_H
#define MNEMO_RUNTIME_DEVICE_H

#include "support/String.h"

#include "mnemo/runtime.h"

struct mnemo_device_s {
  mnemo_device_kind_t kind = MNEMO_DEVICE_CPU;
  int ordinal = 0;
  mnemo::rt::String name; // "cpu", "cuda:0"
};

#endif // MNEMO_RUNTIME_DEVICE_H

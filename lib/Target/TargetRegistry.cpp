//===- TargetRegistry.cpp - targets by command-line name --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "CPU/CPUTarget.h"
#include "NVPTX/NVPTXTarget.h"

using namespace mlir;
using namespace mlir::mnemo;

std::unique_ptr<TargetBackend>
mnemo::createTargetBackend(llvm::StringRef name) {
  if (auto cpu = createCPUTargetBackend(name))
    return cpu;
  return createNVPTXTargetBackend(name);
}

std::vector<std::string> mnemo::getTargetBackendNames() {
  return {"host", "x86_64", "aarch64", "aarch64-sve", "sm_80", "sm_90a"};
}

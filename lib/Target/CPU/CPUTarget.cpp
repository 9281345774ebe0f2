//===- CPUTarget.cpp - x86-64 and AArch64 code generation -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One backend class for the CPU ISAs: the host (x86-64 with the host's
// features) and AArch64 (NEON). Tiled tensor IR is bufferized, lowered to
// loops and the LLVM dialect, wrapped into the artifact's entry points, then
// compiled in-process by LLVM's TargetMachine.
//
//===----------------------------------------------------------------------===//

#include "CPUTarget.h"

#include "mnemo/Target/CPU/Passes.h"

#include "mnemo/Conversion/LoweringPipelines.h"

#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::mnemo;

CPUTargetBackend::CPUTargetBackend(std::string name, std::string triple,
                                   std::string cpu, std::string features,
                                   TargetInfo info)
    : name(std::move(name)), triple(std::move(triple)), cpu(std::move(cpu)),
      features(std::move(features)), info(info) {}

void CPUTargetBackend::buildCodegenPipeline(OpPassManager &pm) const {
  buildBufferizationPasses(pm);
  // Copies become loops; the code object must not call MLIR's runtime.
  pm.addPass(createLowerCopiesPass());
  buildLinalgToLoopsPasses(pm);
  pm.addPass(createApproximateMathPass());
  pm.addPass(createExpandBF16Pass());
  pm.addPass(createMarkEntryPointsPass());
  buildConvertToLLVMPasses(pm);
  pm.addPass(createAddEntryPointsPass());
}

std::unique_ptr<TargetBackend>
mnemo::createCPUTargetBackend(llvm::StringRef name) {
  TargetInfo info;
  if (name == "host" || name == "x86_64") {
    if (name == "x86_64" || llvm::sys::getProcessTriple().find("x86_64") == 0) {
      std::string features;
      if (name == "host") {
        for (const auto &[feature, on] : llvm::sys::getHostCPUFeatures())
          features += (on ? "+" : "-") + feature.str() + ",";
        if (!features.empty())
          features.pop_back();
      }
      info.vectorBits = 256;
      return std::make_unique<CPUTargetBackend>(
          name.str(), "x86_64-unknown-linux-gnu",
          name == "host" ? llvm::sys::getHostCPUName().str() : "x86-64-v2",
          features, info);
    }
    // A non-x86 host: compile for it as it is.
    return std::make_unique<CPUTargetBackend>(
        name.str(), llvm::sys::getProcessTriple(),
        llvm::sys::getHostCPUName().str(), "", info);
  }
  if (name == "aarch64")
    return std::make_unique<CPUTargetBackend>(
        "aarch64", "aarch64-unknown-linux-gnu", "generic", "+neon", info);
  return nullptr;
}

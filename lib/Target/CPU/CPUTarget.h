//===- CPUTarget.h - x86-64 and AArch64 code generation ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_TARGET_CPU_CPUTARGET_H
#define MNEMO_LIB_TARGET_CPU_CPUTARGET_H

#include "mnemo/Target/TargetBackend.h"

namespace mlir::mnemo {

class CPUTargetBackend final : public TargetBackend {
public:
  CPUTargetBackend(std::string name, std::string triple, std::string cpu,
                   std::string features, TargetInfo info);

  llvm::StringRef getName() const override { return name; }
  std::string getTriple() const override { return triple; }
  std::string getCPU() const override { return cpu; }
  std::string getFeatures() const override { return features; }
  const TargetInfo &getInfo() const override { return info; }

  void buildKernelSelectionPipeline(OpPassManager &pm,
                                    const KernelSelection &) const override;
  void buildTileKernelPipeline(OpPassManager &pm) const override;
  void buildCodegenPipeline(OpPassManager &pm) const override;
  FailureOr<std::string> serialize(ModuleOp module,
                                   OutputKind kind) const override;

private:
  std::string name, triple, cpu, features;
  TargetInfo info;
};

/// The backend for a CPU name ("host", "x86_64", "aarch64"), or null.
std::unique_ptr<TargetBackend> createCPUTargetBackend(llvm::StringRef name);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_TARGET_CPU_CPUTARGET_H

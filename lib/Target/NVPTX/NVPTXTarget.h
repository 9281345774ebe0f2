//===- NVPTXTarget.h - NVIDIA GPU code generation ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_TARGET_NVPTX_NVPTXTARGET_H
#define MNEMO_LIB_TARGET_NVPTX_NVPTXTARGET_H

#include "mnemo/Target/TargetBackend.h"

namespace mlir::mnemo {

/// Assembles `ptx` for `chip` with the ptxas of the CUDA toolkit at
/// `toolkit` (bin/ptxas) into a cubin (Ptxas.cpp); a failure is reported
/// at `loc` with what ptxas printed.
FailureOr<std::string> assemblePtx(Location loc, llvm::StringRef ptx,
                                   llvm::StringRef chip,
                                   llvm::StringRef toolkit);

class NVPTXTargetBackend final : public TargetBackend {
public:
  /// `chip` is an sm_* name, `features` the PTX version (+ptx80).
  NVPTXTargetBackend(std::string chip, std::string features, TargetInfo info);

  llvm::StringRef getName() const override { return chip; }
  std::string getTriple() const override { return "nvptx64-nvidia-cuda"; }
  std::string getCPU() const override { return chip; }
  std::string getFeatures() const override { return features; }
  const TargetInfo &getInfo() const override { return info; }

  /// Bufferizes, turns loops into kernels (one thread block per attention
  /// tile, one thread per element elsewhere), outlines them into one
  /// gpu.module and lowers that to NVVM. Host functions keep only buffers
  /// and gpu.launch_func.
  void buildCodegenPipeline(OpPassManager &pm) const override;
  /// 16-bit attention becomes a tensor-core kernel (mnemo-gpu-attention-kernel).
  void buildKernelSelectionPipeline(OpPassManager &pm,
                                    const KernelSelection &) const override;
  /// Buffers and launches of each public function (LaunchPlan.h).
  FailureOr<std::vector<GpuFunctionPlan>>
  launchPlans(ModuleOp module) const override;
  /// The PTX module of all kernels: bare for an artifact
  /// (OutputKind::SharedObject); for OutputKind::PTX or Assembly headed by
  /// the launch plans as comments.
  FailureOr<std::string> serialize(ModuleOp module,
                                   OutputKind kind) const override;
  /// The PTX's cubin, assembled by `toolkit`'s ptxas (Ptxas.cpp).
  FailureOr<std::string> assemble(Location loc, llvm::StringRef code,
                                  llvm::StringRef toolkit) const override {
    return assemblePtx(loc, code, chip, toolkit);
  }

private:
  std::string chip, features;
  TargetInfo info;
};

/// The backend for an sm_* name this build supports, or null.
std::unique_ptr<TargetBackend> createNVPTXTargetBackend(llvm::StringRef name);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_TARGET_NVPTX_NVPTXTARGET_H

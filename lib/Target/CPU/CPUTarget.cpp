//===- CPUTarget.cpp - x86-64 and AArch64 code generation -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One backend class for the CPU ISAs: the host (x86-64 with the host's
// features) and AArch64 (NEON, or SVE). Tiled tensor IR is bufferized, lowered to
// loops and the LLVM dialect, wrapped into the artifact's entry points, then
// compiled in-process by LLVM's TargetMachine.
//
//===----------------------------------------------------------------------===//

#include "CPUTarget.h"

#include "mnemo/Target/CPU/Passes.h"

#include "dialects/Mnemo/Transforms/Passes.h"

#include "mnemo/Conversion/LoweringPipelines.h"
#include "mnemo/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Passes.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::mnemo;

CPUTargetBackend::CPUTargetBackend(std::string name, std::string triple,
                                   std::string cpu, std::string features,
                                   TargetInfo info)
    : name(std::move(name)), triple(std::move(triple)), cpu(std::move(cpu)),
      features(std::move(features)), info(info) {}

namespace {
/// The GEMM's micro-tile: accumulators for `rows` x `vectors` registers,
/// plus the weight vectors and a broadcast input, within the register file.
CPULinearKernelPassOptions linearKernelOptions(const TargetInfo &info) {
  CPULinearKernelPassOptions linear;
  linear.lanes = std::max(4u, info.vectorBits / 32);
  linear.vectors = info.vectorRegisters >= 32 && linear.lanes < 8 ? 3 : 2;
  linear.rows = linear.lanes >= 16 ? 12 : info.vectorRegisters >= 32 ? 8 : 6;
  if (info.scalableVectors) {
    // SVE: 12 x 2 vectors of 4 x vscale lanes (24 of the 32 registers;
    // two vectors per row keep the column tiles whole panels at every
    // vector length).
    linear.scalable = true;
    linear.lanes = 4;
    linear.vectors = 2;
    linear.rows = 12;
  }
  return linear;
}
} // namespace

void CPUTargetBackend::buildKernelSelectionPipeline(
    OpPassManager &pm, const KernelSelection &) const {
  pm.addNestedPass<func::FuncOp>(
      createCPULinearKernelPass(linearKernelOptions(info)));
}

void CPUTargetBackend::buildTileKernelPipeline(OpPassManager &pm) const {
  // An attention tile's QK^T and PV are products of a tile with a K or V
  // block: raised to mnemo.linear, they take the same GEMM.
  pm.addNestedPass<func::FuncOp>(createRaiseContractionsPass());
  pm.addNestedPass<func::FuncOp>(
      createCPULinearKernelPass(linearKernelOptions(info)));
  // Its softmax works on whole rows as vectors (SVE: in chunks of
  // scalable vectors).
  VectorizeTileOpsPassOptions rows;
  rows.scalable = info.scalableVectors;
  pm.addNestedPass<func::FuncOp>(createVectorizeTileOpsPass(rows));
}

void CPUTargetBackend::buildCodegenPipeline(OpPassManager &pm) const {
  // Bufferization is made of module passes, which run on one thread: the
  // entry points (which share nothing) bufferize side by side, each in a
  // nested module of its own.
  pm.addPass(createSplitIndependentFunctionsPass());
  buildBufferizationPasses(pm.nest<ModuleOp>());
  pm.addPass(createMergeNestedModulesPass());
  // Copies become loops; the code object must not call MLIR's runtime.
  pm.addPass(createLowerCopiesPass());
  pm.addPass(createInstrumentProfilePass());
  // Parallel loops (GEMM and attention tiles, the elementwise ops' outer
  // dims) run on the runtime's threads.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createOutlineParallelPass());
  pm.addPass(createMergeKernelsPass());
  buildLinalgToLoopsPasses(pm);
  pm.addNestedPass<func::FuncOp>(createApproximateMathPass());
  pm.addNestedPass<func::FuncOp>(createExpandBF16Pass());
  pm.addPass(createMarkEntryPointsPass());
  // Buffers come from the runtime's allocation hooks (a cache across runs)
  // when it sets them.
  buildConvertToLLVMPasses(pm, /*allocationFunctions=*/true);
  pm.addPass(createAddEntryPointsPass());
  pm.addPass(createAddRuntimeHooksPass());
}

std::unique_ptr<TargetBackend>
mnemo::createCPUTargetBackend(llvm::StringRef name) {
  TargetInfo info;
  if (name == "host" || name == "x86_64") {
    if (name == "x86_64" || llvm::sys::getProcessTriple().find("x86_64") == 0) {
      std::string features;
      bool avx512 = false, avx2 = false;
      if (name == "host") {
        for (const auto &[feature, on] : llvm::sys::getHostCPUFeatures()) {
          features += (on ? "+" : "-") + feature.str() + ",";
          avx512 |= on && feature == "avx512f";
          avx2 |= on && feature == "avx2";
        }
        // The generated GEMMs use the full 512-bit registers; LLVM would
        // otherwise split them on the cores it tunes for 256-bit vectors.
        if (avx512)
          features += "-prefer-256-bit,";
        if (!features.empty())
          features.pop_back();
      }
      info.vectorBits = avx512 ? 512 : avx2 ? 256 : 128;
      info.vectorRegisters = avx512 ? 32 : 16;
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
  // SVE: the register-tiled GEMM (and so an attention tile's products) in
  // scalable vectors, and LLVM vectorizes the loops no generated kernel
  // covers with them too (vector-length agnostic: the same code at 128 to
  // 2048 bits); the attention tiles' softmax keeps 128-bit vectors, which
  // every SVE machine runs.
  if (name == "aarch64-sve") {
    info.scalableVectors = true;
    return std::make_unique<CPUTargetBackend>("aarch64-sve",
                                              "aarch64-unknown-linux-gnu",
                                              "generic", "+neon,+sve", info);
  }
  return nullptr;
}

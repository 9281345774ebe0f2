//===- NVPTXTarget.cpp - NVIDIA GPU code generation -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Tiled tensor IR is bufferized and its loops become kernels; the kernels
// are lowered through NVVM and LLVM's NVPTX back-end to PTX text. What stays
// on the host (buffers and launches) is read into a launch plan.
//
//===----------------------------------------------------------------------===//

#include "NVPTXTarget.h"

#include "mnemo/Conversion/Passes.h"
#include "mnemo/Target/NVPTX/Chips.h"
#include "mnemo/Target/NVPTX/LaunchPlan.h"
#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::mnemo;

NVPTXTargetBackend::NVPTXTargetBackend(std::string chip, std::string features,
                                       TargetInfo info)
    : chip(std::move(chip)), features(std::move(features)), info(info) {}

void NVPTXTargetBackend::buildKernelSelectionPipeline(
    OpPassManager &pm, const KernelSelection &selection) const {
  const ChipInfo &info = *lookupChip(chip);
  AttentionKernelPassOptions options;
  options.chip = chip;
  options.decodeKernel = selection.decodeKernel;
  options.decodeTma = selection.decodeTma;
  options.f32Precision = selection.f32Precision;
  options.smCount = info.multiprocessors;
  // A block may take what one block per multiprocessor may (an FP8 pool's
  // ring beside D 256 tiles, 129 KiB; on sm_80 an MLA's K and Q tiles, 144
  // KiB); Problem::residentBlocks counts how many fit.
  options.sharedBytesLimit = info.maxBlockSharedBytes;
  pm.addNestedPass<func::FuncOp>(createAttentionKernelPass(options));
  // Before the linear layers become kernels: an f32 indexer is rounded to
  // the type of their weights.
  IndexerKernelPassOptions indexer;
  indexer.smCount = info.multiprocessors;
  indexer.sharedBytesLimit = info.maxBlockSharedBytes;
  pm.addNestedPass<func::FuncOp>(createIndexerKernelPass(indexer));
  LinearKernelPassOptions linear;
  linear.chip = chip;
  // The GEMM runs one block per multiprocessor: the shared memory one
  // block may take holds its stages.
  linear.sharedBytesLimit = info.blockSharedBytes;
  linear.smCount = info.multiprocessors;
  linear.maxBatch = selection.maxBatch;
  linear.f32Precision = selection.f32Precision;
  pm.addNestedPass<func::FuncOp>(createLinearKernelPass(linear));
  TopKKernelPassOptions topK;
  topK.smCount = info.multiprocessors;
  pm.addNestedPass<func::FuncOp>(createTopKKernelPass(topK));
}

void NVPTXTargetBackend::buildCodegenPipeline(OpPassManager &pm) const {
  // Buffers are not freed: the launch plan owns every buffer's lifetime.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Values made from indices alone (a forward's positions) are computed
  // where they are read, before they would become buffers.
  pm.addNestedPass<func::FuncOp>(createFuseIndexProducersPass());
  // Each launch reads its tensors where it runs (CSE merged the kernels'
  // reads of one tensor).
  pm.addNestedPass<func::FuncOp>(createBufferReadsAtLaunchPass());
  pm.addPass(createReadOnlyArgumentsPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A result that is an argument updated in place (a KV cache pool) is no
  // output of the plan: the kernels write the argument's buffer.
  pm.addPass(createDropInPlaceResultsPass());
  pm.addPass(createCompactResultsPass());
  pm.addPass(createLowerCopiesPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createHoistTileBuffersPass());
  pm.addNestedPass<func::FuncOp>(createReductionsInnermostPass());
  pm.addNestedPass<func::FuncOp>(createWarpReductionsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createVectorizeElementsPass());
  pm.addNestedPass<func::FuncOp>(createLaunchLoopsPass());
  // Launch sizes and loop bounds fold to constants before outlining, so
  // kernels get them as constants instead of arguments.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addNestedPass<func::FuncOp>(createSinkConstantGlobalsPass());
  // After canonicalization, which would fold the split back.
  pm.addNestedPass<func::FuncOp>(createSplitKernelMemRefsPass());
  pm.addPass(createOutlineKernelsPass());
  pm.addPass(createMergeKernelModulesPass());
  pm.addPass(createCanonicalizerPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = chip;
  target.features = features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  if (lookupChip(chip)->programmaticLaunch)
    kernels.addPass(createProgrammaticLaunchPass());
  // Polynomials instead of libdevice calls: the PTX must not depend on a
  // CUDA toolkit being found at compile time.
  // An approximate tanh the attention kernels ask for (afn) stays for
  // tanh.approx.f32.
  ApproximateMathPassOptions approximate;
  approximate.keepFastTanh = true;
  approximate.expandPow = true;
  kernels.addPass(createApproximateMathPass(approximate));
  // What is left (floor, fma, sqrt, ...) maps to LLVM intrinsics that the
  // NVPTX back-end implements natively.
  kernels.addPass(createMathToIntrinsicsPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  // The tensor-core kernels' cp.async and ldmatrix; their fragment
  // vectors lower with the GPU ops below, which also map the workgroup
  // address space of vector loads and stores to shared memory.
  kernels.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createExternDynamicSharedPass());
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // Loop hints of the kernels' loops (the wide attention kernel's KV loop:
  // no LICM) reach LLVM.
  kernels.addNestedPass<LLVM::LLVMFuncOp>(createAttachLoopAnnotationsPass());
  // The host functions' sizes as arithmetic on buffers' and inputs' dims,
  // which the launch plan records as expressions (LaunchPlan.cpp).
  pm.addNestedPass<func::FuncOp>(memref::createExpandStridedMetadataPass());
  pm.addNestedPass<func::FuncOp>(createLowerAffinePass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
}

FailureOr<std::vector<GpuFunctionPlan>>
NVPTXTargetBackend::launchPlans(ModuleOp module) const {
  return buildLaunchPlans(module);
}

FailureOr<std::string> NVPTXTargetBackend::serialize(ModuleOp module,
                                                     OutputKind kind) const {
  bool artifact = kind == OutputKind::SharedObject;
  if (kind != OutputKind::PTX && kind != OutputKind::Assembly && !artifact)
    return emitError(module.getLoc(), "target ")
           << chip << " writes PTX (--emit=ptx) or artifacts holding it";
  std::vector<GpuFunctionPlan> plans;
  if (!artifact) {
    FailureOr<std::vector<GpuFunctionPlan>> built = buildLaunchPlans(module);
    if (failed(built))
      return failure();
    plans = std::move(*built);
  }

  DialectRegistry registry;
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  PassManager pm(module.getContext());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  if (failed(pm.run(module)))
    return failure();

  std::string out;
  llvm::raw_string_ostream os(out);
  if (!artifact) {
    os << "// Kernels of a Mnemo model for " << chip << ".\n";
    for (const GpuFunctionPlan &plan : plans)
      printLaunchPlan(plan, os);
  }
  for (auto binaryOp : module.getOps<gpu::BinaryOp>())
    for (Attribute object : binaryOp.getObjects())
      os << cast<gpu::ObjectAttr>(object).getObject().getValue();
  return out;
}

std::unique_ptr<TargetBackend>
mnemo::createNVPTXTargetBackend(llvm::StringRef name) {
  const ChipInfo *chip = lookupChip(name);
  if (!chip)
    return nullptr;
  TargetInfo info;
  info.vectorBits = 128;
  // Linear layers run one thread per output element; the CPU's cache
  // tiling would put dynamically sized buffers into its tiles.
  info.tileLinear = false;
  info.ptx = true;
  return std::make_unique<NVPTXTargetBackend>(name.str(),
                                              chip->ptxFeatures.str(), info);
}

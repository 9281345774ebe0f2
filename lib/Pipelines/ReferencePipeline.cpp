//===- ReferencePipeline.cpp - host reference execution path ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"
#include "mnemo/Pipelines/Pipelines.h"

#include "mnemo/Conversion/LoweringPipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mnemo::buildReferencePipeline(OpPassManager &pm) {
  pm.addPass(mnemo::createConvertMnemoToLinalgPass());
  pm.addPass(createCanonicalizerPass());

  buildBufferizationPasses(pm);
  buildLinalgToLoopsPasses(pm);
  buildConvertToLLVMPasses(pm);
}

void mnemo::registerPipelines() {
  PassPipelineRegistration<>(
      "mnemo-reference-pipeline",
      "Reference decomposition lowered to the LLVM dialect for host JIT runs",
      buildReferencePipeline);
}

//===- LoweringPipelines.cpp - shared lowering pass sequences ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/LoweringPipelines.h"
#include "mnemo/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mnemo::buildBufferizationPasses(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(mnemo::createReadOnlyArgumentsPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(mnemo::createDropInPlaceResultsPass());
  pm.addPass(mnemo::createCompactResultsPass());
  // Upstream's buffer-deallocation-pipeline, with its canonicalizations
  // and CSE run function by function (on the context's threads) instead
  // of over the whole module.
  pm.addPass(memref::createExpandReallocPass(
      memref::ExpandReallocPassOptions{/*emitDeallocs=*/false}));
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // Deallocation clones buffers it must hand out without owning them (a
  // returned argument, say); clones become alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
}

void mnemo::buildLinalgToLoopsPasses(OpPassManager &pm) {
  // Transfers of more than one dimension become loops of 1-D transfers,
  // which the LLVM conversion turns into (masked) vector loads and stores.
  // Unrolled: a small 2-D transfer (a GEMM micro-tile) becomes one 1-D
  // transfer per row, straight from the registers.
  // Function by function, so that functions are lowered on the context's
  // threads.
  OpPassManager &funcs = pm.nest<func::FuncOp>();
  funcs.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  funcs.addPass(createConvertLinalgToLoopsPass());
  funcs.addPass(createCanonicalizerPass());
  funcs.addPass(createCSEPass());
  funcs.addPass(mnemo::createLowerDynamicExpandShapePass());
  funcs.addPass(memref::createExpandStridedMetadataPass());
  funcs.addPass(createLowerAffinePass());
  funcs.addPass(createSCFToControlFlowPass());
}

void mnemo::buildConvertToLLVMPasses(OpPassManager &pm,
                                     bool allocationFunctions) {
  // Conversions that need no module-level declarations run function by
  // function (on the context's threads). Vector ops only occur in
  // functions; of them only `vector.print` would declare a function in the
  // module (printf), and no pipeline of the compiler makes one.
  pm.addNestedPass<func::FuncOp>(createConvertVectorToLLVMPass());
  pm.addNestedPass<func::FuncOp>(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  OpPassManager &funcs = pm.nest<func::FuncOp>();
  funcs.addPass(createArithToLLVMConversionPass());
  funcs.addPass(createConvertIndexToLLVMPass());
  // The vectorizer pads masked (scalable) transfers with ub.poison.
  funcs.addPass(createUBToLLVMConversionPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = allocationFunctions;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Unroll hints of the kernels' loops (LinearKernel's K loop) reach LLVM.
  pm.addNestedPass<LLVM::LLVMFuncOp>(mnemo::createAttachLoopAnnotationsPass());
}

//===- InitAll.cpp - register everything mnemo tools need -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/InitAll.h"

#include "dialects/Mnemo/IR/MnemoDialect.h"
#include "dialects/Mnemo/IR/ValueBounds.h"
#include "dialects/Mnemo/Transforms/BufferizableOpInterfaceImpl.h"
#include "dialects/Mnemo/Transforms/Passes.h"
#include "mnemo/Conversion/Passes.h"
#include "mnemo/Target/CPU/Passes.h"
#include "mnemo/Target/NVPTX/Passes.h"
#include "mnemo/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"

void mlir::mnemo::registerAllDialects(DialectRegistry &registry) {
  registry.insert<MnemoDialect>();
  registerValueBoundsOpInterfaceExternalModels(registry);
  registerBufferizableOpInterfaceExternalModels(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
}

void mlir::mnemo::registerAllPasses() {
  mlir::registerAllPasses();
  registerMnemoPasses();
  registerConversionPasses();
  registerCPUPasses();
  registerNVPTXPasses();
  registerPipelines();
}

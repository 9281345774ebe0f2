//===- SplitCodegen.h - O1 and codegen of a module on threads --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_TARGET_CPU_SPLITCODEGEN_H
#define MNEMO_LIB_TARGET_CPU_SPLITCODEGEN_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::mnemo {

/// Makes a target machine for one thread (target machines are not shared).
using TargetMachineFactory =
    llvm::function_ref<std::unique_ptr<llvm::TargetMachine>()>;

/// Layers of one shape compile to identical kernels (their weights are
/// arguments): merging them first optimizes and emits one copy.
void mergeIdenticalFunctions(llvm::Module &module);

/// The LLVM passes for `tm`: O1 (the kernels reach LLVM already tiled and
/// vectorized by MLIR; O2 and O3 gave the same speed for 5–10% more of the
/// compile, 2026-12-03, docs/CPU.md), or `-mnemo-cpu-llvm-passes`; an
/// error only for a pipeline that does not parse.
llvm::Error optimizeModule(llvm::Module &module, llvm::TargetMachine &tm);

/// Whether `-mnemo-cpu-llvm-passes`, when given, parses (checked once,
/// before the partitions run it on their threads).
llvm::Error checkLLVMPasses(llvm::TargetMachine &tm);

/// Emits `module` (functions merged, not yet optimized) as relocatable
/// objects, one per partition, optimized (optimizeModule) and generated on
/// up to `threads` threads; linked together they make the module's code. A
/// partition is a set of whole kernels: a function with the local functions
/// it may inline. Locals that other partitions reference become hidden
/// globals. The objects do not depend on the number of threads, only on
/// `partitions`.
llvm::Expected<llvm::SmallVector<std::string>>
emitPartitionedObjects(llvm::Module &module, unsigned partitions,
                       unsigned threads, TargetMachineFactory makeTarget);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_TARGET_CPU_SPLITCODEGEN_H

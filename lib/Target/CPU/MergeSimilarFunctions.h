//===- MergeSimilarFunctions.h - one body for kernels of any size -*- C++ -*-//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_TARGET_CPU_MERGESIMILARFUNCTIONS_H
#define MNEMO_LIB_TARGET_CPU_MERGESIMILARFUNCTIONS_H

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::mnemo {

/// What `mergeSimilarFunctions` did.
struct SimilarFunctionsMerged {
  /// Functions whose bodies became calls of a shared body.
  unsigned functions = 0;
  /// Shared bodies made.
  unsigned bodies = 0;
};

/// Merges local vector kernels that differ only in scalar constants (the
/// GEMM of every projection width, the norm of every hidden size: kernels of
/// one op on static shapes) into one body that takes the differing values as
/// parameters; each original becomes a call of it with its own values, which
/// O1 inlines into its callers. Run on the module as translated, before O1,
/// so that the shared body is optimized and generated once.
SimilarFunctionsMerged mergeSimilarFunctions(llvm::Module &module);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_TARGET_CPU_MERGESIMILARFUNCTIONS_H

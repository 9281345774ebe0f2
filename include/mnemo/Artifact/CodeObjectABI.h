//===- CodeObjectABI.h - what generated code and the runtime share -*- C++ -*-=//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The names and slots by which the runtime finds its way into a CPU code
// object (runtime/schema/artifact.fbs describes the same contract from the
// runtime's side): the exported kernels, the hook table the runtime fills
// when it loads the code, and the module attribute that names the profile
// points. The CPU target emits them; the driver writes the artifact that
// refers to them.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_ARTIFACT_CODEOBJECTABI_H
#define MNEMO_ARTIFACT_CODEOBJECTABI_H

#include "llvm/ADT/StringRef.h"

namespace mlir::mnemo {

/// Prefix of the artifact kernels: `void mnemo_entry_<function>(void **)`.
inline constexpr llvm::StringLiteral kEntryPrefix = "mnemo_entry_";

/// The code object's table of runtime hooks and its slots.
inline constexpr llvm::StringLiteral kHooksSymbol = "mnemo_hooks";
inline constexpr unsigned kParallelForHook = 0;
inline constexpr unsigned kProfileHook = 1;
inline constexpr unsigned kAllocHook = 2;
inline constexpr unsigned kFreeHook = 3;
inline constexpr unsigned kNumHooks = 4;

/// On the module: the profile points' names, in slot order.
inline constexpr llvm::StringLiteral kProfilePointsAttr =
    "mnemo.profile_points";

} // namespace mlir::mnemo

#endif // MNEMO_ARTIFACT_CODEOBJECTABI_H

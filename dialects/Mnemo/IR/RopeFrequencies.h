//===- RopeFrequencies.h - rotary inverse frequencies -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The rotary inverse frequencies of each `#mnemo.rope_scaling` kind, computed
// on the host in double precision. Lowerings materialize them as constants;
// the dynamic-NTK kind depends on the input and is computed in the IR from
// `dynamicNtkBase`'s formula instead.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_ROPEFREQUENCIES_H
#define MNEMO_DIALECT_ROPEFREQUENCIES_H

#include "dialects/Mnemo/IR/MnemoAttrs.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::mnemo {

/// Returns inv_freq[k] for k < rotaryDim / 2. `scaling` may be null (no
/// scaling). For `dynamic` scaling this is the unscaled table, which is what
/// applies while the positions stay below `original_max_position`.
llvm::SmallVector<double> computeRopeInverseFrequencies(double theta,
                                                        int64_t rotaryDim,
                                                        RopeScalingAttr scaling);

/// The NTK-aware base that `dynamic` scaling uses for a sequence of `seqLen`
/// tokens (seqLen is clamped below at `originalMaxPosition`).
double dynamicNtkBase(double theta, int64_t rotaryDim, double factor,
                      int64_t originalMaxPosition, int64_t seqLen);

} // namespace mlir::mnemo

#endif // MNEMO_DIALECT_ROPEFREQUENCIES_H

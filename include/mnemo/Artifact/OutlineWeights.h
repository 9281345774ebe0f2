//===- OutlineWeights.h - constants to weight operands ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_ARTIFACT_OUTLINEWEIGHTS_H
#define MNEMO_ARTIFACT_OUTLINEWEIGHTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mnemo/Artifact/ArtifactWriter.h"

namespace mlir::mnemo {

/// Replaces every tensor constant of `func` holding at least `minBytes`
/// bytes by a new trailing function argument, so weights live in the
/// artifact's weights segment instead of the code object. Returns the
/// outlined values in argument order (appended to `weights`), and their
/// indices in `indices`.
void outlineWeights(func::FuncOp func, int64_t minBytes,
                    std::vector<ArtifactWeight> &weights,
                    SmallVectorImpl<unsigned> &indices);

} // namespace mlir::mnemo

#endif // MNEMO_ARTIFACT_OUTLINEWEIGHTS_H

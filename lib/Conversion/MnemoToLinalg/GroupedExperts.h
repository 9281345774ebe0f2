//===- GroupedExperts.h - mnemo.experts grouped by expert -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_CONVERSION_MNEMOTOLINALG_GROUPEDEXPERTS_H
#define MNEMO_CONVERSION_MNEMOTOLINALG_GROUPEDEXPERTS_H

#include "dialects/Mnemo/IR/MnemoOps.h"

namespace mlir::mnemo {

/// `op` computed expert by expert (GroupedExperts.cpp) from its weights
/// transposed per expert (gateT, upT [E, H, I], downT [E, I, O]): the
/// result [B, S, O] in `ct`.
Value groupedExperts(OpBuilder &b, Location loc, ExpertsOp op, Value gateT,
                     Value upT, Value downT, FloatType ct);

} // namespace mlir::mnemo

#endif // MNEMO_CONVERSION_MNEMOTOLINALG_GROUPEDEXPERTS_H

//===- LoopIndices.h - linearized loop nests on GPU threads -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A loop nest spread over GPU threads is walked by one linear index; these
// helpers give its size and split it back into the loops' indices. Shared
// by mnemo-gpu-launch-loops and mnemo-gpu-warp-reductions.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_TARGET_NVPTX_LOOPINDICES_H
#define MNEMO_LIB_TARGET_NVPTX_LOOPINDICES_H

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::mnemo::nvptx {

/// The product of the index values `counts` (1 for none).
inline Value productOf(OpBuilder &b, Location loc, ValueRange counts) {
  Value p = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value c : counts)
    p = arith::MulIOp::create(b, loc, p, c);
  return p;
}

/// The zero-based indices of the row-major linear index `lin` over
/// `counts`, the last the fastest (the first is not bounded).
inline SmallVector<Value> delinearizeIndex(OpBuilder &b, Location loc,
                                           Value lin, ValueRange counts) {
  SmallVector<Value> indices(counts.size());
  for (int64_t i = counts.size() - 1; i > 0; --i) {
    indices[i] = arith::RemUIOp::create(b, loc, lin, counts[i]);
    lin = arith::DivUIOp::create(b, loc, lin, counts[i]);
  }
  if (!counts.empty())
    indices[0] = lin;
  return indices;
}

} // namespace mlir::mnemo::nvptx

#endif // MNEMO_LIB_TARGET_NVPTX_LOOPINDICES_H

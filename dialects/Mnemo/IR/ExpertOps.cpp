//===- ExpertOps.cpp - mnemo mixture-of-experts ops -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/IR/ShapeChecks.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::shape_checks;

LogicalResult ExpertsOp::verify() {
  Operation *op = getOperation();
  RankedTensorType x = getInput().getType(), g = getGate().getType(),
                   u = getUp().getType(), d = getDown().getType(),
                   idx = getIndices().getType(), w = getWeights().getType(),
                   r = getResult().getType();
  if (failed(checkRank(op, x, 3, "input", "[B, S, H]")) ||
      failed(checkRank(op, g, 3, "gate", "[E, I, H]")) ||
      failed(checkRank(op, u, 3, "up", "[E, I, H]")) ||
      failed(checkRank(op, d, 3, "down", "[E, H, I]")) ||
      failed(checkRank(op, idx, 3, "indices", "[B, S, K]")) ||
      failed(checkRank(op, w, 3, "weights", "[B, S, K]")) ||
      failed(checkRank(op, r, 3, "result", "[B, S, H]")))
    return failure();
  for (unsigned i = 0; i < 3; ++i)
    if (failed(checkStatic(op, g, i, "gate shape")) ||
        failed(checkStatic(op, u, i, "up shape")) ||
        failed(checkStatic(op, d, i, "down shape")))
      return failure();
  if (failed(checkStatic(op, x, 2, "hidden size")) ||
      failed(checkStatic(op, idx, 2, "experts per token")))
    return failure();
  int64_t e = g.getDimSize(0), inter = g.getDimSize(1), h = x.getDimSize(2);
  int64_t batch = x.getDimSize(0), seq = x.getDimSize(1);
  if (failed(checkDim(op, g, 2, h, "gate columns", "hidden size")) ||
      failed(checkDim(op, u, 0, e, "up experts", "gate experts")) ||
      failed(checkDim(op, u, 1, inter, "up rows", "gate rows")) ||
      failed(checkDim(op, u, 2, h, "up columns", "hidden size")) ||
      failed(checkDim(op, d, 0, e, "down experts", "gate experts")) ||
      failed(checkDim(op, d, 1, h, "down rows", "hidden size")) ||
      failed(checkDim(op, d, 2, inter, "down columns", "gate rows")) ||
      failed(checkDim(op, idx, 0, batch, "indices batch", "input batch")) ||
      failed(checkDim(op, idx, 1, seq, "indices length", "input length")) ||
      failed(checkDim(op, w, 0, batch, "weights batch", "input batch")) ||
      failed(checkDim(op, w, 1, seq, "weights length", "input length")) ||
      failed(checkDim(op, w, 2, idx.getDimSize(2), "weights per token",
                      "indices per token")) ||
      failed(checkDim(op, r, 0, batch, "result batch", "input batch")) ||
      failed(checkDim(op, r, 1, seq, "result length", "input length")) ||
      failed(checkDim(op, r, 2, h, "result hidden size", "input hidden size")))
    return failure();
  if (r.getElementType() != x.getElementType())
    return emitOpError() << "result element type " << r.getElementType()
                         << " must match the input's " << x.getElementType();
  return checkSwiGluLimit(op, getLimitAttr());
}

LogicalResult GroupedLinearOp::verify() {
  Operation *op = getOperation();
  RankedTensorType x = getInput().getType(), w = getWeight().getType(),
                   groups = getGroups().getType(), r = getResult().getType();
  if (failed(checkRank(op, x, 2, "input", "[R, K]")) ||
      failed(checkRank(op, w, 3, "weight", "[E, N, K]")) ||
      failed(checkRank(op, groups, 1, "groups", "[G]")) ||
      failed(checkRank(op, r, 2, "result", "[R, N]")))
    return failure();
  for (unsigned i = 0; i < 3; ++i)
    if (failed(checkStatic(op, w, i, "weight shape")))
      return failure();
  if (w.getDimSize(0) == 0)
    return emitOpError() << "weight has no groups";
  if (failed(checkStatic(op, x, 1, "input features")) ||
      failed(checkDim(op, w, 2, x.getDimSize(1), "weight columns",
                      "input features")) ||
      failed(
          checkDim(op, r, 0, x.getDimSize(0), "result rows", "input rows")) ||
      failed(checkDim(op, r, 1, w.getDimSize(1), "result features",
                      "weight rows")))
    return failure();
  int64_t rows = getGroupRows();
  if (!x.isDynamicDim(0))
    if (failed(checkDim(op, groups, 0, (x.getDimSize(0) + rows - 1) / rows,
                        "groups", "ceil(input rows / group rows)")))
      return failure();
  return success();
}

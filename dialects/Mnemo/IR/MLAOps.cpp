//===- MLAOps.cpp - mnemo multi-head latent attention -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/IR/ShapeChecks.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::shape_checks;

double MLAAttentionOp::getEffectiveScale() {
  if (FloatAttr s = getScaleAttr())
    return s.getValueAsDouble();
  return 1.0 / std::sqrt(static_cast<double>(getNopeDim() + getRopeDim()));
}

MLAForm MLAAttentionOp::getFormOrDefault() {
  return getForm().value_or(MLAForm::Expanded);
}

int64_t MLAAttentionOp::getNumHeads() {
  return getQNope().getType().getDimSize(1);
}
int64_t MLAAttentionOp::getNopeDim() {
  return getQNope().getType().getDimSize(3);
}
int64_t MLAAttentionOp::getRopeDim() {
  return getQPe().getType().getDimSize(3);
}
int64_t MLAAttentionOp::getLatentRank() {
  return getCKv().getType().getDimSize(2);
}
int64_t MLAAttentionOp::getValueDim() {
  return getWUv().getType().getDimSize(1);
}

LogicalResult MLAAttentionOp::verify() {
  Operation *op = getOperation();
  RankedTensorType qn = getQNope().getType(), qp = getQPe().getType(),
                   c = getCKv().getType(), kp = getKPe().getType(),
                   wk = getWUk().getType(), wv = getWUv().getType(),
                   r = getResult().getType();
  if (failed(checkRank(op, qn, 4, "q_nope", "[B, H, Sq, dn]")) ||
      failed(checkRank(op, qp, 4, "q_pe", "[B, H, Sq, dr]")) ||
      failed(checkRank(op, c, 3, "c_kv", "[B, Skv, r]")) ||
      failed(checkRank(op, kp, 3, "k_pe", "[B, Skv, dr]")) ||
      failed(checkRank(op, wk, 3, "w_uk", "[H, dn, r]")) ||
      failed(checkRank(op, wv, 3, "w_uv", "[H, dv, r]")) ||
      failed(checkRank(op, r, 4, "result", "[B, H, Sq, dv]")))
    return failure();
  if (failed(checkStatic(op, qn, 1, "head count")) ||
      failed(checkStatic(op, qn, 3, "nope head dim")) ||
      failed(checkStatic(op, qp, 3, "rope head dim")) ||
      failed(checkStatic(op, c, 2, "latent rank")))
    return failure();
  for (unsigned i = 0; i < 3; ++i)
    if (failed(checkStatic(op, wk, i, "w_uk shape")) ||
        failed(checkStatic(op, wv, i, "w_uv shape")))
      return failure();
  int64_t batch = qn.getDimSize(0), heads = qn.getDimSize(1),
          sq = qn.getDimSize(2), rank = c.getDimSize(2);
  if (failed(checkDim(op, qp, 0, batch, "q_pe batch", "q_nope batch")) ||
      failed(checkDim(op, qp, 1, heads, "q_pe heads", "q_nope heads")) ||
      failed(checkDim(op, qp, 2, sq, "q_pe length", "q_nope length")) ||
      failed(checkDim(op, c, 0, batch, "c_kv batch", "q_nope batch")) ||
      failed(checkDim(op, kp, 0, batch, "k_pe batch", "q_nope batch")) ||
      failed(checkDim(op, kp, 1, c.getDimSize(1), "k_pe length",
                      "c_kv length")) ||
      failed(checkDim(op, kp, 2, qp.getDimSize(3), "k_pe head dim",
                      "q_pe head dim")) ||
      failed(checkDim(op, wk, 0, heads, "w_uk heads", "q_nope heads")) ||
      failed(checkDim(op, wk, 1, qn.getDimSize(3), "w_uk rows",
                      "q_nope head dim")) ||
      failed(checkDim(op, wk, 2, rank, "w_uk columns", "c_kv rank")) ||
      failed(checkDim(op, wv, 0, heads, "w_uv heads", "q_nope heads")) ||
      failed(checkDim(op, wv, 2, rank, "w_uv columns", "c_kv rank")))
    return failure();
  if (r.getElementType() != qn.getElementType())
    return emitOpError() << "result element type " << r.getElementType()
                         << " must match q_nope's " << qn.getElementType();
  if (failed(checkDim(op, r, 0, batch, "result batch", "q_nope batch")) ||
      failed(checkDim(op, r, 1, heads, "result heads", "q_nope heads")) ||
      failed(checkDim(op, r, 2, sq, "result length", "q_nope length")) ||
      failed(checkDim(op, r, 3, wv.getDimSize(1), "result head dim",
                      "w_uv rows")))
    return failure();
  if (Value indices = getIndices()) {
    auto it = cast<RankedTensorType>(indices.getType());
    if (failed(checkRank(op, it, 3, "indices", "[B, Sq, K]")) ||
        failed(checkDim(op, it, 0, batch, "indices batch", "q_nope batch")) ||
        failed(checkDim(op, it, 1, sq, "indices length", "q_nope length")))
      return failure();
    if (getCausal() || getQOffset())
      return emitOpError() << "with indices takes neither causal nor "
                              "q_offset: the indices select the keys";
  }
  return checkScale(op, getScaleAttr());
}

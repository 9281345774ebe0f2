//===- MatMul.cpp - ONNX MatMul and Gemm ------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MatMul (numpy semantics: batch dims broadcast) and Gemm as linalg.generic
// contractions accumulating into a zero-filled tensor.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {

/// C[batch..., m, n] = sum_k A[batch..., m, k] * B[batch..., k, n], where A
/// and B may have fewer batch dims or batch extents of 1 (broadcast), and
/// `transA` / `transB` swap the last two dims of an operand.
FailureOr<Value> contract(NodeContext &ctx, Value a, Value bv, bool transA,
                          bool transB) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  MLIRContext *mctx = b.getContext();
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(bv.getType());
  if (at.getRank() < 2 || bt.getRank() < 2) {
    (void)ctx.error("operands of rank < 2 are not supported yet");
    return failure();
  }
  Type element = at.getElementType();
  if (element != bt.getElementType() || !isa<FloatType>(element)) {
    (void)ctx.error("expects float operands of one element type");
    return failure();
  }
  int64_t ar = at.getRank(), br = bt.getRank();
  int64_t m = transA ? ar - 1 : ar - 2, ka = transA ? ar - 2 : ar - 1;
  int64_t kb = transB ? br - 1 : br - 2, n = transB ? br - 2 : br - 1;
  int64_t K1 = at.getDimSize(ka), K2 = bt.getDimSize(kb);
  if (!ShapedType::isDynamic(K1) && !ShapedType::isDynamic(K2) && K1 != K2) {
    (void)ctx.error("contracted dimensions differ (" + llvm::Twine(K1) +
                    " vs " + llvm::Twine(K2) + ")");
    return failure();
  }
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes(at.getShape().drop_back(2), bt.getShape().drop_back(2));
  if (failed(batch)) {
    (void)ctx.error("batch dimensions do not broadcast");
    return failure();
  }
  unsigned nb = batch->size();
  // Loops: batch..., m, n, k.
  unsigned numLoops = nb + 3;
  auto operandMap = [&](RankedTensorType t, int64_t row, int64_t col,
                        unsigned rowLoop, unsigned colLoop) {
    SmallVector<AffineExpr> exprs;
    unsigned lead = nb - (t.getRank() - 2);
    for (int64_t i = 0; i < t.getRank() - 2; ++i)
      exprs.push_back(t.getDimSize(i) == 1 && (*batch)[lead + i] != 1
                          ? getAffineConstantExpr(0, mctx)
                          : getAffineDimExpr(lead + i, mctx));
    SmallVector<AffineExpr> tail(2);
    tail[row - (t.getRank() - 2)] = getAffineDimExpr(rowLoop, mctx);
    tail[col - (t.getRank() - 2)] = getAffineDimExpr(colLoop, mctx);
    exprs.append(tail);
    return AffineMap::get(numLoops, 0, exprs, mctx);
  };
  SmallVector<AffineMap> maps = {operandMap(at, m, ka, nb, nb + 2),
                                 operandMap(bt, kb, n, nb + 2, nb + 1)};
  SmallVector<AffineExpr> outExprs;
  for (unsigned i = 0; i < nb + 2; ++i)
    outExprs.push_back(getAffineDimExpr(i, mctx));
  maps.push_back(AffineMap::get(numLoops, 0, outExprs, mctx));

  // Result sizes; dynamic ones from an operand dim that is not broadcast.
  SmallVector<OpFoldResult> sizes;
  for (unsigned i = 0; i < nb; ++i) {
    if (!ShapedType::isDynamic((*batch)[i])) {
      sizes.push_back(b.getIndexAttr((*batch)[i]));
      continue;
    }
    int64_t ai = int64_t(i) - (nb - (ar - 2));
    bool fromA = ai >= 0 && at.getDimSize(ai) != 1;
    int64_t bi = int64_t(i) - (nb - (br - 2));
    sizes.push_back(tensor::DimOp::create(b, loc, fromA ? a : bv,
                                          fromA ? ai : bi)
                        .getResult());
  }
  sizes.push_back(tensor::getMixedSize(b, loc, a, m));
  sizes.push_back(tensor::getMixedSize(b, loc, bv, n));
  Value init = builders::filledTensor(b, loc, sizes, element, 0.0);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{a, bv}, init, maps,
      builders::iterators(numLoops, {nb + 2}),
      [&](OpBuilder &nb2, Location nl, ValueRange args) {
        Value p = arith::MulFOp::create(nb2, nl, args[0], args[1]);
        linalg::YieldOp::create(nb2, nl,
                                arith::AddFOp::create(nb2, nl, args[2], p)
                                    .getResult());
      });
  return generic.getResult(0);
}

LogicalResult matMul(NodeContext &ctx) {
  FailureOr<Value> a = ctx.input(0), b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  FailureOr<Value> out = contract(ctx, *a, *b, false, false);
  return failed(out) ? failure() : ctx.setOutput(0, *out);
}

LogicalResult gemm(NodeContext &ctx) {
  FailureOr<Value> a = ctx.input(0), b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  if (cast<RankedTensorType>(a->getType()).getRank() != 2 ||
      cast<RankedTensorType>(b->getType()).getRank() != 2)
    return ctx.error("expects 2-D operands");
  FailureOr<Value> ab = contract(ctx, *a, *b, ctx.getInt("transA", 0),
                                 ctx.getInt("transB", 0));
  if (failed(ab))
    return failure();
  double alpha = ctx.getFloat("alpha", 1.0f), beta = ctx.getFloat("beta", 1.0f);
  Type element = cast<RankedTensorType>(ab->getType()).getElementType();
  SmallVector<Value> operands = {*ab};
  if (ctx.hasInput(2)) {
    FailureOr<Value> c = ctx.input(2);
    if (failed(c))
      return failure();
    operands.push_back(*c);
  }
  FailureOr<Value> out = broadcastElementwise(
      ctx, operands, element,
      [&](OpBuilder &nb, Location loc, ValueRange v) {
        Value y = arith::MulFOp::create(
            nb, loc, v[0], builders::floatConst(nb, loc, element, alpha));
        if (v.size() > 1)
          y = arith::AddFOp::create(
              nb, loc, y,
              arith::MulFOp::create(
                  nb, loc, v[1], builders::floatConst(nb, loc, element, beta)));
        return y;
      },
      cast<RankedTensorType>(ab->getType()).getShape());
  return failed(out) ? failure() : ctx.setOutput(0, *out);
}

/// com.microsoft FusedMatMul: alpha * op(A) @ op(B), op transposing the
/// last two dims when transA / transB is set.
LogicalResult fusedMatMul(NodeContext &ctx) {
  if (ctx.getInt("transBatchA", 0) || ctx.getInt("transBatchB", 0))
    return ctx.error("transBatchA/transBatchB are not supported yet");
  FailureOr<Value> a = ctx.input(0), b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  FailureOr<Value> ab = contract(ctx, *a, *b, ctx.getInt("transA", 0),
                                 ctx.getInt("transB", 0));
  if (failed(ab))
    return failure();
  double alpha = ctx.getFloat("alpha", 1.0f);
  if (alpha == 1.0)
    return ctx.setOutput(0, *ab);
  auto type = cast<RankedTensorType>(ab->getType());
  FailureOr<Value> out = broadcastElementwise(
      ctx, *ab, type.getElementType(),
      [&](OpBuilder &nb, Location loc, ValueRange v) -> Value {
        return arith::MulFOp::create(
            nb, loc, v[0],
            builders::floatConst(nb, loc, type.getElementType(), alpha));
      },
      type.getShape());
  return failed(out) ? failure() : ctx.setOutput(0, *out);
}

} // namespace

void mlir::mnemo::onnx_import::registerMatMulHandlers(HandlerRegistry &r) {
  r.add("", "MatMul", 1, matMul);
  r.add("", "Gemm", 7, gemm);
  r.add("com.microsoft", "FusedMatMul", 1, fusedMatMul);
}

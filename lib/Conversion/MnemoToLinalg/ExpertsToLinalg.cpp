//===- ExpertsToLinalg.cpp - mnemo.experts reference lowering ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.experts as contractions over each token's selected experts only:
// the expert's weight rows are read where the contraction uses them
// (tensor.extract at the index the token's router chose), so the work is
// K / E of the dense mixture and no expert weight is copied:
//
//   g[b,s,j,i] = sum_h x[b,s,h] gate[e,i,h]     e = indices[b,s,j]
//   u[b,s,j,i] = sum_h x[b,s,h] up[e,i,h]
//   out[b,s,o] = sum_j sum_i weights[b,s,j] swiglu(g, u)[b,s,j,i] down[e,o,i]
//
// With `alongOutputs` (the CPU targets) and constant weights, each
// expert's matrices are transposed at compile time ([E, H, I] and
// [E, I, O]), and the contractions become a parallel loop over the tokens
// (and, for the projections, their selected experts) that reads each
// expert's index once, around rows of the result accumulating rows of the
// transposed weights: the output feature is the innermost loop, its steps
// independent and its addresses affine, which the CPU targets vectorize.
// (A prefill on the CPU targets is grouped by expert before this lowering:
// mnemo-group-experts.)
// In the default form the inner loop is a dot product whose every step
// waits for the one before (the sum lives in memory), with the expert's
// index read inside it. Each result still sums its products in the same
// order (h, or j then i, ascending), so the values are the same.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"


using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// `init` with each row along its last dim replaced by `row(ivs, acc)`:
/// a parallel loop over init's other dims (ivs), each iteration reading its
/// row (acc, a 1-D tensor of `ct`) and writing the row it returns.
Value forEachRow(OpBuilder &b, Location loc, Value init, FloatType ct,
                 function_ref<Value(ValueRange ivs, Value acc)> row) {
  auto type = cast<RankedTensorType>(init.getType());
  int64_t loops = type.getRank() - 1;
  SmallVector<OpFoldResult> ubs;
  for (int64_t d = 0; d < loops; ++d)
    ubs.push_back(tensor::getMixedSize(b, loc, init, d));
  auto forall =
      scf::ForallOp::create(b, loc, ubs, ValueRange{init}, std::nullopt);
  Block *body = forall.getBody();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(body->getTerminator());
  ValueRange ivs = body->getArguments().take_front(loops);
  Value out = body->getArgument(loops);
  OpFoldResult one = b.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets(ivs.begin(), ivs.end()), sizes(loops, one),
      strides(loops + 1, one);
  offsets.push_back(b.getIndexAttr(0));
  sizes.push_back(b.getIndexAttr(type.getShape().back()));
  Value acc = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({type.getShape().back()}, ct), out, offsets,
      sizes, strides);
  Value result = row(ivs, acc);
  b.setInsertionPointToEnd(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, result, out, offsets, sizes,
                                        strides);
  return forall.getResult(0);
}

/// `acc` [N] plus, for each n, the terms `product(v[k], k, n)` summed over
/// k in order: a generic over (k, n), n innermost.
Value accumulateRows(
    OpBuilder &b, Location loc, Value v, Value acc, FloatType ct,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value)> product) {
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, acc.getType(), ValueRange{v}, ValueRange{acc},
             ArrayRef<AffineMap>{projection(ctx, 2, {0}),
                                 projection(ctx, 2, {1})},
             iterators(2, {0}),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value p =
                   product(nb, nl, a[0], linalg::IndexOp::create(nb, nl, 0),
                           linalg::IndexOp::create(nb, nl, 1));
               linalg::YieldOp::create(
                   nb, nl, arith::AddFOp::create(nb, nl, a[1], p).getResult());
             })
      .getResult(0);
}

/// The unit-stride slice of `t` at `offsets` along its last dim, `n` wide.
Value lastDimRow(OpBuilder &b, Location loc, Value t, ValueRange offsets,
                 int64_t n) {
  auto type = cast<RankedTensorType>(t.getType());
  OpFoldResult one = b.getIndexAttr(1);
  SmallVector<OpFoldResult> offs(offsets.begin(), offsets.end()),
      sizes(offsets.size(), one), strides(offsets.size() + 1, one);
  offs.push_back(b.getIndexAttr(0));
  sizes.push_back(b.getIndexAttr(n));
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({n}, type.getElementType()), t, offs, sizes,
      strides);
}

/// init [B, S, K, I] plus x [B, S, H] against the rows of `wT` [E, H, I]
/// of each token's selected experts: per (b, s, j), the expert's index read
/// once, then a row of I outputs accumulates x[b, s, h] times row h of the
/// expert (loops h, i).
Value projectRows(OpBuilder &b, Location loc, Value x, Value idx, Value wT,
                  Value init, int64_t experts, FloatType ct) {
  int64_t h = cast<RankedTensorType>(wT.getType()).getDimSize(1);
  return forEachRow(b, loc, init, ct, [&](ValueRange ivs, Value acc) {
    Value e = clampedIndex(b, loc, tensor::ExtractOp::create(b, loc, idx, ivs),
                           arith::ConstantIndexOp::create(b, loc, experts))
                  .first;
    Value xRow = lastDimRow(b, loc, x, ivs.take_front(2), h);
    return accumulateRows(
        b, loc, xRow, acc, ct,
        [&](OpBuilder &nb, Location nl, Value xv, Value k, Value n) -> Value {
          Value wv = tensor::ExtractOp::create(nb, nl, wT, ValueRange{e, k, n});
          return arith::MulFOp::create(nb, nl, castFloat(nb, nl, xv, ct),
                                       castFloat(nb, nl, wv, ct));
        });
  });
}

/// init [B, S, O] plus, for each token, the sum over its selected experts
/// j (in order) of weights[b, s, j] act[b, s, j, :] against the rows of
/// `dT` [E, I, O], the down matrices transposed: per (b, s), a loop over j
/// that reads the expert's index once, each step a row of O outputs
/// accumulating along i (loops i, o).
Value downRows(OpBuilder &b, Location loc, Value act, Value idx, Value weights,
               Value dT, Value init, int64_t experts, FloatType ct) {
  int64_t inter = cast<RankedTensorType>(dT.getType()).getDimSize(1);
  return forEachRow(b, loc, init, ct, [&](ValueRange ivs, Value acc) {
    Value bi = ivs[0], si = ivs[1];
    Value k = tensor::DimOp::create(b, loc, idx, 2);
    auto loop = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0), k,
        arith::ConstantIndexOp::create(b, loc, 1), ValueRange{acc},
        [&](OpBuilder &lb, Location ll, Value j, ValueRange iter) {
          std::pair<Value, Value> picked = clampedIndex(
              lb, ll,
              tensor::ExtractOp::create(lb, ll, idx, ValueRange{bi, si, j}),
              arith::ConstantIndexOp::create(lb, ll, experts));
          Value e = picked.first, valid = picked.second;
          Value w = castFloat(
              lb, ll,
              tensor::ExtractOp::create(lb, ll, weights, ValueRange{bi, si, j}),
              ct);
          Value actRow = lastDimRow(lb, ll, act, ValueRange{bi, si, j}, inter);
          Value row = accumulateRows(
              lb, ll, actRow, iter[0], ct,
              [&](OpBuilder &nb, Location nl, Value av, Value i,
                  Value o) -> Value {
                Value dv =
                    tensor::ExtractOp::create(nb, nl, dT, ValueRange{e, i, o});
                Value p = arith::MulFOp::create(
                    nb, nl,
                    arith::MulFOp::create(nb, nl, w, castFloat(nb, nl, av, ct)),
                    castFloat(nb, nl, dv, ct));
                return arith::SelectOp::create(nb, nl, valid, p,
                                               floatConst(nb, nl, ct, 0.0));
              });
          scf::YieldOp::create(lb, ll, row);
        });
    return loop.getResult(0);
  });
}

struct ExpertsLowering final : OpRewritePattern<ExpertsOp> {
  ExpertsLowering(MLIRContext *ctx, bool alongOutputs)
      : OpRewritePattern(ctx), alongOutputs(alongOutputs) {}

  LogicalResult matchAndRewrite(ExpertsOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value x = op.getInput(), idx = op.getIndices();
    RankedTensorType resultType = op.getResult().getType();
    FloatType ct = computeType(resultType.getElementType());
    int64_t experts = op.getGate().getType().getDimSize(0);
    SmallVector<OpFoldResult> xs = tensorSizes(b, loc, x),
                              is = tensorSizes(b, loc, idx);
    OpFoldResult inter = b.getIndexAttr(op.getGate().getType().getDimSize(1));
    AffineExpr d0, d1, d2, d3, d4;
    bindDims(ctx, d0, d1, d2, d3, d4);
    auto map = [&](ArrayRef<AffineExpr> e) {
      return AffineMap::get(5, 0, e, ctx);
    };

    // The expert an index names (clamped into range so that the read is
    // safe) and whether it names one.
    auto expert = [&](OpBuilder &nb, Location nl, Value raw) {
      return clampedIndex(nb, nl, raw,
                          arith::ConstantIndexOp::create(nb, nl, experts));
    };

    // Each weight transposed where it can be (the three are independent).
    Value gateT, upT, downT;
    if (alongOutputs) {
      gateT = transposedExperts(b, loc, op.getGate());
      upT = transposedExperts(b, loc, op.getUp());
      downT = transposedExperts(b, loc, op.getDown());
    }

    // [B, S, K, I] = x against the selected experts' rows of `w` (loops b,
    // s, j, i, h), or along the rows of `wT`, w transposed (projectRows).
    auto project = [&](Value w, Value wT) -> Value {
      Value init = filledTensor(b, loc, {xs[0], xs[1], is[2], inter}, ct, 0.0);
      if (wT)
        return projectRows(b, loc, x, idx, wT, init, experts, ct);
      return linalg::GenericOp::create(
                 b, loc, init.getType(), ValueRange{x, idx}, init,
                 ArrayRef<AffineMap>{map({d0, d1, d4}), map({d0, d1, d2}),
                                     map({d0, d1, d2, d3})},
                 iterators(5, {4}),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   Value e = expert(nb, nl, a[1]).first;
                   Value wv = tensor::ExtractOp::create(
                       nb, nl, w,
                       ValueRange{e, linalg::IndexOp::create(nb, nl, 3),
                                  linalg::IndexOp::create(nb, nl, 4)});
                   yieldMultiplyAdd(nb, nl, a[0], wv, a[2], ct);
                 })
          .getResult(0);
    };
    Value act = SwiGluOp::create(b, loc, project(op.getGate(), gateT),
                                 project(op.getUp(), upT), op.getLimitAttr());

    // out[b,s,o] = sum_j sum_i w[b,s,j] act[b,s,j,i] down[e,o,i]
    //   (loops b, s, o, j, i), or along the rows of downT (downRows)
    Value out = filledTensor(b, loc, {xs[0], xs[1], xs[2]}, ct, 0.0);
    if (downT)
      out =
          downRows(b, loc, act, idx, op.getWeights(), downT, out, experts, ct);
    else
      out =
          linalg::GenericOp::create(
              b, loc, out.getType(), ValueRange{act, idx, op.getWeights()}, out,
              ArrayRef<AffineMap>{map({d0, d1, d3, d4}), map({d0, d1, d3}),
                                  map({d0, d1, d3}), map({d0, d1, d2})},
              iterators(5, {3, 4}),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                auto [e, valid] = expert(nb, nl, a[1]);
                Value dv = tensor::ExtractOp::create(
                    nb, nl, op.getDown(),
                    ValueRange{e, linalg::IndexOp::create(nb, nl, 2),
                               linalg::IndexOp::create(nb, nl, 4)});
                Value p = arith::MulFOp::create(
                    nb, nl, arith::MulFOp::create(nb, nl, a[2], a[0]),
                    castFloat(nb, nl, dv, ct));
                p = arith::SelectOp::create(nb, nl, valid, p,
                                            floatConst(nb, nl, ct, 0.0));
                linalg::YieldOp::create(
                    nb, nl, arith::AddFOp::create(nb, nl, a[3], p).getResult());
              })
              .getResult(0);
    b.replaceOp(
        op, castToType(b, loc,
                       castElements(b, loc, out, resultType.getElementType()),
                       resultType));
    return success();
  }

private:
  bool alongOutputs;
};

/// y[r, n] = sum_k x[r, k] weight[g, n, k], g = groups[r / group_rows]
/// (loops r, n, k), zero where g names no group.
struct GroupedLinearLowering final : OpRewritePattern<GroupedLinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GroupedLinearOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType type = op.getResult().getType();
    FloatType ct = computeType(type.getElementType());
    RankedTensorType w = op.getWeight().getType();
    int64_t groups = w.getDimSize(0);
    SmallVector<OpFoldResult> sizes = tensorSizes(b, loc, op.getInput());
    sizes.back() = b.getIndexAttr(w.getDimSize(1));
    Value acc = filledTensor(b, loc, sizes, ct, 0.0);
    acc = linalg::GenericOp::create(
              b, loc, acc.getType(), ValueRange{op.getInput()}, acc,
              ArrayRef<AffineMap>{projection(ctx, 3, {0, 2}),
                                  projection(ctx, 3, {0, 1})},
              iterators(3, {2}),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                Value r = linalg::IndexOp::create(nb, nl, 0);
                Value tile = arith::DivUIOp::create(
                    nb, nl, r, indexConst(nb, nl, op.getGroupRows()));
                auto [g, valid] = clampedIndex(
                    nb, nl,
                    tensor::ExtractOp::create(nb, nl, op.getGroups(), tile),
                    indexConst(nb, nl, groups));
                Value wv = castFloat(
                    nb, nl,
                    tensor::ExtractOp::create(
                        nb, nl, op.getWeight(),
                        ValueRange{g, linalg::IndexOp::create(nb, nl, 1),
                                   linalg::IndexOp::create(nb, nl, 2)}),
                    ct);
                // The product selected (not the weight zeroed): a row of a
                // block naming no group is zero whatever its x holds.
                Value prod = arith::MulFOp::create(
                    nb, nl, castFloat(nb, nl, a[0], ct), wv);
                prod = arith::SelectOp::create(nb, nl, valid, prod,
                                               floatConst(nb, nl, ct, 0.0));
                linalg::YieldOp::create(
                    nb, nl,
                    arith::AddFOp::create(nb, nl, a[1], prod).getResult());
              })
              .getResult(0);
    b.replaceOp(op, castToType(b, loc,
                               castElements(b, loc, acc, type.getElementType()),
                               type));
    return success();
  }
};

} // namespace

void mlir::mnemo::populateExpertsToLinalgPatterns(RewritePatternSet &patterns,
                                                  bool alongOutputs) {
  patterns.add<ExpertsLowering>(patterns.getContext(), alongOutputs);
  patterns.add<GroupedLinearLowering>(patterns.getContext());
}

//===- GroupedExperts.cpp - mnemo.experts grouped by expert -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.experts with each expert's tokens together, so that an expert's
// weights are read once for all of them rather than once per token: a
// prefill of 256 tokens routed to 8 of 256 experts reads each expert for
// about 8 tokens.
//
//   1. The (token, slot) pairs, P = B S K of them, sorted by expert with a
//      counting sort (three scalar loops over the pairs): offsets[e] is
//      where expert e's pairs start in the sorted order, sorted[q] the pair
//      at q, position[p] where pair p went. Pairs naming no expert go last
//      and are never read.
//   2. An scf.forall over the experts (the threads share them): expert e
//      gathers its n rows of x, then g and u [n, I] (per row, loops h, i:
//      rows of its transposed gate and up accumulated), the SwiGLU, and its
//      rows of the output [n, O] scaled by each pair's routing weight (per
//      row, loops i, o), written at offsets[e] of the sorted output
//      [P, O]. The expert's weights stay in the cache across its rows.
//   3. out[t, o] = sum over the token's slots j (in order) of the sorted
//      output at position[t K + j] (zero for a slot naming no expert).
//
// The products are those of the per-token lowering; each slot's sum over
// the expert's width is now complete before the slots are added, so the
// values differ from it in the last bits only.
//
//===----------------------------------------------------------------------===//

#include "GroupedExperts.h"

#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

Value cIdx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A 1-D index tensor of `size` zeros.
Value zeros(OpBuilder &b, Location loc, OpFoldResult size) {
  Type index = b.getIndexType();
  Value empty = emptyTensor(b, loc, {size}, index);
  return linalg::FillOp::create(b, loc, cIdx(b, loc, 0), empty).getResult(0);
}

/// The expert pair p names, or `experts` when it names none.
Value expertOf(OpBuilder &b, Location loc, Value indices, Value p,
               int64_t experts) {
  auto [e, valid] = clampedIndex(
      b, loc, tensor::ExtractOp::create(b, loc, indices, p),
      cIdx(b, loc, experts));
  return arith::SelectOp::create(b, loc, valid, e, cIdx(b, loc, experts));
}

/// A sequential loop over [0, n) carrying `init`.
ValueRange loop(OpBuilder &b, Location loc, Value n, ValueRange init,
                function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  return scf::ForOp::create(
             b, loc, cIdx(b, loc, 0), n, cIdx(b, loc, 1), init,
             [&](OpBuilder &nb, Location, Value i, ValueRange args) {
               // `body` builds with `b`, moved into the loop for it.
               OpBuilder::InsertionGuard guard(b);
               b.setInsertionPoint(nb.getInsertionBlock(),
                                   nb.getInsertionPoint());
               scf::YieldOp::create(b, loc, body(i, args));
             })
      .getResults();
}

struct Routing {
  Value offsets;  // [E + 2]: expert e's pairs at [offsets[e], offsets[e+1])
  Value sorted;   // [P]: the pair at each sorted position
  Value position; // [P]: each pair's sorted position
};

/// The counting sort of the pairs `indices` [P] by expert.
Routing sortByExpert(OpBuilder &b, Location loc, Value indices,
                     int64_t experts) {
  Value pairs = tensor::DimOp::create(b, loc, indices, 0);
  Value one = cIdx(b, loc, 1);
  auto at = [&](Value t, Value i) {
    return tensor::ExtractOp::create(b, loc, t, i).getResult();
  };
  auto put = [&](Value v, Value t, Value i) {
    return tensor::InsertOp::create(b, loc, v, t, i).getResult();
  };
  // counts[e]: pairs of expert e (e = experts: of none).
  Value counts = loop(b, loc, pairs, zeros(b, loc, b.getIndexAttr(experts + 1)),
                      [&](Value p, ValueRange c) -> SmallVector<Value> {
                        Value e = expertOf(b, loc, indices, p, experts);
                        return {put(arith::AddIOp::create(
                                        b, loc, at(c[0], e), one),
                                    c[0], e)};
                      })[0];
  // offsets[e + 1] = offsets[e] + counts[e].
  Value offsets =
      loop(b, loc, cIdx(b, loc, experts + 1),
           zeros(b, loc, b.getIndexAttr(experts + 2)),
           [&](Value e, ValueRange o) -> SmallVector<Value> {
             Value next = arith::AddIOp::create(b, loc, at(o[0], e),
                                                at(counts, e));
             return {put(next, o[0], arith::AddIOp::create(b, loc, e, one))};
           })[0];
  // Each pair at its expert's next free position, in pair order.
  OpFoldResult n = getAsOpFoldResult(pairs);
  ValueRange placed = loop(
      b, loc, pairs,
      ValueRange{offsets, zeros(b, loc, n), zeros(b, loc, n)},
      [&](Value p, ValueRange s) -> SmallVector<Value> {
        Value e = expertOf(b, loc, indices, p, experts);
        Value q = at(s[0], e);
        return {put(arith::AddIOp::create(b, loc, q, one), s[0], e),
                put(p, s[1], q), put(q, s[2], p)};
      });
  return {offsets, placed[1], placed[2]};
}

/// acc [n, N] plus rows [n, M] against the rows of `wT` [E, M, N] of expert
/// e, each row's terms times scale(r) when given: a loop over the rows r, each a
/// generic over (m, c), c innermost (contiguous in the weights and the
/// row: the form the CPU targets vectorize). The expert's weights, read
/// again for each of its rows, stay in the cache between them.
Value accumulate(OpBuilder &b, Location loc, Value rows, Value wT, Value e,
                 Value acc, FloatType ct,
                 function_ref<Value(OpBuilder &, Location, Value r)> scale) {
  MLIRContext *ctx = b.getContext();
  auto accType = cast<RankedTensorType>(acc.getType());
  auto rowsType = cast<RankedTensorType>(rows.getType());
  int64_t width = accType.getDimSize(1), depth = rowsType.getDimSize(1);
  Value n = tensor::DimOp::create(b, loc, acc, 0);
  OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  return loop(
      b, loc, n, ValueRange{acc},
      [&](Value r, ValueRange args) -> SmallVector<Value> {
        auto row = [&](Value t, int64_t size, Type elem) {
          return tensor::ExtractSliceOp::create(
                     b, loc, RankedTensorType::get({size}, elem), t,
                     SmallVector<OpFoldResult>{r, zero},
                     SmallVector<OpFoldResult>{one, b.getIndexAttr(size)},
                     SmallVector<OpFoldResult>{one, one})
              .getResult();
        };
        Value in = row(rows, depth, rowsType.getElementType());
        Value out = row(args[0], width, ct);
        Value factor = scale ? scale(b, loc, r) : Value();
        out = linalg::GenericOp::create(
                  b, loc, out.getType(), ValueRange{in}, ValueRange{out},
                  ArrayRef<AffineMap>{projection(ctx, 2, {0}),
                                      projection(ctx, 2, {1})},
                  iterators(2, {0}),
                  [&](OpBuilder &nb, Location nl, ValueRange a) {
                    Value w = tensor::ExtractOp::create(
                        nb, nl, wT,
                        ValueRange{e, linalg::IndexOp::create(nb, nl, 0),
                                   linalg::IndexOp::create(nb, nl, 1)});
                    Value v = castFloat(nb, nl, a[0], ct);
                    if (factor)
                      v = arith::MulFOp::create(nb, nl, factor, v);
                    Value p = arith::MulFOp::create(nb, nl, v,
                                                    castFloat(nb, nl, w, ct));
                    linalg::YieldOp::create(
                        nb, nl,
                        arith::AddFOp::create(nb, nl, a[1], p).getResult());
                  })
                  .getResult(0);
        return {tensor::InsertSliceOp::create(
                    b, loc, out, args[0], SmallVector<OpFoldResult>{r, zero},
                    SmallVector<OpFoldResult>{one, b.getIndexAttr(width)},
                    SmallVector<OpFoldResult>{one, one})
                    .getResult()};
      })[0];
}

} // namespace

Value mnemo::groupedExperts(OpBuilder &b, Location loc, ExpertsOp op,
                            Value gateT, Value upT, Value downT,
                            FloatType ct) {
  MLIRContext *ctx = b.getContext();
  Value x = op.getInput();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t experts = op.getGate().getType().getDimSize(0);
  int64_t hidden = xType.getDimSize(2);
  int64_t inter = op.getGate().getType().getDimSize(1);
  int64_t outs = op.getDown().getType().getDimSize(1);
  int64_t slots = cast<RankedTensorType>(op.getIndices().getType()).getDimSize(2);
  // Tokens [T, H] and pairs [P] (P = T K).
  SmallVector<ReassociationIndices> tokens = {{0, 1}, {2}}, flat = {{0, 1, 2}};
  Value x2 = tensor::CollapseShapeOp::create(b, loc, x, tokens);
  Value idx = tensor::CollapseShapeOp::create(b, loc, op.getIndices(), flat);
  Value rw = tensor::CollapseShapeOp::create(b, loc, op.getWeights(), flat);
  Routing routing = sortByExpert(b, loc, idx, experts);
  Value pairs = tensor::DimOp::create(b, loc, idx, 0);
  Value sortedOut =
      emptyTensor(b, loc, {getAsOpFoldResult(pairs), b.getIndexAttr(outs)}, ct);

  auto forall = scf::ForallOp::create(
      b, loc, SmallVector<OpFoldResult>{b.getIndexAttr(experts)},
      ValueRange{sortedOut}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = forall.getBody();
    b.setInsertionPoint(body->getTerminator());
    Value e = body->getArgument(0);
    Value start = tensor::ExtractOp::create(b, loc, routing.offsets, e);
    Value end = tensor::ExtractOp::create(
        b, loc, routing.offsets,
        ValueRange{arith::AddIOp::create(b, loc, e, cIdx(b, loc, 1))});
    Value n = arith::SubIOp::create(b, loc, end, start);
    OpFoldResult rows = getAsOpFoldResult(n);
    Value slotsC = cIdx(b, loc, slots);
    // The pair at row r of this expert.
    auto pairOf = [&](OpBuilder &nb, Location nl, Value r) {
      return tensor::ExtractOp::create(
                 nb, nl, routing.sorted,
                 ValueRange{arith::AddIOp::create(nb, nl, start, r)})
          .getResult();
    };
    // Its rows of x, gathered.
    Value xg = emptyTensor(b, loc, {rows, b.getIndexAttr(hidden)},
                           xType.getElementType());
    xg = linalg::GenericOp::create(
             b, loc, xg.getType(), ValueRange{}, ValueRange{xg},
             ArrayRef<AffineMap>{b.getMultiDimIdentityMap(2)}, iterators(2),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               Value token = arith::DivUIOp::create(
                   nb, nl, pairOf(nb, nl, linalg::IndexOp::create(nb, nl, 0)),
                   slotsC);
               linalg::YieldOp::create(
                   nb, nl,
                   tensor::ExtractOp::create(
                       nb, nl, x2,
                       ValueRange{token, linalg::IndexOp::create(nb, nl, 1)})
                       .getResult());
             })
             .getResult(0);
    auto project = [&](Value wT) {
      Value acc = filledTensor(b, loc, {rows, b.getIndexAttr(inter)}, ct, 0.0);
      return accumulate(b, loc, xg, wT, e, acc, ct, {});
    };
    Value g = project(gateT), u = project(upT);
    Value act = SwiGluOp::create(b, loc, g.getType(), g, u, op.getLimitAttr());
    Value y = filledTensor(b, loc, {rows, b.getIndexAttr(outs)}, ct, 0.0);
    y = accumulate(b, loc, act, downT, e, y, ct,
                   [&](OpBuilder &nb, Location nl, Value r) -> Value {
                     return castFloat(
                         nb, nl,
                         tensor::ExtractOp::create(nb, nl, rw,
                                                   ValueRange{pairOf(nb, nl, r)}),
                         ct);
                   });
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    OpFoldResult one = b.getIndexAttr(1);
    tensor::ParallelInsertSliceOp::create(
        b, loc, y, body->getArgument(1),
        SmallVector<OpFoldResult>{start, b.getIndexAttr(0)},
        SmallVector<OpFoldResult>{rows, b.getIndexAttr(outs)},
        SmallVector<OpFoldResult>{one, one});
  }

  // out[t, o] = sum_j sortedOut[position[t K + j], o] (loops t, j, o).
  SmallVector<OpFoldResult> xs = tensorSizes(b, loc, x);
  int64_t staticTokens =
      xType.isDynamicDim(0) || xType.isDynamicDim(1)
          ? ShapedType::kDynamic
          : xType.getDimSize(0) * xType.getDimSize(1);
  OpFoldResult count =
      staticTokens == ShapedType::kDynamic
          ? OpFoldResult(arith::MulIOp::create(
                             b, loc,
                             getValueOrCreateConstantIndexOp(b, loc, xs[0]),
                             getValueOrCreateConstantIndexOp(b, loc, xs[1]))
                             .getResult())
          : OpFoldResult(b.getIndexAttr(staticTokens));
  Value out = filledTensor(b, loc, {count, b.getIndexAttr(outs)}, ct, 0.0);
  AffineExpr t, j, o;
  bindDims(ctx, t, j, o);
  // The indices and positions as [T, K] (they also size the j loop).
  SmallVector<ReassociationIndices> perToken = {{0, 1}, {2}};
  Value idxTK = tensor::CollapseShapeOp::create(b, loc, op.getIndices(),
                                                perToken);
  Value position = castToType(
      b, loc, routing.position,
      RankedTensorType::get({staticTokens == ShapedType::kDynamic
                                 ? ShapedType::kDynamic
                                 : staticTokens * slots},
                            b.getIndexType()));
  Value posTK = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({staticTokens, slots}, b.getIndexType()),
      position, ArrayRef<ReassociationIndices>{{0, 1}},
      SmallVector<OpFoldResult>{count, b.getIndexAttr(slots)});
  AffineMap pairMap = AffineMap::get(3, 0, {t, j}, ctx);
  out = linalg::GenericOp::create(
            b, loc, out.getType(), ValueRange{idxTK, posTK}, ValueRange{out},
            ArrayRef<AffineMap>{pairMap, pairMap,
                                AffineMap::get(3, 0, {t, o}, ctx)},
            iterators(3, {1}),
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              Value valid =
                  clampedIndex(nb, nl, a[0], cIdx(nb, nl, experts)).second;
              Value v = tensor::ExtractOp::create(
                  nb, nl, forall.getResult(0),
                  ValueRange{a[1], linalg::IndexOp::create(nb, nl, 2)});
              v = arith::SelectOp::create(nb, nl, valid, v,
                                          floatConst(nb, nl, ct, 0.0));
              linalg::YieldOp::create(
                  nb, nl, arith::AddFOp::create(nb, nl, a[2], v).getResult());
            })
            .getResult(0);
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({xType.getDimSize(0), xType.getDimSize(1),
                                     outs},
                                    ct),
      out, tokens, SmallVector<OpFoldResult>{xs[0], xs[1], b.getIndexAttr(outs)});
}

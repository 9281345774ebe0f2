//===- GroupExperts.cpp - mnemo.experts grouped by expert -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.experts over a prefill's tokens (more than one per sequence), with
// constant weights, computed expert by expert so that each expert's
// weights are read once for all its tokens rather than once per token (a
// prefill of 256 tokens routed to 8 of 256 experts reads each for about 8
// tokens), and its products are GEMMs the target's kernels take:
//
//   1. The (token, slot) pairs, P = B S K of them, sorted by expert with a
//      counting sort (scalar loops: counts over the pairs, offsets over the
//      experts, places over the pairs): offsets[e] is where expert e's
//      pairs start in the sorted order, sorted[q] the pair at q,
//      position[p] where pair p went. Pairs naming no expert go last; no
//      expert writes their rows, and step 3 selects zero for them.
//   2. An scf.forall over the experts (the threads share them): expert e
//      gathers its n rows of x, then mnemo.linear against its gate and up
//      (the weights transposed per expert at compile time, [E, H, I], read
//      as [H, I] in_out slices), mnemo.swiglu, mnemo.linear against its
//      down ([E, I, O]), each row times its pair's routing weight, written
//      at offsets[e] of the sorted output [P, O].
//   3. out[t, o] = sum over the token's slots j (in order) of the sorted
//      output at position[t K + j] (zero for a slot naming no expert).
//
// The products are the per-token lowering's, summed in another order.
//
// With group-rows=A (the GPU targets) the GEMM form of
// GroupExpertsGemm.cpp replaces the loop.
//
//===----------------------------------------------------------------------===//

#include "ExpertGroups.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_GROUPEXPERTSPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

Value mnemo::expert_groups::expertOf(OpBuilder &b, Location loc, Value indices,
                                     Value p, int64_t experts) {

  auto [e, valid] =
      clampedIndex(b, loc, tensor::ExtractOp::create(b, loc, indices, p),
                   indexConst(b, loc, experts));
  return arith::SelectOp::create(b, loc, valid, e, indexConst(b, loc, experts));
}

Value mnemo::expert_groups::sumSlots(OpBuilder &b, Location loc, ExpertsOp op,
                                     Value sorted, Value positions,
                                     bool weighted) {

  MLIRContext *ctx = b.getContext();
  FloatType ct = cast<FloatType>(b.getF32Type());
  Value x = op.getInput();
  int64_t experts = op.getGate().getType().getDimSize(0);
  int64_t outs = op.getDown().getType().getDimSize(1);
  int64_t slots =
      cast<RankedTensorType>(op.getIndices().getType()).getDimSize(2);
  SmallVector<OpFoldResult> xs = tensorSizes(b, loc, x);
  Value seq = getValueOrCreateConstantIndexOp(b, loc, xs[1]);
  Value out =
      filledTensor(b, loc, {xs[0], xs[1], b.getIndexAttr(outs)}, ct, 0.0);
  AffineExpr bb, s, j, o;
  bindDims(ctx, bb, s, j, o);
  AffineMap pairMap = AffineMap::get(4, 0, {bb, s, j}, ctx);
  SmallVector<Value> inputs = {op.getIndices()};
  if (weighted)
    inputs.push_back(op.getWeights());
  SmallVector<AffineMap> maps(inputs.size(), pairMap);
  maps.push_back(AffineMap::get(4, 0, {bb, s, o}, ctx));
  return linalg::GenericOp::create(
             b, loc, out.getType(), inputs, ValueRange{out}, maps,
             iterators(4, {2}),
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               Value valid =
                   clampedIndex(nb, nl, a[0], indexConst(nb, nl, experts))
                       .second;
               Value token = arith::AddIOp::create(
                   nb, nl,
                   arith::MulIOp::create(
                       nb, nl, linalg::IndexOp::create(nb, nl, 0), seq),
                   linalg::IndexOp::create(nb, nl, 1));
               Value pair = arith::AddIOp::create(
                   nb, nl,
                   arith::MulIOp::create(nb, nl, token,
                                         indexConst(nb, nl, slots)),
                   linalg::IndexOp::create(nb, nl, 2));
               Value v = tensor::ExtractOp::create(
                   nb, nl, sorted,
                   ValueRange{tensor::ExtractOp::create(nb, nl, positions, pair)
                                  .getResult(),
                              linalg::IndexOp::create(nb, nl, 3)});
               v = castFloat(nb, nl, v, ct);
               if (weighted)
                 v = arith::MulFOp::create(nb, nl, v, a[1]);
               v = arith::SelectOp::create(nb, nl, valid, v,
                                           floatConst(nb, nl, ct, 0.0));
               linalg::YieldOp::create(
                   nb, nl,
                   arith::AddFOp::create(nb, nl, a.back(), v).getResult());
             })
      .getResult(0);
}

namespace {

using namespace mlir::mnemo::expert_groups;

/// A sequential loop over [0, n) carrying `init`.
ValueRange loop(OpBuilder &b, Location loc, Value n, ValueRange init,
                function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  return scf::ForOp::create(
             b, loc, indexConst(b, loc, 0), n, indexConst(b, loc, 1), init,
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
  Value one = indexConst(b, loc, 1);
  auto at = [&](Value t, Value i) {
    return tensor::ExtractOp::create(b, loc, t, i).getResult();
  };
  auto put = [&](Value v, Value t, Value i) {
    return tensor::InsertOp::create(b, loc, v, t, i).getResult();
  };
  // counts[e]: pairs of expert e (e = experts: of none).
  Value counts = loop(
      b, loc, pairs,
      filledIntegers(b, loc, b.getIndexAttr(experts + 1), b.getIndexType(), 0),
      [&](Value p, ValueRange c) -> SmallVector<Value> {
        Value e = expertOf(b, loc, indices, p, experts);
        return {put(arith::AddIOp::create(b, loc, at(c[0], e), one), c[0], e)};
      })[0];
  // offsets[e + 1] = offsets[e] + counts[e].
  Value offsets = loop(
      b, loc, indexConst(b, loc, experts + 1),
      filledIntegers(b, loc, b.getIndexAttr(experts + 2), b.getIndexType(), 0),
      [&](Value e, ValueRange o) -> SmallVector<Value> {
        Value next = arith::AddIOp::create(b, loc, at(o[0], e), at(counts, e));
        return {put(next, o[0], arith::AddIOp::create(b, loc, e, one))};
      })[0];
  // Each pair at its expert's next free position, in pair order.
  OpFoldResult n = getAsOpFoldResult(pairs);
  ValueRange placed = loop(
      b, loc, pairs,
      ValueRange{offsets, filledIntegers(b, loc, n, b.getIndexType(), 0),
                 filledIntegers(b, loc, n, b.getIndexType(), 0)},
      [&](Value p, ValueRange s) -> SmallVector<Value> {
        Value e = expertOf(b, loc, indices, p, experts);
        Value q = at(s[0], e);
        return {put(arith::AddIOp::create(b, loc, q, one), s[0], e),
                put(p, s[1], q), put(q, s[2], p)};
      });
  return {offsets, placed[1], placed[2]};
}

/// Expert e's [rows, cols] matrix of the per-expert weights `w` [E, rows,
/// cols].
Value expertMatrix(OpBuilder &b, Location loc, Value w, Value e) {
  auto type = cast<RankedTensorType>(w.getType());
  OpFoldResult z = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({type.getDimSize(1), type.getDimSize(2)},
                            type.getElementType()),
      w, SmallVector<OpFoldResult>{e, z, z},
      SmallVector<OpFoldResult>{one, b.getIndexAttr(type.getDimSize(1)),
                                b.getIndexAttr(type.getDimSize(2))},
      SmallVector<OpFoldResult>{one, one, one});
}

Value groupedExperts(OpBuilder &b, Location loc, ExpertsOp op, Value gateT,
                     Value upT, Value downT) {
  Type f32 = b.getF32Type();
  FloatType ct = cast<FloatType>(f32);
  Value x = op.getInput();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t experts = op.getGate().getType().getDimSize(0);
  int64_t hidden = xType.getDimSize(2);
  int64_t inter = op.getGate().getType().getDimSize(1);
  int64_t outs = op.getDown().getType().getDimSize(1);
  int64_t slots = cast<RankedTensorType>(op.getIndices().getType()).getDimSize(2);
  constexpr int64_t kDyn = ShapedType::kDynamic;
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
        ValueRange{arith::AddIOp::create(b, loc, e, indexConst(b, loc, 1))});
    OpFoldResult rows =
        getAsOpFoldResult(arith::SubIOp::create(b, loc, end, start).getResult());
    Value slotsC = indexConst(b, loc, slots);
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
    auto project = [&](Value in, Value wT, int64_t width) {
      return LinearOp::create(b, loc, RankedTensorType::get({kDyn, width}, f32),
                              in, expertMatrix(b, loc, wT, e), Value(),
                              WeightLayout::InOut)
          .getResult();
    };
    Value g = project(xg, gateT, inter), u = project(xg, upT, inter);
    Value act = SwiGluOp::create(b, loc, g.getType(), g, u, op.getLimitAttr());
    Value y = project(act, downT, outs);
    // Each row times its pair's routing weight.
    y = linalg::GenericOp::create(
            b, loc, y.getType(), ValueRange{}, ValueRange{y},
            ArrayRef<AffineMap>{b.getMultiDimIdentityMap(2)}, iterators(2),
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              Value w = tensor::ExtractOp::create(
                  nb, nl, rw,
                  ValueRange{
                      pairOf(nb, nl, linalg::IndexOp::create(nb, nl, 0))});
              linalg::YieldOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, a[0], w).getResult());
            })
            .getResult(0);
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    OpFoldResult one = b.getIndexAttr(1);
    tensor::ParallelInsertSliceOp::create(
        b, loc, y, body->getArgument(1),
        SmallVector<OpFoldResult>{start, b.getIndexAttr(0)},
        SmallVector<OpFoldResult>{rows, b.getIndexAttr(outs)},
        SmallVector<OpFoldResult>{one, one});
  }

  return sumSlots(b, loc, op, forall.getResult(0), routing.position, false);
}

struct GroupExpertsPass final
    : mnemo::impl::GroupExpertsPassBase<GroupExpertsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<ExpertsOp> ops;
    getOperation()->walk([&](ExpertsOp op) {
      // The loop form leaves a decode step's few tokens token by token
      // (an expert rarely has two of them) and weights computed at run
      // time to the op. The GEMM form takes both: each selected expert's
      // weights are still read once (DeepSeek-V3's layer at 64 tokens:
      // 7.4 ms grouped as one sequence, 25.3 ms as 64 decode rows token
      // by token; at 2: 0.69 and 0.90 ms,
      // H100, 2026-12-06, scripts/gpu/bench_experts.py).
      if (groupRows > 0 || op.getInput().getType().getDimSize(1) != 1)
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (ExpertsOp op : ops) {
      rewriter.setInsertionPoint(op);
      Location loc = op.getLoc();
      RankedTensorType type = op.getResult().getType();
      auto replace = [&](Value out) {
        rewriter.replaceOp(op, castToType(rewriter, loc,
                                          castElements(rewriter, loc, out,
                                                       type.getElementType()),
                                          type));
      };
      if (groupRows > 0) {
        replace(tiledExperts(rewriter, loc, op, groupRows, roundRows));
        continue;
      }
      Value gateT = transposedExperts(rewriter, loc, op.getGate());
      Value upT = transposedExperts(rewriter, loc, op.getUp());
      Value downT = transposedExperts(rewriter, loc, op.getDown());
      if (!gateT || !upT || !downT) {
        for (Value v : {gateT, upT, downT})
          if (v)
            rewriter.eraseOp(v.getDefiningOp());
        continue;
      }
      replace(groupedExperts(rewriter, loc, op, gateT, upT, downT));
    }
  }
};

} // namespace

//===- MoERouting.cpp - DeepSeek-V3 expert routing --------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The router as linalg.generic ops over [B, S, ...] tensors. Top-k choices
// are exact and need no sort: an element is among the k best of its set
// when its rank, the number of elements that beat it, is below k.
//
//===----------------------------------------------------------------------===//

#include "MoERouting.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include <limits>

using namespace mlir;
using namespace mlir::mnemo;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

class Router {
public:
  Router(ImplicitLocOpBuilder &b, const DeepSeekConfig &config, Value batch,
         Value seq)
      : b(b), config(config), batch(batch), seq(seq), f32(b.getF32Type()),
        perGroup(config.numExperts / config.numGroups) {}

  Value weights(Value logits, Value bias);

private:
  using Body = function_ref<Value(OpBuilder &, Location, ValueRange)>;

  /// A linalg.generic producing a [B, S, n] f32 tensor (initialized to
  /// `init`) over `loops` loops, the last `loops - 3` of them reductions.
  Value generic(int64_t n, double init, unsigned loops, ValueRange inputs,
                ArrayRef<AffineMap> inputMaps, Body body);
  /// The rank of each of the [B, S, n] `values` among the others of its set
  /// (loops b, s, x, y; `sameSet(x, y)`, or every element without it).
  Value ranks(Value values, int64_t n,
              function_ref<Value(OpBuilder &, Location, Value, Value)> sameSet);
  AffineMap map(unsigned loops, ArrayRef<AffineExpr> results) {
    return AffineMap::get(loops, 0, results, b.getContext());
  }
  AffineExpr d(unsigned i) { return b.getAffineDimExpr(i); }
  static Value f(OpBuilder &nb, Location nl, double v) {
    return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(v));
  }
  static Value idx(OpBuilder &nb, Location nl, unsigned dim) {
    return linalg::IndexOp::create(nb, nl, dim);
  }

  ImplicitLocOpBuilder &b;
  const DeepSeekConfig &config;
  Value batch, seq;
  Type f32;
  int64_t perGroup;
};

Value Router::generic(int64_t n, double init, unsigned loops,
                      ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                      Body body) {
  auto type = RankedTensorType::get({kDyn, kDyn, n}, f32);
  Value empty = tensor::EmptyOp::create(b, type.getShape(), f32,
                                        ValueRange{batch, seq});
  Value fillValue = arith::ConstantOp::create(b, b.getF32FloatAttr(init));
  Value filled =
      linalg::FillOp::create(b, ValueRange{fillValue}, ValueRange{empty})
          ->getResult(0);
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(map(loops, {d(0), d(1), d(2)}));
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  for (unsigned i = 3; i < loops; ++i)
    iterators[i] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, TypeRange{type}, inputs, ValueRange{filled}, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, args));
             })
      ->getResult(0);
}

Value Router::ranks(
    Value values, int64_t n,
    function_ref<Value(OpBuilder &, Location, Value, Value)> sameSet) {
  return generic(
      n, 0.0, 4, {values, values},
      {map(4, {d(0), d(1), d(2)}), map(4, {d(0), d(1), d(3)})},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value x = idx(nb, nl, 2), y = idx(nb, nl, 3);
        Value larger = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                             a[1], a[0]);
        Value equal = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            a[1], a[0]);
        Value before =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, y, x);
        Value beats = arith::OrIOp::create(
            nb, nl, larger, arith::AndIOp::create(nb, nl, equal, before));
        if (sameSet)
          beats = arith::AndIOp::create(nb, nl, beats, sameSet(nb, nl, x, y));
        Value more = arith::AddFOp::create(nb, nl, a[2], f(nb, nl, 1.0));
        return arith::SelectOp::create(nb, nl, beats, more, a[2]).getResult();
      });
}

Value Router::weights(Value logits, Value bias) {
  int64_t e = config.numExperts, g = config.numGroups;
  AffineMap id3 = map(3, {d(0), d(1), d(2)});
  // scores = sigmoid(logits); choice = scores + bias.
  Value scores = generic(e, 0.0, 3, logits, {id3},
                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                           Value neg = arith::NegFOp::create(nb, nl, a[0]);
                           Value ex = math::ExpOp::create(nb, nl, neg);
                           Value one = f(nb, nl, 1.0);
                           Value den = arith::AddFOp::create(nb, nl, one, ex);
                           return arith::DivFOp::create(nb, nl, f(nb, nl, 1.0),
                                                        den)
                               .getResult();
                         });
  Value choice = generic(e, 0.0, 3, {scores, bias}, {id3, map(3, {d(2)})},
                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                           return arith::AddFOp::create(nb, nl, a[0], a[1])
                               .getResult();
                         });
  auto groupOf = [&](OpBuilder &nb, Location nl, Value i) {
    Value m = arith::ConstantIndexOp::create(nb, nl, perGroup);
    return arith::DivUIOp::create(nb, nl, i, m).getResult();
  };
  auto sameGroup = [&](OpBuilder &nb, Location nl, Value x, Value y) {
    return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                 groupOf(nb, nl, x), groupOf(nb, nl, y))
        .getResult();
  };
  // Group score: the sum of the group's two best choices.
  Value inGroup = ranks(choice, e, sameGroup);
  Value groupScore = generic(
      g, 0.0, 4, {choice, inGroup},
      {map(4, {d(0), d(1), d(3)}), map(4, {d(0), d(1), d(3)})},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value mine = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                           groupOf(nb, nl, idx(nb, nl, 3)),
                                           idx(nb, nl, 2));
        Value top2 = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT,
                                           a[1], f(nb, nl, 2.0));
        Value use = arith::AndIOp::create(nb, nl, mine, top2);
        Value sum = arith::AddFOp::create(nb, nl, a[2], a[0]);
        return arith::SelectOp::create(nb, nl, use, sum, a[2]).getResult();
      });
  // Experts of groups outside the topk_group best are out of the running.
  Value groupRank = ranks(groupScore, g, {});
  AffineExpr groupExpr = d(2).floorDiv(perGroup);
  double topkGroups = double(config.topkGroups);
  Value masked = generic(
      e, 0.0, 3, {choice, groupRank}, {id3, map(3, {d(0), d(1), groupExpr})},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value kept = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT,
                                           a[1], f(nb, nl, topkGroups));
        Value out = f(nb, nl, -std::numeric_limits<double>::infinity());
        return arith::SelectOp::create(nb, nl, kept, a[0], out).getResult();
      });
  // The selected experts keep their (unbiased) score.
  Value rank = ranks(masked, e, {});
  double k = double(config.expertsPerToken);
  Value picked = generic(e, 0.0, 3, {scores, rank}, {id3, id3},
                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                           Value sel = arith::CmpFOp::create(
                               nb, nl, arith::CmpFPredicate::OLT, a[1],
                               f(nb, nl, k));
                           return arith::SelectOp::create(nb, nl, sel, a[0],
                                                          f(nb, nl, 0.0))
                               .getResult();
                         });
  double factor = config.routedScalingFactor;
  if (!config.normTopkProb)
    return generic(e, 0.0, 3, picked, {id3},
                   [&](OpBuilder &nb, Location nl, ValueRange a) {
                     return arith::MulFOp::create(nb, nl, a[0],
                                                  f(nb, nl, factor))
                         .getResult();
                   });
  // w / (sum of the selection + 1e-20) * routed_scaling_factor.
  Value total = generic(1, 0.0, 4, picked, {map(4, {d(0), d(1), d(3)})},
                        [&](OpBuilder &nb, Location nl, ValueRange a) {
                          return arith::AddFOp::create(nb, nl, a[1], a[0])
                              .getResult();
                        });
  return generic(e, 0.0, 3, {picked, total},
                 {id3, map(3, {d(0), d(1), b.getAffineConstantExpr(0)})},
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   Value den =
                       arith::AddFOp::create(nb, nl, a[1], f(nb, nl, 1e-20));
                   Value w = arith::DivFOp::create(nb, nl, a[0], den);
                   return arith::MulFOp::create(nb, nl, w, f(nb, nl, factor))
                       .getResult();
                 });
}

} // namespace

Value mnemo::buildExpertWeights(ImplicitLocOpBuilder &b, Value logits,
                                Value bias, const DeepSeekConfig &config,
                                Value batch, Value seq) {
  return Router(b, config, batch, seq).weights(logits, bias);
}

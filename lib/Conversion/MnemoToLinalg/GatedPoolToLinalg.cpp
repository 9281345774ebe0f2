//===- GatedPoolToLinalg.cpp - mnemo.gated_pool reference lowering -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.gated_pool as three linalg reductions over an entry's slots, per
// channel, in f32 (loops b, n, j, c): the max of the biased gates, then in
// one op the sum of their exponentials and the exponential-weighted sum of
// the values, then their quotient. The channel loop is innermost: a slot's
// channels are one contiguous row of the gates and values, which the CPU
// targets read as vectors, each channel's accumulator beside its
// neighbours' (with the slot innermost, every read stepped a whole row);
// each channel still takes its slots in order, so the values are the same,
// and the GPU targets move the reduction innermost again
// (mnemo-gpu-reductions-innermost). Each slot's token and channel follow
// from the entry index; slots that do not exist (before the first window,
// past the tokens, a negative entry) are masked out, and their reads are
// clamped in bounds.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {
struct GatedPoolLowering final : OpRewritePattern<GatedPoolOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GatedPoolOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    RankedTensorType resultType = op.getResult().getType();
    FloatType ct = computeType(resultType.getElementType());
    Value kv = op.getKv(), gate = op.getGate(), entries = op.getEntries();
    int64_t rate = op.getRate(), d = op.getBias().getType().getDimSize(1);
    bool overlapping = op.getOverlapping();
    SmallVector<OpFoldResult> ks = tensorSizes(b, loc, kv),
                              es = tensorSizes(b, loc, entries);
    Value length = getValueOrCreateConstantIndexOp(b, loc, ks[1]);
    Value bias = castElements(b, loc, op.getBias(), ct);

    // Slot (b, n, j, c): its biased gate, its value and whether it exists.
    auto slot = [&](OpBuilder &nb, Location l, Value biasValue) {
      auto cst = [&](int64_t v) {
        return arith::ConstantIndexOp::create(nb, l, v);
      };
      using P = arith::CmpIPredicate;
      Value bi = linalg::IndexOp::create(nb, l, 0);
      Value n = linalg::IndexOp::create(nb, l, 1);
      Value j = linalg::IndexOp::create(nb, l, 2);
      Value c = linalg::IndexOp::create(nb, l, 3);
      Value w64 = tensor::ExtractOp::create(nb, l, entries, ValueRange{bi, n});
      Value valid = arith::CmpIOp::create(
          nb, l, P::sge, w64, arith::ConstantIntOp::create(nb, l, 0, 64));
      Value w = arith::IndexCastOp::create(nb, l, nb.getIndexType(), w64);
      // The first token of window w, as a signed index (w may be < 0).
      Value token = arith::AddIOp::create(
          nb, l, arith::MulIOp::create(nb, l, w, cst(rate)), j);
      Value channel = c;
      if (overlapping) {
        // j < rate: window w - 1's first half; else this window's second.
        token = arith::SubIOp::create(nb, l, token, cst(rate));
        Value first = arith::CmpIOp::create(nb, l, P::ult, j, cst(rate));
        channel = arith::SelectOp::create(
            nb, l, first, c, arith::AddIOp::create(nb, l, c, cst(d)));
      }
      valid = arith::AndIOp::create(
          nb, l, valid,
          arith::AndIOp::create(
              nb, l, arith::CmpIOp::create(nb, l, P::sge, token, cst(0)),
              arith::CmpIOp::create(nb, l, P::slt, token, length)));
      token = arith::SelectOp::create(nb, l, valid, token, cst(0));
      Value g = castFloat(
          nb, l,
          tensor::ExtractOp::create(nb, l, gate, ValueRange{bi, token, channel}),
          ct);
      Value v = castFloat(
          nb, l,
          tensor::ExtractOp::create(nb, l, kv, ValueRange{bi, token, channel}),
          ct);
      return std::make_tuple(arith::AddFOp::create(nb, l, g, biasValue).getResult(),
                             v, valid);
    };
    SmallVector<OpFoldResult> outSizes = {es[0], es[1], b.getIndexAttr(d)};
    AffineMap biasMap = projection(ctx, 4, {2, 3}),
              out = projection(ctx, 4, {0, 1, 3});
    SmallVector<utils::IteratorType> its = iterators(4, {2});
    double negInf = -std::numeric_limits<double>::infinity();
    Value mxInit = filledTensor(b, loc, outSizes, ct, negInf);
    Value mx =
        linalg::GenericOp::create(
            b, loc, mxInit.getType(), ValueRange{bias}, ValueRange{mxInit},
            ArrayRef<AffineMap>{biasMap, out}, its,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              auto [z, v, valid] = slot(nb, l, a[0]);
              z = arith::SelectOp::create(nb, l, valid, z,
                                          floatConst(nb, l, ct, negInf));
              linalg::YieldOp::create(
                  nb, l, arith::MaximumFOp::create(nb, l, a[1], z).getResult());
            })
            .getResult(0);
    Value zero = filledTensor(b, loc, outSizes, ct, 0.0);
    auto sums = linalg::GenericOp::create(
        b, loc, TypeRange{zero.getType(), zero.getType()},
        ValueRange{bias, mx}, ValueRange{zero, zero},
        ArrayRef<AffineMap>{biasMap, out, out, out}, its,
        [&](OpBuilder &nb, Location l, ValueRange a) {
          auto [z, v, valid] = slot(nb, l, a[0]);
          Value e = math::ExpOp::create(
              nb, l, arith::SubFOp::create(nb, l, z, a[1]));
          e = arith::SelectOp::create(nb, l, valid, e,
                                      floatConst(nb, l, ct, 0.0));
          linalg::YieldOp::create(
              nb, l,
              ValueRange{arith::AddFOp::create(nb, l, a[2], e),
                         arith::AddFOp::create(
                             nb, l, a[3], arith::MulFOp::create(nb, l, e, v))});
        });
    // sum / count, and 0 for an entry without slots (0 / 0).
    AffineMap id = b.getMultiDimIdentityMap(3);
    Value init = emptyTensor(b, loc, outSizes, ct);
    Value pooled =
        linalg::GenericOp::create(
            b, loc, init.getType(),
            ValueRange{sums.getResult(0), sums.getResult(1)}, ValueRange{init},
            ArrayRef<AffineMap>{id, id, id}, iterators(3),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value zeroF = floatConst(nb, l, ct, 0.0);
              Value any = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OGT, a[0], zeroF);
              Value q = arith::DivFOp::create(nb, l, a[1], a[0]);
              linalg::YieldOp::create(
                  nb, l, arith::SelectOp::create(nb, l, any, q, zeroF).getResult());
            })
            .getResult(0);
    b.replaceOp(op, castToType(b, loc,
                               castElements(b, loc, pooled,
                                            resultType.getElementType()),
                               resultType));
    return success();
  }
};
} // namespace

void mlir::mnemo::populateGatedPoolToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<GatedPoolLowering>(patterns.getContext());
}

//===- AttentionMasks.cpp - ONNX Attention masks and scores -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "AttentionMasks.h"

#include "Importer.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include <limits>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

Value cIdx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value notOp(OpBuilder &b, Location loc, Value v) {
  return arith::XOrIOp::create(b, loc, v,
                               arith::ConstantIntOp::create(b, loc, 1, 1));
}
} // namespace

/// [B, S, H*D] -> [B, H, S, D].
Value mlir::mnemo::onnx_import::splitHeads(OpBuilder &b, Location loc, Value x, int64_t heads) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> sizes = builders::tensorSizes(b, loc, x);
  int64_t d = type.getDimSize(2) / heads;
  auto expanded = RankedTensorType::get(
      {type.getDimSize(0), type.getDimSize(1), heads, d},
      type.getElementType());
  Value v = tensor::ExpandShapeOp::create(
      b, loc, expanded, x, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}},
      SmallVector<OpFoldResult>{sizes[0], sizes[1], b.getIndexAttr(heads),
                                b.getIndexAttr(d)});
  return transposeValue(b, loc, v, {0, 2, 1, 3});
}

/// [B, H, S, D] -> [B, S, H*D].
Value mlir::mnemo::onnx_import::mergeHeads(OpBuilder &b, Location loc, Value x) {
  Value t = transposeValue(b, loc, x, {0, 2, 1, 3});
  auto type = cast<RankedTensorType>(t.getType());
  auto merged = RankedTensorType::get(
      {type.getDimSize(0), type.getDimSize(1),
       type.getDimSize(2) * type.getDimSize(3)},
      type.getElementType());
  return tensor::CollapseShapeOp::create(
      b, loc, merged, t, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
}

Value mlir::mnemo::onnx_import::combinedMask(OpBuilder &b, Location loc,
                                             const MaskSpec &spec, Value q,
                                             Value k) {
  Type f32 = b.getF32Type();
  SmallVector<OpFoldResult> qs = builders::tensorSizes(b, loc, q);
  SmallVector<OpFoldResult> ks = builders::tensorSizes(b, loc, k);
  OpFoldResult heads = b.getIndexAttr(1);
  Value mask = spec.mask;
  auto maskType =
      mask ? cast<RankedTensorType>(mask.getType()) : RankedTensorType();
  if (maskType && maskType.getRank() >= 3 &&
      maskType.getDimSize(maskType.getRank() - 3) != 1)
    heads = builders::tensorSizes(b, loc, mask)[maskType.getRank() - 3];
  Value init =
      builders::emptyTensor(b, loc, {qs[0], heads, qs[2], ks[2]}, f32);
  auto id = AffineMap::getMultiDimIdentityMap(4, b.getContext());
  auto body = [&](OpBuilder &nb, Location nl, ValueRange) {
    Value idx[4];
    for (unsigned i = 0; i < 4; ++i)
      idx[i] = linalg::IndexOp::create(nb, nl, i);
    Value hidden = arith::ConstantIntOp::create(nb, nl, 0, 1);
    auto hide = [&](Value cond) {
      hidden = arith::OrIOp::create(nb, nl, hidden, cond);
    };
    auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
      return arith::CmpIOp::create(nb, nl, p, x, y).getResult();
    };
    Value bias = builders::floatConst(nb, nl, f32, 0.0);
    if (mask) {
      int64_t rank = maskType.getRank();
      Value len = tensor::DimOp::create(nb, nl, mask, rank - 1);
      Value inside = cmp(arith::CmpIPredicate::ult, idx[3], len);
      hide(notOp(nb, nl, inside));
      SmallVector<Value> at;
      for (int64_t d = 0; d < rank; ++d) {
        Value i = idx[d + 4 - rank];
        if (maskType.getDimSize(d) == 1)
          i = cIdx(nb, nl, 0);
        if (d == rank - 1)
          i = arith::SelectOp::create(nb, nl, inside, i, cIdx(nb, nl, 0));
        at.push_back(i);
      }
      Value m = tensor::ExtractOp::create(nb, nl, mask, at);
      if (m.getType().isInteger(1))
        hide(notOp(nb, nl, m));
      else
        bias = builders::castFloat(nb, nl, m, f32);
    }
    Value pad;
    if (spec.nonpad) {
      pad = arith::IndexCastOp::create(
          nb, nl, nb.getIndexType(),
          tensor::ExtractOp::create(nb, nl, spec.nonpad, ValueRange{idx[0]}));
      hide(cmp(arith::CmpIPredicate::sge, idx[3], pad));
    }
    // The query's position p = i + offset, in signed index arithmetic.
    Value offset = spec.pastLength;
    if (!offset && pad)
      offset = arith::SubIOp::create(
          nb, nl, pad, getValueOrCreateConstantIndexOp(nb, nl, qs[2]));
    Value p = offset ? arith::AddIOp::create(nb, nl, idx[2], offset).getResult()
                     : idx[2];
    if (spec.causal)
      hide(cmp(arith::CmpIPredicate::sgt, idx[3], p));
    if (spec.left >= 0)
      hide(cmp(arith::CmpIPredicate::slt, idx[3],
               arith::SubIOp::create(nb, nl, p, cIdx(nb, nl, spec.left))));
    if (spec.right >= 0)
      hide(cmp(arith::CmpIPredicate::sgt, idx[3],
               arith::AddIOp::create(nb, nl, p, cIdx(nb, nl, spec.right))));
    linalg::YieldOp::create(
        nb, nl,
        arith::SelectOp::create(nb, nl, hidden,
                                builders::floatConst(nb, nl, f32, kNegInf),
                                bias)
            .getResult());
  };
  return linalg::GenericOp::create(b, loc, init.getType(), ValueRange{}, init,
                                   ArrayRef<AffineMap>{id},
                                   builders::iterators(4), body)
      .getResult(0);
}

Value mlir::mnemo::onnx_import::attentionScores(OpBuilder &b, Location loc,
                                                Value q, Value k, double scale,
                                                double softcap, Value bias,
                                                int64_t mode, Type element) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  auto qType = cast<RankedTensorType>(q.getType());
  auto kType = cast<RankedTensorType>(k.getType());
  int64_t group = qType.getDimSize(1) / kType.getDimSize(1);
  SmallVector<OpFoldResult> qs = builders::tensorSizes(b, loc, q);
  SmallVector<OpFoldResult> ks = builders::tensorSizes(b, loc, k);
  SmallVector<OpFoldResult> shape = {qs[0], qs[1], qs[2], ks[2]};

  // s = scale * sum_d q[b,h,i,d] k[b,h/G,j,d]
  AffineExpr d0, d1, d2, d3, d4;
  bindDims(ctx, d0, d1, d2, d3, d4);
  auto qMap = AffineMap::get(5, 0, {d0, d1, d2, d4}, ctx);
  auto kMap = AffineMap::get(5, 0, {d0, d1.floorDiv(group), d3, d4}, ctx);
  auto sMap = AffineMap::get(5, 0, {d0, d1, d2, d3}, ctx);
  Value s = builders::filledTensor(b, loc, shape, f32, 0.0);
  s = linalg::GenericOp::create(
          b, loc, s.getType(), ValueRange{q, k}, s,
          ArrayRef<AffineMap>{qMap, kMap, sMap}, builders::iterators(5, {4}),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value prod = arith::MulFOp::create(
                nb, nl, builders::castFloat(nb, nl, args[0], f32),
                builders::castFloat(nb, nl, args[1], f32));
            linalg::YieldOp::create(
                nb, nl, arith::AddFOp::create(nb, nl, args[2], prod).getResult());
          })
          .getResult(0);

  // Scale, softcap and bias in one elementwise pass.
  auto id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  SmallVector<Value> ins = {s};
  SmallVector<AffineMap> maps = {id4};
  if (bias && mode >= 2) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    AffineExpr h = biasType.getDimSize(1) == 1 ? getAffineConstantExpr(0, ctx)
                                               : getAffineDimExpr(1, ctx);
    ins.push_back(bias);
    maps.push_back(AffineMap::get(4, 0,
                                  {getAffineDimExpr(0, ctx), h,
                                   getAffineDimExpr(2, ctx),
                                   getAffineDimExpr(3, ctx)},
                                  ctx));
  }
  maps.push_back(id4);
  Value init = builders::emptyTensor(b, loc, shape, f32);
  s = linalg::GenericOp::create(
          b, loc, init.getType(), ins, init, maps, builders::iterators(4),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value v = arith::MulFOp::create(
                nb, nl, args[0], builders::floatConst(nb, nl, f32, scale));
            if (softcap > 0.0 && mode >= 1) {
              Value c = builders::floatConst(nb, nl, f32, softcap);
              v = arith::MulFOp::create(
                  nb, nl,
                  math::TanhOp::create(nb, nl,
                                       arith::DivFOp::create(nb, nl, v, c)),
                  c);
            }
            if (ins.size() == 2)
              v = arith::AddFOp::create(nb, nl, v, args[1]);
            linalg::YieldOp::create(nb, nl, v);
          })
          .getResult(0);

  if (mode == 3) {
    // Softmax over j; a row whose maximum is -inf gives zeros.
    SmallVector<OpFoldResult> rowShape = {qs[0], qs[1], qs[2]};
    auto rowMap = AffineMap::get(4, 0,
                                 {getAffineDimExpr(0, ctx),
                                  getAffineDimExpr(1, ctx),
                                  getAffineDimExpr(2, ctx)},
                                 ctx);
    auto reduceRow = [&](Value acc, ValueRange extra, auto combine) {
      SmallVector<Value> in = {s};
      SmallVector<AffineMap> m = {id4};
      for (Value e : extra) {
        in.push_back(e);
        m.push_back(rowMap);
      }
      m.push_back(rowMap);
      return linalg::GenericOp::create(
                 b, loc, acc.getType(), in, acc, m,
                 builders::iterators(4, {3}),
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   linalg::YieldOp::create(nb, nl, combine(nb, nl, args));
                 })
          .getResult(0);
    };
    Value rowMax = reduceRow(
        builders::filledTensor(b, loc, rowShape, f32, kNegInf), {},
        [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          return arith::MaximumFOp::create(nb, nl, args[0], args[1]);
        });
    auto shifted = [&](OpBuilder &nb, Location nl, Value x, Value m) -> Value {
      Value dead = arith::CmpFOp::create(
          nb, nl, arith::CmpFPredicate::OEQ, m,
          builders::floatConst(nb, nl, f32, kNegInf));
      Value e = math::ExpOp::create(nb, nl,
                                    arith::SubFOp::create(nb, nl, x, m));
      return arith::SelectOp::create(nb, nl, dead,
                                     builders::floatConst(nb, nl, f32, 0.0), e);
    };
    Value rowSum = reduceRow(
        builders::filledTensor(b, loc, rowShape, f32, 0.0), {rowMax},
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          return arith::AddFOp::create(nb, nl, args[2],
                                       shifted(nb, nl, args[0], args[1]));
        });
    Value out = builders::emptyTensor(b, loc, shape, f32);
    s = linalg::GenericOp::create(
            b, loc, out.getType(), ValueRange{s, rowMax, rowSum}, out,
            ArrayRef<AffineMap>{id4, rowMap, rowMap, id4},
            builders::iterators(4),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value e = shifted(nb, nl, args[0], args[1]);
              Value zero = builders::floatConst(nb, nl, f32, 0.0);
              Value empty = arith::CmpFOp::create(
                  nb, nl, arith::CmpFPredicate::OEQ, args[2], zero);
              Value p = arith::DivFOp::create(
                  nb, nl, e,
                  arith::SelectOp::create(
                      nb, nl, empty, builders::floatConst(nb, nl, f32, 1.0),
                      args[2]));
              linalg::YieldOp::create(nb, nl, p);
            })
            .getResult(0);
  }
  if (element == f32)
    return s;
  Value out = builders::emptyTensor(b, loc, shape, element);
  return linalg::GenericOp::create(
             b, loc, out.getType(), ValueRange{s}, out,
             ArrayRef<AffineMap>{id4, id4}, builders::iterators(4),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl, builders::castFloat(nb, nl, args[0], element));
             })
      .getResult(0);
}

//===- LayerToLinalg.cpp - dense layer ops reference lowering ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reference lowerings of mnemo.rms_norm, mnemo.swiglu, mnemo.linear and
// mnemo.embedding to linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "dialects/Mnemo/Utils/Quantization.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// Loops 0..n-1 of an n-D op, dropping `skip`.
AffineMap allBut(MLIRContext *ctx, unsigned n, unsigned skip) {
  SmallVector<unsigned> dims;
  for (unsigned i = 0; i < n; ++i)
    if (i != skip)
      dims.push_back(i);
  return projection(ctx, n, dims);
}

/// y = x * rsqrt(mean(x^2) + eps) * w   (or * (1 + w))
struct RmsNormLowering final : OpRewritePattern<RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RmsNormOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value x = op.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    unsigned rank = type.getRank();
    FloatType ct = computeType(type.getElementType());
    SmallVector<OpFoldResult> sizes = tensorSizes(b, loc, x);
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap rows = allBut(ctx, rank, rank - 1);

    SmallVector<OpFoldResult> rowSizes(sizes.begin(), sizes.end() - 1);
    Value sumSq = filledTensor(b, loc, rowSizes, ct, 0.0);
    sumSq = linalg::GenericOp::create(
                b, loc, sumSq.getType(), x, sumSq,
                ArrayRef<AffineMap>{id, rows}, iterators(rank, {rank - 1}),
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  Value v = castFloat(nb, nl, args[0], ct);
                  Value sq = arith::MulFOp::create(nb, nl, v, v);
                  linalg::YieldOp::create(
                      nb, nl,
                      arith::AddFOp::create(nb, nl, args[1], sq).getResult());
                })
                .getResult(0);

    Value n = arith::SIToFPOp::create(
        b, loc, ct,
        arith::IndexCastOp::create(
            b, loc, b.getI64Type(),
            getValueOrCreateConstantIndexOp(b, loc, sizes.back())));
    double eps = op.getEps().convertToDouble();
    bool unitOffset = op.getUnitOffset();
    Value init = emptyTensor(b, loc, sizes, type.getElementType());
    Value result =
        linalg::GenericOp::create(
            b, loc, init.getType(), ValueRange{x, sumSq, op.getWeight()}, init,
            ArrayRef<AffineMap>{id, rows, projection(ctx, rank, {rank - 1}),
                                id},
            iterators(rank),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value mean = arith::DivFOp::create(nb, nl, args[1], n);
              Value denom = arith::AddFOp::create(nb, nl, mean,
                                                  floatConst(nb, nl, ct, eps));
              Value inv = arith::DivFOp::create(
                  nb, nl, floatConst(nb, nl, ct, 1.0),
                  math::SqrtOp::create(nb, nl, denom));
              Value w = castFloat(nb, nl, args[2], ct);
              if (unitOffset)
                w = arith::AddFOp::create(nb, nl, w,
                                          floatConst(nb, nl, ct, 1.0));
              Value y = arith::MulFOp::create(
                  nb, nl,
                  arith::MulFOp::create(nb, nl, castFloat(nb, nl, args[0], ct),
                                        inv),
                  w);
              linalg::YieldOp::create(
                  nb, nl, castFloat(nb, nl, y, type.getElementType()));
            })
            .getResult(0);
    b.replaceOp(op, castToType(b, loc, result, type));
    return success();
  }
};

/// y = gate * sigmoid(gate) * up
struct SwiGluLowering final : OpRewritePattern<SwiGluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SwiGluOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    FloatType ct = computeType(type.getElementType());
    AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                     op.getContext());
    Value init = emptyTensor(b, loc, tensorSizes(b, loc, op.getGate()),
                             type.getElementType());
    Value result =
        linalg::GenericOp::create(
            b, loc, init.getType(), ValueRange{op.getGate(), op.getUp()}, init,
            ArrayRef<AffineMap>{id, id, id}, iterators(type.getRank()),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value g = castFloat(nb, nl, args[0], ct);
              Value u = castFloat(nb, nl, args[1], ct);
              if (FloatAttr limit = op.getLimitAttr()) {
                Value hi = floatConst(nb, nl, ct, limit.getValueAsDouble());
                Value lo = floatConst(nb, nl, ct, -limit.getValueAsDouble());
                g = arith::MinimumFOp::create(nb, nl, g, hi);
                u = arith::MaximumFOp::create(
                    nb, nl, arith::MinimumFOp::create(nb, nl, u, hi), lo);
              }
              Value one = floatConst(nb, nl, ct, 1.0);
              Value e = math::ExpOp::create(
                  nb, nl, arith::NegFOp::create(nb, nl, g));
              Value sig = arith::DivFOp::create(
                  nb, nl, one, arith::AddFOp::create(nb, nl, one, e));
              Value y = arith::MulFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, g, sig), u);
              linalg::YieldOp::create(
                  nb, nl, castFloat(nb, nl, y, type.getElementType()));
            })
            .getResult(0);
    b.replaceOp(op, castToType(b, loc, result, type));
    return success();
  }
};

/// y[..., n] = sum_k x[..., k] W(n, k) + bias[n], over loops (..., k, n):
/// the innermost loop runs along the output features, so with an in_out
/// weight both W and y are read contiguously and no reduction is innermost.
struct LinearLowering final : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto type = cast<RankedTensorType>(op.getType());
    unsigned rank = type.getRank();
    unsigned kLoop = rank - 1, nLoop = rank, numLoops = rank + 1;
    FloatType ct = computeType(type.getElementType());

    SmallVector<OpFoldResult> sizes = tensorSizes(b, loc, op.getInput());
    sizes.back() = b.getIndexAttr(op.getOutFeatures());
    SmallVector<unsigned> xDims;
    for (unsigned i = 0; i < kLoop; ++i)
      xDims.push_back(i);
    xDims.push_back(kLoop);
    AffineMap xMap = projection(ctx, numLoops, xDims);
    AffineMap wMap = op.getLayout() == WeightLayout::OutIn
                         ? projection(ctx, numLoops, {nLoop, kLoop})
                         : projection(ctx, numLoops, {kLoop, nLoop});
    AffineMap outMap = allBut(ctx, numLoops, kLoop);

    Value acc = filledTensor(b, loc, sizes, ct, 0.0);
    acc = linalg::GenericOp::create(
              b, loc, acc.getType(), ValueRange{op.getInput(), op.getWeight()},
              acc, ArrayRef<AffineMap>{xMap, wMap, outMap},
              iterators(numLoops, {kLoop}),
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value prod = arith::MulFOp::create(
                    nb, nl, castFloat(nb, nl, args[0], ct),
                    castFloat(nb, nl, args[1], ct));
                linalg::YieldOp::create(
                    nb, nl,
                    arith::AddFOp::create(nb, nl, args[2], prod).getResult());
              })
              .getResult(0);

    Value bias = op.getBias();
    if (!bias && ct == type.getElementType()) {
      b.replaceOp(op, castToType(b, loc, acc, type));
      return success();
    }
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    SmallVector<Value> inputs = {acc};
    SmallVector<AffineMap> maps = {id};
    if (bias) {
      inputs.push_back(bias);
      maps.push_back(projection(ctx, rank, {rank - 1}));
    }
    maps.push_back(id);
    Value init = emptyTensor(b, loc, sizes, type.getElementType());
    Value result =
        linalg::GenericOp::create(
            b, loc, init.getType(), inputs, init, maps, iterators(rank),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value y = args[0];
              if (bias)
                y = arith::AddFOp::create(nb, nl, y,
                                          castFloat(nb, nl, args[1], ct));
              linalg::YieldOp::create(
                  nb, nl, castFloat(nb, nl, y, type.getElementType()));
            })
            .getResult(0);
    b.replaceOp(op, castToType(b, loc, result, type));
    return success();
  }
};

/// y[i..., h] = table[ids[i...], h], zero for ids outside [0, V).
struct EmbeddingLowering final : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto type = cast<RankedTensorType>(op.getType());
    unsigned rank = type.getRank();
    Value table = op.getTable(), ids = op.getIds();
    Type elem = type.getElementType();

    SmallVector<OpFoldResult> sizes = tensorSizes(b, loc, ids);
    sizes.push_back(tensor::getMixedSize(b, loc, table, 1));
    Value vocab = tensor::DimOp::create(b, loc, table, 0);
    Value init = emptyTensor(b, loc, sizes, elem);
    Value result =
        linalg::GenericOp::create(
            b, loc, init.getType(), ids, init,
            ArrayRef<AffineMap>{allBut(ctx, rank, rank - 1),
                                AffineMap::getMultiDimIdentityMap(rank, ctx)},
            iterators(rank),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value id = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                    args[0]);
              Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
              Value inRange = arith::AndIOp::create(
                  nb, nl,
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, id,
                                        zero),
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, id,
                                        vocab));
              Value row = arith::SelectOp::create(nb, nl, inRange, id, zero);
              Value col = linalg::IndexOp::create(nb, nl, rank - 1);
              // A quantized table is decoded where its row is read, never
              // as a whole.
              auto quantized = table.getDefiningOp<DequantizeOp>();
              Value v = castFloat(
                  nb, nl,
                  quantized ? quant::dequantizedElement(nb, nl, quantized,
                                                        ValueRange{row, col})
                            : tensor::ExtractOp::create(nb, nl, table,
                                                        ValueRange{row, col})
                                  .getResult(),
                  elem);
              Value y = arith::SelectOp::create(
                  nb, nl, inRange, v, floatConst(nb, nl, elem, 0.0));
              linalg::YieldOp::create(nb, nl, y);
            })
            .getResult(0);
    b.replaceOp(op, castToType(b, loc, result, type));
    return success();
  }
};

/// The whole tensor decoded, element by element (kernels that read a
/// quantized weight decode it where they load it instead).
struct DequantizeLowering final : OpRewritePattern<DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    unsigned rank = type.getRank();
    SmallVector<OpFoldResult> sizes = tensorSizes(b, loc, op.getScales());
    sizes.back() = b.getIndexAttr(type.getShape().back());
    Value init = emptyTensor(b, loc, sizes, type.getElementType());
    Value result =
        linalg::GenericOp::create(
            b, loc, init.getType(), ValueRange{}, init,
            ArrayRef<AffineMap>{
                AffineMap::getMultiDimIdentityMap(rank, op.getContext())},
            iterators(rank),
            [&](OpBuilder &nb, Location nl, ValueRange) {
              SmallVector<Value> at;
              for (unsigned d = 0; d < rank; ++d)
                at.push_back(linalg::IndexOp::create(nb, nl, d));
              linalg::YieldOp::create(
                  nb, nl,
                  castFloat(nb, nl,
                            quant::dequantizedElement(nb, nl, op, at),
                            type.getElementType()));
            })
            .getResult(0);
    b.replaceOp(op, castToType(b, loc, result, type));
    return success();
  }
};

} // namespace

void mlir::mnemo::populateLayerToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RmsNormLowering, SwiGluLowering, LinearLowering,
               EmbeddingLowering, DequantizeLowering>(patterns.getContext());
}

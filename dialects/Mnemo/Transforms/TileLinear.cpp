//===- TileLinear.cpp - cache tiling of mnemo.linear ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// y[..., M, N] = x[..., M, K] W(K, N) computed tile by tile: scf.forall over
// the batch dims and [block-rows, block-cols] tiles of y, each a loop nest
// (k, m, n) over its tile, so that a weight row segment is reused by every
// row of the tile and the accumulator tile stays in cache.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_TILELINEARPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

Value tileLinear(RewriterBase &b, LinearOp op, int64_t bm, int64_t bn) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  Type elem = op.getType().getElementType();
  FloatType ct = computeType(elem);
  bool outIn = op.getLayout() == WeightLayout::OutIn;
  int64_t k = op.getInFeatures(), n = op.getOutFeatures();
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };

  // A vector input is one row. Leading dims other than the rows (the
  // batch) are iterated one by one; reshaping them into the rows would need
  // a dynamic expand_shape on the way out.
  Value x = op.getInput();
  auto xType = cast<RankedTensorType>(x.getType());
  if (xType.getRank() == 1)
    x = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1, k}, xType.getElementType()), x,
        ArrayRef<ReassociationIndices>{{0, 1}},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(k)});
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  int64_t rowDim = rank - 2;
  Value m = tensor::DimOp::create(b, loc, x, rowDim);
  SmallVector<OpFoldResult> outSizes = tensor::getMixedSizes(b, loc, x);
  outSizes.back() = b.getIndexAttr(n);
  Value out = emptyTensor(b, loc, outSizes, elem);
  SmallVector<OpFoldResult> ubs(outSizes.begin(), outSizes.begin() + rowDim);
  ubs.push_back(arith::CeilDivSIOp::create(b, loc, m, idx(bm)).getResult());
  ubs.push_back(b.getIndexAttr(llvm::divideCeil(n, bn)));
  auto forall =
      scf::ForallOp::create(b, loc, ubs, ValueRange{out}, std::nullopt);
  Block *body = forall.getBody();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(body->getTerminator());
  Value m0 = arith::MulIOp::create(b, loc, body->getArgument(rowDim), idx(bm));
  Value n0 =
      arith::MulIOp::create(b, loc, body->getArgument(rowDim + 1), idx(bn));
  OpFoldResult rows =
      arith::MinSIOp::create(b, loc, idx(bm),
                             arith::SubIOp::create(b, loc, m, m0))
          .getResult();
  // Column tiles are static when they divide the features evenly.
  OpFoldResult cols =
      n % bn == 0
          ? OpFoldResult(b.getIndexAttr(bn))
          : OpFoldResult(arith::MinSIOp::create(
                             b, loc, idx(bn),
                             arith::SubIOp::create(b, loc, idx(n), n0))
                             .getResult());
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  OpFoldResult kSize = b.getIndexAttr(k);
  // Offsets and sizes over all dims of x / y: the batch position, then the
  // row and column (or feature) window; the unit batch dims are dropped.
  auto window = [&](OpFoldResult start, OpFoldResult size,
                    SmallVectorImpl<OpFoldResult> &offsets,
                    SmallVectorImpl<OpFoldResult> &sizes) {
    for (int64_t i = 0; i < rowDim; ++i) {
      offsets.push_back(body->getArgument(i));
      sizes.push_back(one);
    }
    offsets.append({m0, start});
    sizes.append({rows, size});
  };
  SmallVector<OpFoldResult> xOffsets, xSizes, strides(rank, one);
  window(zero, kSize, xOffsets, xSizes);
  auto tileType = [&](OpFoldResult r, OpFoldResult c, Type e) {
    auto dim = [](OpFoldResult v) {
      std::optional<int64_t> c = getConstantIntValue(v);
      return c ? *c : ShapedType::kDynamic;
    };
    return RankedTensorType::get({dim(r), dim(c)}, e);
  };
  Value xTile = tensor::ExtractSliceOp::create(
      b, loc, tileType(rows, kSize, xType.getElementType()), x, xOffsets,
      xSizes, strides);
  Value wTile =
      outIn ? tensor::ExtractSliceOp::create(
                  b, loc, op.getWeight(), ArrayRef<OpFoldResult>{n0, zero},
                  ArrayRef<OpFoldResult>{cols, kSize},
                  ArrayRef<OpFoldResult>{one, one})
                  .getResult()
            : tensor::ExtractSliceOp::create(
                  b, loc, op.getWeight(), ArrayRef<OpFoldResult>{zero, n0},
                  ArrayRef<OpFoldResult>{kSize, cols},
                  ArrayRef<OpFoldResult>{one, one})
                  .getResult();

  // acc[m, n] += x[m, k] W(k, n), loops (k, m, n).
  AffineExpr dk, dm, dn;
  bindDims(ctx, dk, dm, dn);
  Value acc = filledTensor(b, loc, {rows, cols}, ct, 0.0);
  acc = linalg::GenericOp::create(
            b, loc, acc.getType(), ValueRange{xTile, wTile}, acc,
            ArrayRef<AffineMap>{
                AffineMap::get(3, 0, {dm, dk}, ctx),
                AffineMap::get(3, 0,
                               outIn ? ArrayRef<AffineExpr>{dn, dk}
                                     : ArrayRef<AffineExpr>{dk, dn},
                               ctx),
                AffineMap::get(3, 0, {dm, dn}, ctx)},
            iterators(3, {0}),
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              yieldMultiplyAdd(nb, nl, a[0], a[1], a[2], ct);
            })
            .getResult(0);

  // y = acc (+ bias), in the result type.
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
  SmallVector<Value> inputs = {acc};
  SmallVector<AffineMap> maps = {id};
  Value bias = op.getBias();
  if (bias) {
    inputs.push_back(tensor::ExtractSliceOp::create(
        b, loc, bias, ArrayRef<OpFoldResult>{n0}, ArrayRef<OpFoldResult>{cols},
        ArrayRef<OpFoldResult>{one}));
    maps.push_back(projection(ctx, 2, {1}));
  }
  maps.push_back(id);
  Value init = emptyTensor(b, loc, {rows, cols}, elem);
  Value tile = linalg::GenericOp::create(
                   b, loc, init.getType(), inputs, init, maps, iterators(2),
                   [&](OpBuilder &nb, Location nl, ValueRange a) {
                     Value y = a[0];
                     if (bias)
                       y = arith::AddFOp::create(
                           nb, nl, y, castFloat(nb, nl, a[1], ct));
                     linalg::YieldOp::create(nb, nl,
                                             castFloat(nb, nl, y, elem));
                   })
                   .getResult(0);

  b.setInsertionPointToStart(forall.getTerminator().getBody());
  SmallVector<OpFoldResult> yOffsets, ySizes;
  window(n0, cols, yOffsets, ySizes);
  tensor::ParallelInsertSliceOp::create(b, loc, tile,
                                        body->getArguments().back(), yOffsets,
                                        ySizes, strides);
  b.setInsertionPointAfter(forall);
  Value y = forall.getResult(0);
  if (xType.getRank() == 1)
    y = tensor::CollapseShapeOp::create(b, loc, y,
                                        ArrayRef<ReassociationIndices>{{0, 1}});
  return castToType(b, loc, y, op.getType());
}

struct TileLinearPass final
    : mnemo::impl::TileLinearPassBase<TileLinearPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockRows <= 0 || blockCols <= 0) {
      getOperation()->emitError("mnemo-tile-linear needs positive tile "
                                "sizes, got block-rows=")
          << static_cast<int64_t>(blockRows)
          << " block-cols=" << static_cast<int64_t>(blockCols);
      return signalPassFailure();
    }
    SmallVector<LinearOp> ops;
    getOperation()->walk([&](LinearOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (LinearOp op : ops) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, tileLinear(rewriter, op, blockRows, blockCols));
    }
  }
};

} // namespace

//===- PagedCache.cpp - reading a paged KV cache as a tensor ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Utils/PagedCache.h"

#include "dialects/Mnemo/Utils/Float8.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

Value mnemo::gatherPages(OpBuilder &b, Location loc, Value pool, Value scales,
                         Value blockTable, Type elementType,
                         const PageGatherAlignment &alignment) {
  auto poolType = cast<RankedTensorType>(pool.getType());
  int64_t heads = poolType.getDimSize(1), page = poolType.getDimSize(2),
          dim = poolType.getDimSize(3);
  bool aligned = static_cast<bool>(alignment.lengths);
  OpFoldResult batch = tensor::getMixedSize(b, loc, blockTable, 0);
  OpFoldResult tokens =
      aligned ? OpFoldResult(alignment.tokens)
              : b.createOrFold<arith::MulIOp>(
                    loc,
                    getValueOrCreateConstantIndexOp(
                        b, loc, tensor::getMixedSize(b, loc, blockTable, 1)),
                    arith::ConstantIndexOp::create(b, loc, page));
  Value init = emptyTensor(
      b, loc, {batch, b.getIndexAttr(heads), tokens, b.getIndexAttr(dim)},
      elementType);
  MLIRContext *ctx = b.getContext();
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(4, ctx)},
      iterators(4), [&](OpBuilder &nb, Location nl, ValueRange) {
        Value bi = linalg::IndexOp::create(nb, nl, 0);
        Value h = linalg::IndexOp::create(nb, nl, 1);
        Value t = linalg::IndexOp::create(nb, nl, 2);
        Value d = linalg::IndexOp::create(nb, nl, 3);
        Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
        // The sequence's token j at t; a position before its first token
        // reads token 0 of page 0 (always there) and yields zero.
        Value valid;
        Value j = t;
        if (aligned) {
          Value length = arith::IndexCastOp::create(
              nb, nl, nb.getIndexType(),
              tensor::ExtractOp::create(nb, nl, alignment.lengths,
                                        ValueRange{bi}));
          Value start =
              arith::SubIOp::create(nb, nl, alignment.tokens, length);
          valid = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, t,
                                        start);
          j = arith::SelectOp::create(
              nb, nl, valid, arith::SubIOp::create(nb, nl, t, start), zero);
        }
        Value p = arith::ConstantIndexOp::create(nb, nl, page);
        Value logical = arith::DivUIOp::create(nb, nl, j, p);
        Value slot = arith::RemUIOp::create(nb, nl, j, p);
        Value pageIndex = arith::IndexCastOp::create(
            nb, nl, nb.getIndexType(),
            tensor::ExtractOp::create(nb, nl, blockTable,
                                      ValueRange{bi, logical}));
        if (valid)
          pageIndex = arith::SelectOp::create(nb, nl, valid, pageIndex, zero);
        Value x = tensor::ExtractOp::create(nb, nl, pool,
                                            ValueRange{pageIndex, h, slot, d});
        if (scales) {
          Value scale = tensor::ExtractOp::create(
              nb, nl, scales, ValueRange{pageIndex, h, slot});
          x = arith::MulFOp::create(nb, nl, decodeE4M3(nb, nl, x), scale);
        }
        x = castFloat(nb, nl, x, elementType);
        if (valid)
          x = arith::SelectOp::create(nb, nl, valid, x,
                                      floatConst(nb, nl, elementType, 0.0));
        linalg::YieldOp::create(nb, nl, x);
      });
  return generic.getResult(0);
}

Value mnemo::pagesFrom(OpBuilder &b, Location loc, Value blockTable,
                       Value firstPages, Value pages) {
  MLIRContext *ctx = b.getContext();
  Value width = arith::MinSIOp::create(
      b, loc, pages, tensor::DimOp::create(b, loc, blockTable, 1));
  auto tableType = cast<RankedTensorType>(blockTable.getType());
  Value out = emptyTensor(
      b, loc, {tensor::getMixedSize(b, loc, blockTable, 0), width},
      tableType.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, out.getType(), ValueRange{firstPages}, ValueRange{out},
      ArrayRef<AffineMap>{AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx),
                          AffineMap::getMultiDimIdentityMap(2, ctx)},
      iterators(2), [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value bi = linalg::IndexOp::create(nb, nl, 0);
        Value j = linalg::IndexOp::create(nb, nl, 1);
        Value column = arith::AddIOp::create(
            nb, nl, j,
            arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]));
        Value inside = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::slt, column,
            tensor::DimOp::create(nb, nl, blockTable, 1));
        Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
        Value page = tensor::ExtractOp::create(
            nb, nl, blockTable,
            ValueRange{bi, arith::SelectOp::create(nb, nl, inside, column,
                                                   zero)});
        Value none = arith::ConstantOp::create(
            nb, nl, nb.getZeroAttr(tableType.getElementType()));
        linalg::YieldOp::create(
            nb, nl,
            arith::SelectOp::create(nb, nl, inside, page, none).getResult());
      });
  return generic.getResult(0);
}

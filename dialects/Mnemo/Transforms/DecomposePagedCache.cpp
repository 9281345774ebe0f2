//===- DecomposePagedCache.cpp - paged KV cache as tensor ops ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The reference decomposition of the paged KV cache ops, which every target
// can compile: mnemo.kv_cache_write as a loop over the new tokens that
// inserts each one's heads into its page; mnemo.paged_attention as a gather
// of each sequence's pages into contiguous K and V ([B, Hkv, MaxPages * P,
// d]), an additive mask built from the context lengths, query positions,
// causality and window, and one mnemo.attention over them, which is then
// tiled like any other.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"
#include "dialects/Mnemo/Utils/Float8.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mlir::mnemo {
#define GEN_PASS_DEF_DECOMPOSEPAGEDCACHEPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

Value indexOf(OpBuilder &b, Location loc, Value integer) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), integer);
}

/// An FP8 row [Hkv, D] of f32 `row`: per head, scale = max(amax / 448,
/// 2^-126) and the E4M3 values nearest to row / scale. Returns the row and
/// the scales [Hkv].
std::pair<Value, Value> quantizeRow(OpBuilder &b, Location loc, Value row,
                                    int64_t heads, int64_t dim) {
  Type f32 = b.getF32Type();
  Value amaxInit = linalg::FillOp::create(
                       b, loc, floatConst(b, loc, f32, 0.0),
                       emptyTensor(b, loc, {b.getIndexAttr(heads)}, f32))
                       .getResult(0);
  Value amax =
      linalg::ReduceOp::create(
          b, loc, ValueRange{row}, ValueRange{amaxInit},
          ArrayRef<int64_t>{1},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value a = math::AbsFOp::create(nb, nl, args[0]);
            Value m = arith::MaximumFOp::create(nb, nl, a, args[1]);
            linalg::YieldOp::create(nb, nl, m);
          })
          ->getResult(0);
  Value scales =
      linalg::MapOp::create(
          b, loc, ValueRange{amax},
          emptyTensor(b, loc, {b.getIndexAttr(heads)}, f32),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value s = arith::DivFOp::create(nb, nl, args[0],
                                            floatConst(nb, nl, f32, 448.0));
            Value m = arith::MaximumFOp::create(
                nb, nl, s, floatConst(nb, nl, f32, 0x1p-126));
            linalg::YieldOp::create(nb, nl, m);
          })
          ->getResult(0);
  MLIRContext *ctx = b.getContext();
  Value init = emptyTensor(b, loc, {b.getIndexAttr(heads), b.getIndexAttr(dim)},
                           b.getType<Float8E4M3FNType>());
  auto quantized = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{row, scales}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(2, ctx),
                          AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx),
                          AffineMap::getMultiDimIdentityMap(2, ctx)},
      iterators(2), [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value y = arith::DivFOp::create(nb, nl, args[0], args[1]);
        linalg::YieldOp::create(nb, nl, encodeE4M3(nb, nl, y));
      });
  return {quantized.getResult(0), scales};
}

/// for b, s: if positions[b, s] >= 0, pool[table[b, p / P], :, p % P, :] =
/// new[b, :, s, :] rounded to the pool's type (FP8: quantized, its scales
/// stored at scales[table[b, p / P], :, p % P]).
SmallVector<Value> decomposeWrite(OpBuilder &b, KVCacheWriteOp op) {
  Location loc = op.getLoc();
  Value x = op.getNewValues(), pool = op.getPool();
  RankedTensorType poolType = op.getPool().getType();
  int64_t heads = poolType.getDimSize(1), dim = poolType.getDimSize(3);
  int64_t page = op.getPageSize();
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value batch = tensor::DimOp::create(b, loc, x, 0);
  Value length = tensor::DimOp::create(b, loc, x, 2);
  auto rowType = RankedTensorType::get({heads, dim}, poolType.getElementType());
  bool fp8 = static_cast<bool>(op.getScales());
  SmallVector<Value> state = {pool};
  if (fp8)
    state.push_back(op.getScales());
  TypeRange stateTypes = op->getResultTypes();
  auto outer = scf::ForOp::create(b, loc, c(0), batch, c(1), state);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(outer.getBody());
  Value bi = outer.getInductionVar();
  auto inner = scf::ForOp::create(b, loc, c(0), length, c(1),
                                  outer.getRegionIterArgs());
  scf::YieldOp::create(b, loc, inner.getResults());
  b.setInsertionPointToStart(inner.getBody());
  Value si = inner.getInductionVar();
  ValueRange current = inner.getRegionIterArgs();
  Value p = tensor::ExtractOp::create(b, loc, op.getPositions(),
                                      ValueRange{bi, si});
  Value zero = arith::ConstantIntOp::create(b, loc, p.getType(), 0);
  Value valid =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, p, zero);
  auto ifOp = scf::IfOp::create(b, loc, stateTypes, valid, true);
  scf::YieldOp::create(b, loc, ifOp.getResults());
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(b, loc, current);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value pos = indexOf(b, loc, p);
  Value logical = arith::DivUIOp::create(b, loc, pos, c(page));
  Value slot = arith::RemUIOp::create(b, loc, pos, c(page));
  Value pageIndex = indexOf(
      b, loc, tensor::ExtractOp::create(b, loc, op.getBlockTable(),
                                        ValueRange{bi, logical}));
  // new[b, :, s, :] as [Hkv, D] in the pool's type.
  SmallVector<OpFoldResult> one = {b.getIndexAttr(1), b.getIndexAttr(1),
                                   b.getIndexAttr(1), b.getIndexAttr(1)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(heads),
                                     b.getIndexAttr(1), b.getIndexAttr(dim)};
  auto srcType = RankedTensorType::get({heads, dim},
                                       op.getNewValues().getType()
                                           .getElementType());
  Value row = tensor::ExtractSliceOp::create(
      b, loc, srcType, x,
      ArrayRef<OpFoldResult>{bi, b.getIndexAttr(0), si, b.getIndexAttr(0)},
      sizes, one);
  Value rowScales;
  if (fp8) {
    std::tie(row, rowScales) = quantizeRow(b, loc, row, heads, dim);
  } else if (srcType != rowType) {
    Value init = emptyTensor(b, loc, {b.getIndexAttr(heads), b.getIndexAttr(dim)},
                             poolType.getElementType());
    row = linalg::MapOp::create(
              b, loc, ValueRange{row}, init,
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                linalg::YieldOp::create(
                    nb, nl,
                    castFloat(nb, nl, args[0], poolType.getElementType()));
              })
              ->getResult(0);
  }
  SmallVector<Value> updated = {tensor::InsertSliceOp::create(
      b, loc, row, current[0],
      ArrayRef<OpFoldResult>{pageIndex, b.getIndexAttr(0), slot,
                             b.getIndexAttr(0)},
      sizes, one)};
  if (fp8)
    updated.push_back(tensor::InsertSliceOp::create(
        b, loc, rowScales, current[1],
        ArrayRef<OpFoldResult>{pageIndex, b.getIndexAttr(0), slot},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(heads),
                               b.getIndexAttr(1)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                               b.getIndexAttr(1)}));
  scf::YieldOp::create(b, loc, updated);
  return outer.getResults();
}

/// The paged attention as a gather, a mask and a mnemo.attention.
class PagedAttentionDecomposer {
public:
  PagedAttentionDecomposer(OpBuilder &b, PagedAttentionOp op)
      : b(b), op(op), loc(op.getLoc()),
        elem(op.getQuery().getType().getElementType()) {}

  Value build() {
    Value k = gather(op.getKeyPool(), op.getKeyScales()),
          v = gather(op.getValuePool(), op.getValueScales());
    Value mask = buildMask(tensor::DimOp::create(b, loc, k, 2));
    auto attention = AttentionOp::create(
        b, loc, op.getResult().getType(), op.getQuery(), k, v, mask,
        op.getSink(), /*q_offset=*/Value(), /*causal=*/false,
        /*window=*/nullptr, op.getScaleAttr(), op.getSoftcapAttr());
    if (!op.getScaleAttr())
      attention.setScaleAttr(b.getF64FloatAttr(
          1.0 / std::sqrt(static_cast<double>(
                    op.getQuery().getType().getDimSize(3)))));
    return attention.getResult();
  }

private:
  /// pool [Pages, Hkv, P, d] -> [B, Hkv, MaxPages * P, d] in the query's
  /// element type: token t of sequence b is pool[table[b, t / P], h, t % P]
  /// (FP8: times scales[table[b, t / P], h, t % P]).
  Value gather(Value pool, Value scales) {
    auto poolType = cast<RankedTensorType>(pool.getType());
    int64_t heads = poolType.getDimSize(1), page = poolType.getDimSize(2),
            dim = poolType.getDimSize(3);
    Value table = op.getBlockTable();
    OpFoldResult batch = tensor::getMixedSize(b, loc, table, 0);
    OpFoldResult tokens = b.createOrFold<arith::MulIOp>(
        loc, getValueOrCreateConstantIndexOp(
                 b, loc, tensor::getMixedSize(b, loc, table, 1)),
        arith::ConstantIndexOp::create(b, loc, page));
    Value init = emptyTensor(
        b, loc, {batch, b.getIndexAttr(heads), tokens, b.getIndexAttr(dim)},
        elem);
    MLIRContext *ctx = b.getContext();
    auto generic = linalg::GenericOp::create(
        b, loc, init.getType(), ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(4, ctx)},
        iterators(4), [&](OpBuilder &nb, Location nl, ValueRange) {
          Value bi = linalg::IndexOp::create(nb, nl, 0);
          Value h = linalg::IndexOp::create(nb, nl, 1);
          Value t = linalg::IndexOp::create(nb, nl, 2);
          Value d = linalg::IndexOp::create(nb, nl, 3);
          Value p = arith::ConstantIndexOp::create(nb, nl, page);
          Value logical = arith::DivUIOp::create(nb, nl, t, p);
          Value slot = arith::RemUIOp::create(nb, nl, t, p);
          Value pageIndex = indexOf(
              nb, nl,
              tensor::ExtractOp::create(nb, nl, table,
                                        ValueRange{bi, logical}));
          Value x = tensor::ExtractOp::create(
              nb, nl, pool, ValueRange{pageIndex, h, slot, d});
          if (scales) {
            Value scale = tensor::ExtractOp::create(
                nb, nl, scales, ValueRange{pageIndex, h, slot});
            x = arith::MulFOp::create(nb, nl, decodeE4M3(nb, nl, x), scale);
          }
          linalg::YieldOp::create(nb, nl, castFloat(nb, nl, x, elem));
        });
    return generic.getResult(0);
  }

  /// [B, 1, Sq, T] additive mask: 0 where query i of sequence b sees token
  /// t, -inf elsewhere (past the context, a padding query, the causal
  /// future, outside the window).
  Value buildMask(Value tokens) {
    MLIRContext *ctx = b.getContext();
    Value q = op.getQuery();
    Value init = emptyTensor(
        b, loc,
        {tensor::getMixedSize(b, loc, q, 0), b.getIndexAttr(1),
         tensor::getMixedSize(b, loc, q, 2), OpFoldResult(tokens)},
        elem);
    Value lens = op.getContextLens(), positions = op.getQPositions();
    bool causal = op.getCausal();
    std::optional<int64_t> window;
    if (IntegerAttr w = op.getWindowAttr())
      window = w.getInt();
    auto generic = linalg::GenericOp::create(
        b, loc, init.getType(), ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(4, ctx)},
        iterators(4), [&](OpBuilder &nb, Location nl, ValueRange) {
          Value bi = linalg::IndexOp::create(nb, nl, 0);
          Value i = linalg::IndexOp::create(nb, nl, 2);
          Value t = arith::IndexCastOp::create(
              nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, 3));
          Value len = tensor::ExtractOp::create(nb, nl, lens, ValueRange{bi});
          Value pos =
              tensor::ExtractOp::create(nb, nl, positions, ValueRange{bi, i});
          auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) {
            return arith::CmpIOp::create(nb, nl, pred, x, y);
          };
          Value zero = arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), 0);
          Value seen = arith::AndIOp::create(
              nb, nl, cmp(arith::CmpIPredicate::slt, t, len),
              cmp(arith::CmpIPredicate::sge, pos, zero));
          if (causal)
            seen = arith::AndIOp::create(
                nb, nl, seen, cmp(arith::CmpIPredicate::sle, t, pos));
          if (window) {
            Value w =
                arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), *window);
            Value back = arith::SubIOp::create(nb, nl, pos, t);
            seen = arith::AndIOp::create(
                nb, nl, seen, cmp(arith::CmpIPredicate::slt, back, w));
          }
          Value value = arith::SelectOp::create(
              nb, nl, seen, floatConst(nb, nl, elem, 0.0),
              floatConst(nb, nl, elem, -INFINITY));
          linalg::YieldOp::create(nb, nl, value);
        });
    return generic.getResult(0);
  }

  OpBuilder &b;
  PagedAttentionOp op;
  Location loc;
  Type elem;
};

struct DecomposePagedCachePass final
    : mnemo::impl::DecomposePagedCachePassBase<DecomposePagedCachePass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<KVCacheWriteOp, PagedAttentionOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      if (auto write = dyn_cast<KVCacheWriteOp>(op))
        rewriter.replaceOp(op, decomposeWrite(rewriter, write));
      else
        rewriter.replaceOp(
            op, PagedAttentionDecomposer(rewriter, cast<PagedAttentionOp>(op))
                    .build());
    }
  }
};

} // namespace

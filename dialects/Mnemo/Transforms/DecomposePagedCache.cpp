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
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

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

/// for b, s: if positions[b, s] >= 0, pool[table[b, p / P], :, p % P, :] =
/// new[b, :, s, :] rounded to the pool's type.
Value decomposeWrite(OpBuilder &b, KVCacheWriteOp op) {
  Location loc = op.getLoc();
  Value x = op.getNewValues(), pool = op.getPool();
  RankedTensorType poolType = op.getPool().getType();
  int64_t heads = poolType.getDimSize(1), dim = poolType.getDimSize(3);
  int64_t page = op.getPageSize();
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value batch = tensor::DimOp::create(b, loc, x, 0);
  Value length = tensor::DimOp::create(b, loc, x, 2);
  auto rowType = RankedTensorType::get({heads, dim}, poolType.getElementType());
  auto outer = scf::ForOp::create(b, loc, c(0), batch, c(1), ValueRange{pool});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(outer.getBody());
  Value bi = outer.getInductionVar();
  auto inner = scf::ForOp::create(b, loc, c(0), length, c(1),
                                  ValueRange{outer.getRegionIterArgs()[0]});
  scf::YieldOp::create(b, loc, inner.getResults());
  b.setInsertionPointToStart(inner.getBody());
  Value si = inner.getInductionVar(), current = inner.getRegionIterArgs()[0];
  Value p = tensor::ExtractOp::create(b, loc, op.getPositions(),
                                      ValueRange{bi, si});
  Value zero = arith::ConstantIntOp::create(b, loc, p.getType(), 0);
  Value valid =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, p, zero);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{poolType}, valid, true);
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
  if (srcType != rowType) {
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
  Value updated = tensor::InsertSliceOp::create(
      b, loc, row, current,
      ArrayRef<OpFoldResult>{pageIndex, b.getIndexAttr(0), slot,
                             b.getIndexAttr(0)},
      sizes, one);
  scf::YieldOp::create(b, loc, updated);
  return outer.getResult(0);
}

/// The paged attention as a gather, a mask and a mnemo.attention.
class PagedAttentionDecomposer {
public:
  PagedAttentionDecomposer(OpBuilder &b, PagedAttentionOp op)
      : b(b), op(op), loc(op.getLoc()),
        elem(op.getQuery().getType().getElementType()) {}

  Value build() {
    Value k = gather(op.getKeyPool()), v = gather(op.getValuePool());
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
  /// element type: token t of sequence b is pool[table[b, t / P], h, t % P].
  Value gather(Value pool) {
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
      Value result;
      if (auto write = dyn_cast<KVCacheWriteOp>(op))
        result = decomposeWrite(rewriter, write);
      else
        result = PagedAttentionDecomposer(rewriter, cast<PagedAttentionOp>(op))
                     .build();
      rewriter.replaceOp(op, result);
    }
  }
};

} // namespace

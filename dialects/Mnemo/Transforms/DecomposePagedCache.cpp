//===- DecomposePagedCache.cpp - paged KV cache as tensor ops ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The reference decomposition of mnemo.paged_attention, which every target
// can compile: a gather of each sequence's pages into contiguous K and V
// ([B, Hkv, MaxPages * P, d]), an additive mask built from the context
// lengths, query positions, causality and window, and one mnemo.attention
// over them, which is then tiled like any other (the tiling computes the
// gathered tiles where it loads them, reading the pages directly). With
// indices (the keys each query selects) the gathered K and V feed a
// mnemo.sparse_attention instead, over the indices that name a cached
// token of a query that is not padding (the others become -1).
// mnemo.kv_cache_write needs no decomposition: it bufferizes in place into
// its pools as a parallel loop (BufferizableOpInterfaceImpl.cpp).
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "dialects/Mnemo/Utils/PagedCache.h"

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

/// The paged attention as a gather, a mask and a mnemo.attention.
class PagedAttentionDecomposer {
public:
  PagedAttentionDecomposer(OpBuilder &b, PagedAttentionOp op)
      : b(b), op(op), loc(op.getLoc()),
        elem(op.getQuery().getType().getElementType()) {}

  Value build() {
    Value k = gather(op.getKeyPool(), op.getKeyScales()),
          v = gather(op.getValuePool(), op.getValueScales());
    if (op.getIndices())
      return SparseAttentionOp::create(b, loc, op.getResult().getType(),
                                       op.getQuery(), k, v, cachedIndices(),
                                       op.getSink(), op.getScaleAttr());
    Value mask = buildMask(tensor::DimOp::create(b, loc, k, 2));
    if (Value user = op.getMask())
      mask = addMask(mask, user);
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
  /// element type (FP8: dequantized).
  Value gather(Value pool, Value scales) {
    return gatherPages(b, loc, pool, scales, op.getBlockTable(), elem);
  }

  /// Whether token `t` (i64) is below sequence `bi`'s length and its query
  /// `i` is not padding (position -1).
  Value seenToken(OpBuilder &nb, Location nl, Value bi, Value i, Value t) {
    Value len =
        tensor::ExtractOp::create(nb, nl, op.getContextLens(), ValueRange{bi});
    Value pos = tensor::ExtractOp::create(nb, nl, op.getQPositions(),
                                          ValueRange{bi, i});
    Value zero = arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), 0);
    return arith::AndIOp::create(
        nb, nl,
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, t, len),
        arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, pos, zero));
  }

  /// The indices [B, Sq, K] with -1 where an entry names no cached token
  /// of its sequence or its query is padding (position -1).
  Value cachedIndices() {
    MLIRContext *ctx = b.getContext();
    Value indices = op.getIndices();
    auto type = cast<RankedTensorType>(indices.getType());
    Type elemType = type.getElementType();
    Value init =
        emptyTensor(b, loc, tensor::getMixedSizes(b, loc, indices), elemType);
    auto generic = linalg::GenericOp::create(
        b, loc, type, ValueRange{indices}, ValueRange{init},
        SmallVector<AffineMap>(2, AffineMap::getMultiDimIdentityMap(3, ctx)),
        iterators(3), [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value bi = linalg::IndexOp::create(nb, nl, 0);
          Value i = linalg::IndexOp::create(nb, nl, 1);
          Value t = args[0];
          if (!elemType.isInteger(64))
            t = arith::ExtSIOp::create(nb, nl, nb.getI64Type(), t);
          Value zero = arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), 0);
          Value cached = arith::AndIOp::create(
              nb, nl, seenToken(nb, nl, bi, i, t),
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, t,
                                    zero));
          Value none = arith::ConstantIntOp::create(nb, nl, elemType, -1);
          linalg::YieldOp::create(
              nb, nl,
              arith::SelectOp::create(nb, nl, cached, args[0], none)
                  .getResult());
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
    Value positions = op.getQPositions();
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
          Value pos =
              tensor::ExtractOp::create(nb, nl, positions, ValueRange{bi, i});
          auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) {
            return arith::CmpIOp::create(nb, nl, pred, x, y);
          };
          Value seen = seenToken(nb, nl, bi, i, t);
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

  /// `built` [B, 1, Sq, T] plus the op's mask `user` (broadcast to
  /// [B, Hq, Sq, T]): [B, H, Sq, T] with H the user mask's heads (Hq or 1).
  Value addMask(Value built, Value user) {
    MLIRContext *ctx = b.getContext();
    auto userType = cast<RankedTensorType>(user.getType());
    bool perHead = userType.getRank() == 4 && userType.getDimSize(1) != 1;
    SmallVector<OpFoldResult> sizes = tensorSizes(b, loc, built);
    if (perHead)
      sizes[1] = tensor::getMixedSize(b, loc, op.getQuery(), 1);
    Value init = emptyTensor(b, loc, sizes, elem);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineMap builtMap = AffineMap::get(
        4, 0, {d(0), getAffineConstantExpr(0, ctx), d(2), d(3)}, ctx);
    auto generic = linalg::GenericOp::create(
        b, loc, init.getType(), ValueRange{built, user}, ValueRange{init},
        ArrayRef<AffineMap>{builtMap, broadcastMap(ctx, 4, userType),
                            AffineMap::getMultiDimIdentityMap(4, ctx)},
        iterators(4), [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value extra = castFloat(nb, nl, args[1], elem);
          linalg::YieldOp::create(
              nb, nl,
              arith::AddFOp::create(nb, nl, args[0], extra).getResult());
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
    SmallVector<PagedAttentionOp> ops;
    getOperation()->walk([&](PagedAttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (PagedAttentionOp op : ops) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, PagedAttentionDecomposer(rewriter, op).build());
    }
  }
};

} // namespace

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
// gathered tiles where it loads them, reading the pages directly).
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
  /// element type (FP8: dequantized).
  Value gather(Value pool, Value scales) {
    return gatherPages(b, loc, pool, scales, op.getBlockTable(), elem);
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

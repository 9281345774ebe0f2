//===- AttendOverPages.cpp - a decoder's past read from its pages ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An ONNX decoder with past key/values attends over concat(past, new): its
// past a mnemo.kv_cache_gather of a pool (each sequence's cached tokens
// right-aligned to T tokens), its new keys stored into the same pool by a
// mnemo.kv_cache_write. With `paged-attention`, such a mnemo.attention
// becomes a mnemo.paged_attention over the pools the writes return: key j
// of the concat is cached token j - (T - cached[b]) of sequence b (the
// past's right alignment; the new tokens follow the cached ones in both),
// so the graph's own mask, read at column t + T - cached[b] for token t,
// is the paged attention's. The contiguous copy of every layer's cache at
// every step is gone; the kernels read the pages.
//
// Then every mnemo.kv_cache_gather left becomes the generic that computes
// each element from its indices (PagedCache.h), which the attention tiling
// computes where it loads it (mnemo-generate-concats).
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "dialects/Mnemo/Utils/PagedCache.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_ATTENDOVERPAGESPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

/// Whether `extent` is the gather's token count: its `tokens` operand, a
/// tensor.dim along the tokens of a gather of as many tokens, or the same
/// constant.
bool isTokenCount(OpFoldResult extent, KVCacheGatherOp gather) {
  if (isEqualConstantIntOrValue(extent, gather.getTokens()))
    return true;
  auto value = dyn_cast<Value>(extent);
  if (!value)
    return false;
  // The importer reads an extent the past tensors share from any of them.
  auto dim = value.getDefiningOp<tensor::DimOp>();
  auto of = dim ? throughCasts(dim.getSource()).getDefiningOp<KVCacheGatherOp>()
                : KVCacheGatherOp();
  return of && of.getTokens() == gather.getTokens() &&
         getConstantIntValue(dim.getIndex()) == 2;
}

/// One side (keys or values) of an attention over concat(past, new).
struct Side {
  KVCacheGatherOp gather;
  KVCacheWriteOp write;
};

/// The side `operand` is, or nothing.
std::optional<Side> matchSide(Value operand) {
  std::optional<TwoPartConcat> concat =
      matchTwoPartConcat(throughCasts(operand));
  if (!concat || concat->axis != 2)
    return std::nullopt;
  auto gather = throughCasts(concat->first).getDefiningOp<KVCacheGatherOp>();
  if (!gather || !isTokenCount(concat->split, gather))
    return std::nullopt;
  Value appended = throughCasts(concat->second);
  for (Operation *user : gather.getPool().getUsers()) {
    auto write = dyn_cast<KVCacheWriteOp>(user);
    if (write && throughCasts(write.getNewValues()) == appended &&
        write.getBlockTable() == gather.getBlockTable() &&
        write.getScales() == gather.getScales())
      return Side{gather, write};
  }
  return std::nullopt;
}

class Rewriter {
public:
  Rewriter(IRRewriter &b, DominanceInfo &dominance)
      : b(b), dominance(dominance) {}

  /// Rewrites `att` when it attends over a paged past; whether it did.
  bool rewrite(AttentionOp att) {
    if (att.getCausal() || att.getWindowAttr() || att.getQOffset())
      return false;
    std::optional<Side> keys = matchSide(att.getKey()),
                        values = matchSide(att.getValue());
    if (!keys || !values || keys->gather == values->gather ||
        keys->gather.getBlockTable() != values->gather.getBlockTable() ||
        keys->gather.getLengths() != values->gather.getLengths() ||
        keys->gather.getTokens() != values->gather.getTokens() ||
        keys->write.getPositions() != values->write.getPositions())
      return false;
    // The concat's keys are in the query's type, so the pools' values are
    // read at no less precision than the graph read them.
    Type elem = att.getQuery().getType().getElementType();
    if (keys->gather.getType().getElementType() != elem ||
        values->gather.getType().getElementType() != elem)
      return false;
    // Positions [B, S] of the new tokens are the queries' rows.
    RankedTensorType newTokens = keys->write.getPositions().getType();
    int64_t sq = att.getQuery().getType().getDimSize(2);
    if (!ShapedType::isDynamic(sq) && !newTokens.isDynamicDim(1) &&
        newTokens.getDimSize(1) != sq)
      return false;
    // The attention reads the pools once the new tokens are in them.
    for (KVCacheWriteOp write : {keys->write, values->write})
      if (!dominance.properlyDominates(write.getOperation(), att) &&
          !canMoveBefore(write, att))
        return false;
    for (KVCacheWriteOp write : {keys->write, values->write})
      if (!dominance.properlyDominates(write.getOperation(), att))
        write->moveBefore(att);

    b.setInsertionPoint(att);
    loc = att.getLoc();
    gather = keys->gather;
    positions = keys->write.getPositions();
    // The layers of a step share their mask and lengths.
    Value mask;
    if (Value graphMask = att.getMask())
      mask = reuse(masks[{graphMask, gather.getLengths(), gather.getTokens(),
                          gather.getBlockTable()}],
                   att, [&] { return shiftedMask(graphMask); });
    Value lengths = reuse(lengthsOf[{gather.getLengths(), positions}], att,
                          [&] { return contextLengths(); });
    auto paged = PagedAttentionOp::create(
        b, loc, att.getType(), att.getQuery(), keys->write.getResult(),
        values->write.getResult(), gather.getBlockTable(), lengths,
        keys->write.getPositions(), att.getSink(),
        keys->write.getResultScales(), values->write.getResultScales(),
        /*indices=*/Value(), mask, /*causal=*/false, IntegerAttr(),
        att.getScaleAttr(), att.getSoftcapAttr());
    b.replaceOp(att, paged.getResult());
    return true;
  }

private:
  /// `cached` when it is defined before `att`, else (and then cached)
  /// what `build` makes.
  Value reuse(Value &cached, AttentionOp att, function_ref<Value()> build) {
    if (!cached || !dominance.properlyDominates(cached, att))
      cached = build();
    return cached;
  }

  /// Whether `write` (after `att` in its block) may move before it: its
  /// operands are defined before `att`.
  bool canMoveBefore(KVCacheWriteOp write, AttentionOp att) {
    if (write->getBlock() != att->getBlock())
      return false;
    return llvm::all_of(write->getOperands(), [&](Value v) {
      return dominance.properlyDominates(v, att);
    });
  }

  /// Each sequence's tokens after the step: max(cached, 1 + the largest
  /// position of its new tokens) (padding tokens are at -1).
  Value contextLengths() {
    MLIRContext *ctx = b.getContext();
    auto generic = linalg::GenericOp::create(
        b, loc, gather.getLengths().getType(), ValueRange{positions},
        ValueRange{gather.getLengths()},
        ArrayRef<AffineMap>{projection(ctx, 2, {0, 1}),
                            projection(ctx, 2, {0})},
        {utils::IteratorType::parallel, utils::IteratorType::reduction},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value one = arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), 1);
          Value end = arith::AddIOp::create(nb, nl, args[0], one);
          linalg::YieldOp::create(
              nb, nl, arith::MaxSIOp::create(nb, nl, args[1], end).getResult());
        });
    return generic.getResult(0);
  }

  /// The graph's mask [.., Sq, T + S] (rank 2 to 4, broadcast) as the paged
  /// attention's [B, H, Sq, MaxPages * P]: token t's column is
  /// t + T - cached[b] (clamped into the mask; tokens past the sequence's
  /// length are not seen whatever it holds).
  Value shiftedMask(Value mask) {
    MLIRContext *ctx = b.getContext();
    auto type = cast<RankedTensorType>(mask.getType());
    int64_t rank = type.getRank(), lead = 4 - rank;
    Value table = gather.getBlockTable();
    Value pageSize = arith::ConstantIndexOp::create(
        b, loc, gather.getPool().getType().getDimSize(2));
    Value capacity = arith::MulIOp::create(
        b, loc, tensor::DimOp::create(b, loc, table, 1), pageSize);
    SmallVector<OpFoldResult> sizes = {
        tensor::getMixedSize(b, loc, table, 0),
        rank == 4 ? tensor::getMixedSize(b, loc, mask, 1)
                  : OpFoldResult(b.getIndexAttr(1)),
        tensor::getMixedSize(b, loc, mask, rank - 2), OpFoldResult(capacity)};
    Value init = emptyTensor(b, loc, sizes, type.getElementType());
    SmallVector<Value> extents;
    for (int64_t d = 0; d < rank; ++d)
      extents.push_back(tensor::DimOp::create(b, loc, mask, d));
    Value lengths = gather.getLengths(), tokens = gather.getTokens();
    auto generic = linalg::GenericOp::create(
        b, loc, init.getType(), ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(4, ctx)},
        iterators(4), [&](OpBuilder &nb, Location nl, ValueRange) {
          SmallVector<Value> idx;
          for (int64_t d = 0; d < 4; ++d)
            idx.push_back(linalg::IndexOp::create(nb, nl, d));
          Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
          Value one = arith::ConstantIndexOp::create(nb, nl, 1);
          Value cached = arith::IndexCastOp::create(
              nb, nl, nb.getIndexType(),
              tensor::ExtractOp::create(nb, nl, lengths, idx[0]));
          Value column = arith::SubIOp::create(
              nb, nl, arith::AddIOp::create(nb, nl, idx[3], tokens), cached);
          Value last = arith::SubIOp::create(nb, nl, extents.back(), one);
          column = arith::MinSIOp::create(
              nb, nl, arith::MaxSIOp::create(nb, nl, column, zero), last);
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = d == rank - 1 ? column : idx[lead + d];
            // An extent of 1 broadcasts (read at 0).
            if (type.getDimSize(d) == 1)
              i = zero;
            else if (type.isDynamicDim(d) && d != rank - 1)
              i = arith::SelectOp::create(
                  nb, nl,
                  arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                        extents[d], one),
                  zero, i);
            at.push_back(i);
          }
          linalg::YieldOp::create(
              nb, nl, tensor::ExtractOp::create(nb, nl, mask, at).getResult());
        });
    return generic.getResult(0);
  }

  IRRewriter &b;
  DominanceInfo &dominance;
  Location loc = b.getUnknownLoc();
  KVCacheGatherOp gather;
  Value positions; // the new tokens' [B, S]
  // Keyed by what they are computed from: the graph's mask, the cached
  // lengths, the past's token count and the block table.
  DenseMap<std::tuple<Value, Value, Value, Value>, Value> masks;
  DenseMap<std::pair<Value, Value>, Value> lengthsOf;
};

struct AttendOverPagesPass final
    : mnemo::impl::AttendOverPagesPassBase<AttendOverPagesPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter b(&getContext());
    if (pagedAttention) {
      SmallVector<AttentionOp> ops;
      getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
      DominanceInfo dominance(getOperation());
      Rewriter rewriter(b, dominance);
      for (AttentionOp op : ops)
        rewriter.rewrite(op);
    }
    // The concats and gathers nothing reads any more go; the others become
    // generics.
    SmallVector<KVCacheGatherOp> gathers;
    getOperation()->walk([&](KVCacheGatherOp op) { gathers.push_back(op); });
    for (KVCacheGatherOp op : gathers) {
      b.setInsertionPoint(op);
      Value v = gatherPages(b, op.getLoc(), op.getPool(), op.getScales(),
                            op.getBlockTable(),
                            op.getType().getElementType(),
                            {op.getLengths(), op.getTokens()});
      b.replaceOp(op, castToType(b, op.getLoc(), v, op.getType()));
    }
  }
};

} // namespace

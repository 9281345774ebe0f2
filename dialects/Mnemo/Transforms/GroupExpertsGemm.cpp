//===- GroupExpertsGemm.cpp - mnemo.experts as grouped GEMMs ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo-group-experts with group-rows=A (the GPU targets): mnemo.experts as
// one GEMM per product over all the experts, and the sort is made of parallel
// loops (a counting sort by scalar loops would run on one GPU thread):
//
//   1. counts[c, g] of each group g (the E experts, and "none") per chunk
//      c of 256 pairs; before[c, g], their sums over earlier chunks;
//      blocks[g] = ceil(total / A); first[g], the blocks of earlier groups.
//      A pair's place: A first[g] + before[c, g] + the pairs of g before
//      it in its chunk (P x E + P x 256 + (P / 256)^2 x E steps, no
//      sequential loop).
//   2. An scf.forall over the pairs writes each one's row of x at its
//      place in a [ceil(P / A) + min(P, E + 1) blocks x A, H] tensor (the
//      most the groups can need; with round-rows, in the weights' 16-bit
//      type); every expert's rows begin a block, and the block's expert is
//      listed ([blocks] i32, -1 for none and for the blocks past the last).
//   3. mnemo.grouped_linear against gate and up, mnemo.swiglu,
//      mnemo.grouped_linear against down: the target's grouped GEMMs.
//   4. Each token sums its slots' rows times their routing weights.
//
// Decode steps and weights computed at run time are grouped alike.
//
//===----------------------------------------------------------------------===//

#include "ExpertGroups.h"

#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <numeric>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;
using namespace mlir::mnemo::expert_groups;

namespace {

/// Pairs per chunk of the parallel counting sort (tiledExperts).
constexpr int64_t kChunk = 256;

/// A linalg.generic into `init` (loops `numLoops`, `reductions` among them)
/// reading `inputs`, each map a projection onto the listed loops.
Value generic(OpBuilder &b, Location loc, ValueRange inputs,
              ArrayRef<SmallVector<unsigned>> inputLoops, Value init,
              ArrayRef<unsigned> initLoops, unsigned numLoops,
              ArrayRef<unsigned> reductions,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (ArrayRef<unsigned> loops : inputLoops)
    maps.push_back(projection(ctx, numLoops, loops));
  maps.push_back(projection(ctx, numLoops, initLoops));
  return yieldingGeneric(b, loc, inputs, maps, init, reductions, body);
}

} // namespace

Value mnemo::expert_groups::tiledExperts(OpBuilder &b, Location loc,
                                         ExpertsOp op, int64_t blockRows,
                                         bool roundRows) {
  Type index = b.getIndexType(), i32 = b.getI32Type();
  FloatType ct = cast<FloatType>(b.getF32Type());
  Value x = op.getInput();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t experts = op.getGate().getType().getDimSize(0);
  int64_t hidden = xType.getDimSize(2);
  int64_t slots =
      cast<RankedTensorType>(op.getIndices().getType()).getDimSize(2);
  SmallVector<ReassociationIndices> tokens = {{0, 1}, {2}}, flat = {{0, 1, 2}};
  Value x2 = tensor::CollapseShapeOp::create(b, loc, x, tokens);
  Value idx = tensor::CollapseShapeOp::create(b, loc, op.getIndices(), flat);
  Value pairs = tensor::DimOp::create(b, loc, idx, 0);
  Value chunkC = indexConst(b, loc, kChunk), one = indexConst(b, loc, 1);
  Value blockC = indexConst(b, loc, blockRows);
  // Groups: the experts, and `experts` for pairs naming none.
  int64_t groups = experts + 1;
  // (Sizes computed on the host are signed divisions: the launch plan's
  // expressions have no unsigned ceiling.)
  OpFoldResult groupsF = b.getIndexAttr(groups);
  Value chunks = arith::CeilDivSIOp::create(b, loc, pairs, chunkC);
  // 0 .. kChunk - 1: the lanes of a chunk (they size its loops).
  SmallVector<int64_t> iota(kChunk);
  std::iota(iota.begin(), iota.end(), 0);
  auto laneType = RankedTensorType::get({kChunk}, index);
  Value lanes = arith::ConstantOp::create(
      b, loc, laneType,
      DenseElementsAttr::get(
          laneType, llvm::map_to_vector(iota, [&](int64_t v) -> Attribute {
            return b.getIndexAttr(v);
          })));
  auto add = [&](OpBuilder &nb, Location nl, Value l, Value r) -> Value {
    return arith::AddIOp::create(nb, nl, l, r);
  };
  auto mulC = [&](OpBuilder &nb, Location nl, Value l, int64_t r) -> Value {
    return arith::MulIOp::create(nb, nl, l, indexConst(nb, nl, r));
  };
  auto loopIdx = [](OpBuilder &nb, Location nl, int64_t d) -> Value {
    return linalg::IndexOp::create(nb, nl, d);
  };
  auto cmp = [](OpBuilder &nb, Location nl, arith::CmpIPredicate p, Value l,
                Value r) -> Value {
    return arith::CmpIOp::create(nb, nl, p, l, r);
  };
  auto ifAdd = [&](OpBuilder &nb, Location nl, Value acc, Value cond,
                   Value v) -> Value {
    return arith::AddIOp::create(
        nb, nl, acc,
        arith::SelectOp::create(
            nb, nl, cond, v,
            arith::ConstantOp::create(nb, nl, acc.getType(),
                                      nb.getZeroAttr(acc.getType()))));
  };
  // The group of pair p (in range).
  auto groupOf = [&](OpBuilder &nb, Location nl, Value p) {
    return expertOf(nb, nl, idx, p, experts);
  };
  auto at = [](OpBuilder &nb, Location nl, Value t, ValueRange i) -> Value {
    return tensor::ExtractOp::create(nb, nl, t, i);
  };
  OpFoldResult chunksF = getAsOpFoldResult(chunks);

  // counts[c, g]: pairs of group g in chunk c (loops c, g, lane).
  Value counts0 =
      linalg::FillOp::create(b, loc, indexConst(b, loc, 0),
                             emptyTensor(b, loc, {chunksF, groupsF}, index))
          .getResult(0);
  Value counts = generic(
      b, loc, lanes, {{2}}, counts0, {0, 1}, 3, {2},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value p = add(nb, nl, mulC(nb, nl, loopIdx(nb, nl, 0), kChunk), a[0]);
        Value live = cmp(nb, nl, arith::CmpIPredicate::ult, p, pairs);
        Value g = groupOf(
            nb, nl,
            arith::SelectOp::create(nb, nl, live, p, indexConst(nb, nl, 0)));
        Value hit = arith::AndIOp::create(
            nb, nl, live,
            cmp(nb, nl, arith::CmpIPredicate::eq, g, loopIdx(nb, nl, 1)));
        return ifAdd(nb, nl, a[1], hit, indexConst(nb, nl, 1));
      });
  // before[c, g]: pairs of group g in the chunks before c (loops c, g, c').
  Value before0 =
      linalg::FillOp::create(b, loc, indexConst(b, loc, 0),
                             emptyTensor(b, loc, {chunksF, groupsF}, index))
          .getResult(0);
  Value before =
      generic(b, loc, counts, {{2, 1}}, before0, {0, 1}, 3, {2},
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                return ifAdd(nb, nl, a[1],
                             cmp(nb, nl, arith::CmpIPredicate::ult,
                                 loopIdx(nb, nl, 2), loopIdx(nb, nl, 0)),
                             a[0]);
              });
  // blocks[g]: blocks of group g (loops g, c).
  Value blocks = generic(b, loc, counts, {{1, 0}},
                         filledIntegers(b, loc, groupsF, index, 0), {0}, 2, {1},
                         [&](OpBuilder &nb, Location nl, ValueRange a) {
                           return add(nb, nl, a[1], a[0]);
                         });
  blocks = generic(b, loc, ValueRange{}, {}, blocks, {0}, 1, {},
                   [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                     return arith::CeilDivUIOp::create(
                         nb, nl, a[0], indexConst(nb, nl, blockRows));
                   });
  // first[g]: the first block of group g (loops g, g').
  Value first =
      generic(b, loc, blocks, {{1}}, filledIntegers(b, loc, groupsF, index, 0),
              {0}, 2, {1}, [&](OpBuilder &nb, Location nl, ValueRange a) {
                return ifAdd(nb, nl, a[1],
                             cmp(nb, nl, arith::CmpIPredicate::ult,
                                 loopIdx(nb, nl, 1), loopIdx(nb, nl, 0)),
                             a[0]);
              });
  // position[p]: the pair's row, its group's first row plus the pairs of
  // its group before it (in earlier chunks, then in its own: loops p, lane).
  OpFoldResult pairsF = getAsOpFoldResult(pairs);
  Value base = generic(
      b, loc, ValueRange{}, {}, emptyTensor(b, loc, {pairsF}, index), {0}, 1,
      {}, [&](OpBuilder &nb, Location nl, ValueRange) {
        Value p = loopIdx(nb, nl, 0);
        Value g = groupOf(nb, nl, p);
        Value c = arith::DivUIOp::create(nb, nl, p, indexConst(nb, nl, kChunk));
        return add(nb, nl, mulC(nb, nl, at(nb, nl, first, g), blockRows),
                   at(nb, nl, before, {c, g}));
      });
  Value position = generic(
      b, loc, lanes, {{1}}, base, {0}, 2, {1},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value p = loopIdx(nb, nl, 0);
        Value c0 =
            mulC(nb, nl,
                 arith::DivUIOp::create(nb, nl, p, indexConst(nb, nl, kChunk)),
                 kChunk);
        Value q = add(nb, nl, c0, a[0]);
        Value earlier = cmp(nb, nl, arith::CmpIPredicate::ult, q, p);
        Value same =
            cmp(nb, nl, arith::CmpIPredicate::eq,
                groupOf(nb, nl, arith::SelectOp::create(nb, nl, earlier, q, p)),
                groupOf(nb, nl, p));
        return ifAdd(nb, nl, a[1], arith::AndIOp::create(nb, nl, earlier, same),
                     indexConst(nb, nl, 1));
      });
  // expertOf[blk]: the expert of each block, -1 for the blocks of pairs
  // naming none and those past the last (loops blk, g). There are at most
  // ceil(P / A) + min(P, groups) of them: the sum over the groups holding
  // pairs of ceil(count / A) <= count / A + 1. (At a few pairs, a decode
  // step's, that is a few blocks rather than one per expert.)
  Value blockCount =
      add(b, loc, arith::CeilDivSIOp::create(b, loc, pairs, blockC),
          arith::MinUIOp::create(b, loc, pairs, indexConst(b, loc, groups)));
  Value blockExperts = generic(
      b, loc, ValueRange{first, blocks}, {{1}, {1}},
      filledIntegers(b, loc, getAsOpFoldResult(blockCount), i32, -1), {0}, 2,
      {1}, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value blk = loopIdx(nb, nl, 0), g = loopIdx(nb, nl, 1);
        Value inside = arith::AndIOp::create(
            nb, nl, cmp(nb, nl, arith::CmpIPredicate::uge, blk, a[0]),
            cmp(nb, nl, arith::CmpIPredicate::ult, blk,
                add(nb, nl, a[0], a[1])));
        inside = arith::AndIOp::create(nb, nl, inside,
                                       cmp(nb, nl, arith::CmpIPredicate::ult, g,
                                           indexConst(nb, nl, experts)));
        // -1 + (g + 1) for the one group that holds the block.
        Value g1 = arith::IndexCastOp::create(nb, nl, i32, add(nb, nl, g, one));
        return ifAdd(nb, nl, a[2], inside, g1);
      });
  Value rows = arith::MulIOp::create(b, loc, blockCount, blockC);

  // Each pair's row of x at its place; the blocks' other rows are never
  // read into a token's sum. With roundRows, an f32 row is rounded to the
  // weights' 16-bit type as it is written (the GEMMs' operand type on the
  // GPU targets, which round an f32 input so: the same values, without a
  // conversion of every block's rows).
  Type rowElem = xType.getElementType();
  Type wElem = op.getGate().getType().getElementType();
  if (roundRows && rowElem.isF32() && (wElem.isBF16() || wElem.isF16()) &&
      op.getUp().getType().getElementType() == wElem)
    rowElem = wElem;
  OpFoldResult rowsF = getAsOpFoldResult(rows);
  Value sortedX = emptyTensor(b, loc, {rowsF, b.getIndexAttr(hidden)}, rowElem);
  auto scatter =
      scf::ForallOp::create(b, loc, SmallVector<OpFoldResult>{pairsF},
                            ValueRange{sortedX}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = scatter.getBody();
    b.setInsertionPoint(body->getTerminator());
    Value p = body->getArgument(0);
    Value token = arith::DivUIOp::create(b, loc, p, indexConst(b, loc, slots));
    OpFoldResult z = b.getIndexAttr(0), o = b.getIndexAttr(1);
    auto rowType = RankedTensorType::get({1, hidden}, xType.getElementType());
    Value row = tensor::ExtractSliceOp::create(
        b, loc, rowType, x2, SmallVector<OpFoldResult>{token, z},
        SmallVector<OpFoldResult>{o, b.getIndexAttr(hidden)},
        SmallVector<OpFoldResult>{o, o});
    row = castElements(b, loc, row, rowElem);
    Value place = at(b, loc, position, p);
    b.setInsertionPointToStart(scatter.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        b, loc, row, body->getArgument(1), SmallVector<OpFoldResult>{place, z},
        SmallVector<OpFoldResult>{o, b.getIndexAttr(hidden)},
        SmallVector<OpFoldResult>{o, o});
  }
  Value xs = scatter.getResult(0);
  constexpr int64_t kDyn = ShapedType::kDynamic;
  auto project = [&](Value in, Value w) -> Value {
    int64_t width = cast<RankedTensorType>(w.getType()).getDimSize(1);
    return GroupedLinearOp::create(
               b, loc, RankedTensorType::get({kDyn, width}, ct), in, w,
               blockExperts, b.getI64IntegerAttr(blockRows))
        .getResult();
  };
  Value g = project(xs, op.getGate()), u = project(xs, op.getUp());
  Value act = SwiGluOp::create(b, loc, g.getType(), g, u, op.getLimitAttr());
  Value y = project(act, op.getDown());
  return sumSlots(b, loc, op, y, position, true);
}

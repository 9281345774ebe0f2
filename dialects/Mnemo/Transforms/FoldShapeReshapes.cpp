//===- FoldShapeReshapes.cpp - reshapes to a listed shape -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ONNX exports with dynamic dims reshape to shapes they compute
// (Shape/Gather/Concat chains), which import as
//   tensor.reshape %x(tensor.from_elements %d0, %d1, %c4, %c32)
// A reshape to a shape tensor is opaque: it bufferizes to a shape buffer
// written on the host (which a GPU plan cannot run) and hides the dims from
// every later pass. Where the listed sizes split or merge the source's dims
// in order, the reshape is a tensor.expand_shape or tensor.collapse_shape:
// each target size is matched with the source dims it covers, equal sizes
// proven by ValueBoundsConstraintSet (`tensor.dim %x, 0` and the `%d0` the
// graph computed are the same value through tensor.empty, linalg results and
// the like); the one group left at the end takes what remains, as the
// reshape keeps the element count. A reshape of a tensor.cast reads the
// cast's source (whose static sizes line groups up).
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_FOLDSHAPERESHAPESPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// A size: static, a value, or dim `dim` of a shaped value (the source's,
/// named without creating a tensor.dim).
struct Size {
  std::optional<int64_t> known;
  Value value;
  int64_t dim = -1;
  ValueBoundsConstraintSet::Variable variable() const {
    return dim >= 0 ? ValueBoundsConstraintSet::Variable(value, dim)
                    : ValueBoundsConstraintSet::Variable(value);
  }
};

std::optional<int64_t> staticSize(const Size &s) { return s.known; }

bool provenEqual(const Size &a, const Size &b) {
  if (a.known || b.known)
    return a.known == b.known;
  if (!a.value || !b.value)
    return false;
  if (a.value == b.value && a.dim == b.dim)
    return true;
  FailureOr<bool> equal =
      ValueBoundsConstraintSet::areEqual(a.variable(), b.variable());
  return succeeded(equal) && *equal;
}

/// Groups `target` sizes by the `source` dims they cover, in order: equal
/// sizes pair up, static runs multiply out to a static size, and the last
/// group takes the rest. Each group has one side of size one (a split or a
/// merge). One size of the narrow side that nothing proves (an extent a
/// graph computed as count / known) may pair with one dynamic dim of the
/// other when every other group is proven, the last included: the element
/// count makes them equal. Fails where the sizes do not line up.
FailureOr<SmallVector<ReassociationIndices>>
groups(ArrayRef<Size> source, ArrayRef<Size> target, bool expand) {
  // `wide` is the side with more dims; each group joins one dim of the
  // other side with consecutive dims of it.
  ArrayRef<Size> narrow = expand ? source : target;
  ArrayRef<Size> wide = expand ? target : source;
  auto isUnit = [](const Size &s) { return s.known && *s.known == 1; };
  SmallVector<ReassociationIndices> out;
  size_t j = 0;
  bool wildcard = false; // a narrow size paired by the element count
  for (size_t i = 0; i < narrow.size(); ++i) {
    ReassociationIndices group;
    // Unit dims of the wide side join the group they precede, unless the
    // narrow side has its own unit dim here.
    while (j < wide.size() && isUnit(wide[j]) && !isUnit(narrow[i]))
      group.push_back(j++);
    if (i + 1 == narrow.size()) {
      // The rest: the element count fixes it, unless it fixed a wildcard.
      size_t first = j;
      for (; j < wide.size(); ++j)
        group.push_back(j);
      if (group.empty())
        return failure();
      if (wildcard && !(j == first + 1 && provenEqual(narrow[i], wide[first])))
        return failure();
      out.push_back(group);
      break;
    }
    if (j < wide.size() && provenEqual(narrow[i], wide[j])) {
      group.push_back(j++);
      out.push_back(group);
      continue;
    }
    std::optional<int64_t> want = staticSize(narrow[i]);
    if (!want && !wildcard && j < wide.size() && !staticSize(wide[j])) {
      wildcard = true;
      group.push_back(j++);
      out.push_back(group);
      continue;
    }
    int64_t product = 1;
    size_t start = group.size();
    while (want && j < wide.size() && product < *want) {
      std::optional<int64_t> s = staticSize(wide[j]);
      if (!s || *s <= 0)
        break;
      product *= *s;
      group.push_back(j++);
    }
    if (!want || product != *want || group.size() == start)
      return failure();
    out.push_back(group);
  }
  if (j != wide.size() || out.size() != narrow.size())
    return failure();
  return out;
}

/// The reassociation that drops the static unit dims of `sizes` (each joins
/// its neighbour), or failure when there is none to drop or nothing else.
FailureOr<SmallVector<ReassociationIndices>>
dropUnitDims(ArrayRef<Size> sizes) {
  SmallVector<ReassociationIndices> out;
  ReassociationIndices pending;
  for (auto [d, s] : llvm::enumerate(sizes)) {
    pending.push_back(d);
    if (s.known && *s.known == 1)
      continue;
    out.push_back(pending);
    pending.clear();
  }
  if (out.empty() || out.size() == sizes.size())
    return failure();
  out.back().append(pending.begin(), pending.end());
  return out;
}

/// A reshape reads its source's elements in order, whatever its type says
/// of their dims: reshape(cast(x)) is reshape(x), and x's static sizes are
/// what lines the groups up (a step specialized to one token casts its
/// static unit dim away).
struct ReshapeOfCast final : OpRewritePattern<tensor::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto cast = op.getSource().getDefiningOp<tensor::CastOp>();
    if (!cast || !isa<RankedTensorType>(cast.getSource().getType()))
      return rewriter.notifyMatchFailure(op, "not a reshape of a cast");
    rewriter.modifyOpInPlace(
        op, [&] { op.getSourceMutable().assign(cast.getSource()); });
    return success();
  }
};

struct ReshapeToListedShape final : OpRewritePattern<tensor::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto shape = op.getShape().getDefiningOp<tensor::FromElementsOp>();
    auto sourceType = dyn_cast<RankedTensorType>(op.getSource().getType());
    auto resultType = dyn_cast<RankedTensorType>(op.getType());
    if (!shape || !sourceType || !resultType)
      return rewriter.notifyMatchFailure(op, "not a reshape to listed sizes");
    Location loc = op.getLoc();
    // Nothing is created before the match succeeds (the driver would not
    // converge).
    SmallVector<Size> source, target;
    for (int64_t d = 0; d < sourceType.getRank(); ++d) {
      Size s;
      if (!sourceType.isDynamicDim(d))
        s.known = sourceType.getDimSize(d);
      else
        s.value = op.getSource(), s.dim = d;
      source.push_back(s);
    }
    for (auto [i, v] : llvm::enumerate(shape.getElements())) {
      Size t;
      if (!resultType.isDynamicDim(i))
        t.known = resultType.getDimSize(i);
      else
        t.known = getConstantIntValue(v);
      // Value bounds take index values: an i64 size is compared through
      // the index it was cast from, or not at all.
      t.value = v;
      if (!v.getType().isIndex()) {
        auto cast = v.getDefiningOp<arith::IndexCastOp>();
        t.value = cast && cast.getIn().getType().isIndex() ? cast.getIn()
                                                            : Value();
        if (!t.known && !t.value)
          return rewriter.notifyMatchFailure(op, "a size of unknown origin");
      }
      target.push_back(t);
    }
    int64_t from = sourceType.getRank(), to = resultType.getRank();
    if (from == 0 || to == 0)
      return rewriter.notifyMatchFailure(op, "a scalar side");
    bool expand = to >= from;
    FailureOr<SmallVector<ReassociationIndices>> reassociation =
        groups(source, target, expand);
    // A merge and a split at once ([B, 1, S, H*D] to [B, S, H, D]): the
    // source's unit dims dropped first, then a split.
    SmallVector<ReassociationIndices> dropped;
    SmallVector<Size> split = source; // what the expand's groups come from
    if (failed(reassociation)) {
      FailureOr<SmallVector<ReassociationIndices>> units =
          dropUnitDims(source);
      if (failed(units))
        return rewriter.notifyMatchFailure(op, "the sizes do not line up");
      SmallVector<Size> kept;
      for (const ReassociationIndices &g : *units)
        for (int64_t d : g)
          if (!source[d].known || *source[d].known != 1)
            kept.push_back(source[d]);
      if (kept.size() != units->size() ||
          static_cast<int64_t>(kept.size()) > to)
        return rewriter.notifyMatchFailure(op, "the sizes do not line up");
      reassociation = groups(kept, target, /*expand=*/true);
      if (failed(reassociation))
        return rewriter.notifyMatchFailure(op, "the sizes do not line up");
      split = kept;
      dropped = *units;
      expand = true;
    }
    // A static dim split into one unknown size and known ones: the unknown
    // one is what is left (an expand_shape of a static dim is all static).
    if (expand)
      for (auto [gi, g] : llvm::enumerate(*reassociation)) {
        std::optional<int64_t> whole = split[gi].known;
        int64_t product = 1, unknown = -1, count = 0;
        for (int64_t d : g) {
          if (target[d].known) {
            product *= *target[d].known;
          } else {
            unknown = d;
            ++count;
          }
        }
        if (!whole || count == 0)
          continue;
        if (count > 1 || product == 0 || *whole % product != 0)
          return rewriter.notifyMatchFailure(
              op, "a static dim split into unknown sizes");
        target[unknown].known = *whole / product;
      }
    // Index-typed sizes for the expand_shape's output shape.
    SmallVector<OpFoldResult> outputShape;
    for (const Size &t : target) {
      if (t.known) {
        outputShape.push_back(rewriter.getIndexAttr(*t.known));
        continue;
      }
      Value v = t.value;
      if (!v.getType().isIndex())
        v = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                       v);
      outputShape.push_back(v);
    }
    Value result;
    Value input = op.getSource();
    if (!dropped.empty())
      input = tensor::CollapseShapeOp::create(rewriter, loc, input, dropped);
    if (expand) {
      int64_t inRank = cast<RankedTensorType>(input.getType()).getRank();
      if (to == inRank && *reassociation ==
                            SmallVector<ReassociationIndices>(
                                llvm::map_range(llvm::seq<int64_t>(0, to),
                                                [](int64_t d) {
                                                  return ReassociationIndices{
                                                      d};
                                                })))
        result = tensor::CastOp::create(rewriter, loc, resultType, input);
      else {
        // The type the sizes give (a result type may know less, such as
        // ?x?x? for [?, 4, 32]), cast to the reshape's.
        SmallVector<int64_t> dims;
        for (const Size &t : target)
          dims.push_back(t.known ? *t.known : ShapedType::kDynamic);
        auto expandedType =
            RankedTensorType::get(dims, resultType.getElementType());
        result = tensor::ExpandShapeOp::create(rewriter, loc, expandedType,
                                               input, *reassociation,
                                               outputShape);
        if (expandedType != resultType)
          result = tensor::CastOp::create(rewriter, loc, resultType, result);
      }
    } else {
      result = tensor::CollapseShapeOp::create(rewriter, loc, op.getSource(),
                                               *reassociation);
      if (result.getType() != resultType)
        result = tensor::CastOp::create(rewriter, loc, resultType, result);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct FoldShapeReshapesPass final
    : mnemo::impl::FoldShapeReshapesPassBase<FoldShapeReshapesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ReshapeToListedShape, ReshapeOfCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation()->emitError("mnemo-fold-shape-reshapes did not converge");
      return signalPassFailure();
    }
  }
};

} // namespace

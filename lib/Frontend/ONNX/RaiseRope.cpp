//===- RaiseRope.cpp - exported RoPE to mnemo.rope_tables -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Two ways exporters write a rotary embedding with cos/sin tables C, S:
//
// * rotate-half (Llama, Qwen, Mistral): with x1 = x[..., :r/2] and
//   x2 = x[..., r/2:] as Slices,
//     Add(Mul(x, C), Mul(Concat(Neg(x2), x1), S))
//   over full-width tables [.., S, r];
// * interleaved (GPT-J): the rotated copy written as
//     Reshape(Concat(Unsqueeze(Neg(x[..., 1::2])), Unsqueeze(x[..., 0::2])))
//   with tables whose entries repeat pairwise;
// * split halves (DeepSeek's de-interleaved rope): with any two halves a, b
//   and half-width tables,
//     Concat(Sub(Mul(a, C), Mul(b, S)), Add(Mul(b, C), Mul(a, S)))
//   which is the rotate-half rope of Concat(a, b) with tables
//   Concat(C, C), Concat(S, S).
//
// Both become mnemo.rope_tables. The tables are whatever the graph computes
// (constants in static exports), so the raised op is exact for every
// scaling; they must broadcast over heads: [1|B, 1, S, w] or [S, w].
//
//===----------------------------------------------------------------------===//

#include "Raising.h"

#include "dialects/Mnemo/IR/MnemoOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {

/// The two operands of a Mul, with the one named `known` first; nothing
/// when neither is.
std::optional<std::pair<std::string, std::string>>
mulWith(RaiseContext &ctx, const std::string &name, const std::string &known) {
  const onnx::NodeProto *mul = ctx.def(name, "Mul");
  if (!mul)
    return std::nullopt;
  if (inputName(*mul, 0).str() == known)
    return std::make_pair(inputName(*mul, 0).str(), inputName(*mul, 1).str());
  if (inputName(*mul, 1).str() == known)
    return std::make_pair(inputName(*mul, 1).str(), inputName(*mul, 0).str());
  return std::nullopt;
}

/// Whether `table` is a rope table for `x` [B, H, S, w]: [1|B, 1, S, w] or
/// [S, w], same extents where static.
bool isTable(RaiseContext &ctx, const std::string &table, RankedTensorType x) {
  RankedTensorType t = ctx.type(table);
  if (!t || !isa<FloatType>(t.getElementType()) || x.getRank() != 4)
    return false;
  int64_t rank = t.getRank();
  if (rank != 2 && rank != 4)
    return false;
  if (t.getDimSize(rank - 1) != x.getDimSize(3) ||
      t.getDimSize(rank - 2) != x.getDimSize(2))
    return false;
  return rank == 2 || (t.getDimSize(1) == 1 &&
                       (t.getDimSize(0) == 1 ||
                        t.getDimSize(0) == x.getDimSize(0)));
}

/// A table as mnemo.rope_tables takes it: [Bt, S, w] or [S, w].
Value tableOperand(OpBuilder &b, Location loc, Value table) {
  auto t = cast<RankedTensorType>(table.getType());
  if (t.getRank() != 4)
    return table;
  auto type = RankedTensorType::get(
      {t.getDimSize(0), t.getDimSize(2), t.getDimSize(3)}, t.getElementType());
  return tensor::CollapseShapeOp::create(
      b, loc, type, table, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
}

Value emitRope(RaiseContext &ctx, Value x, Value cos, Value sin) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  cos = tableOperand(b, loc, cos);
  sin = tableOperand(b, loc, sin);
  return RopeTablesOp::create(b, loc, x.getType(), x, cos, sin,
                              /*interleaved=*/UnitAttr());
}

} // namespace

namespace {

/// The rotated copy of x in `x * C + rot(x) * S`: which x, and the nodes
/// that form rot.
struct Rotation {
  std::string x;
  SmallVector<const onnx::NodeProto *> nodes;
};

/// rotate-half: Concat(Neg(x[..., r/2:]), x[..., :r/2]) on the last axis.
std::optional<Rotation> rotateHalf(RaiseContext &ctx, const std::string &rot) {
  const onnx::NodeProto *cat = ctx.def(rot, "Concat");
  if (!cat || cat->input_size() != 2)
    return std::nullopt;
  int64_t axis = ctx.intAttr(*cat, "axis", 0);
  const onnx::NodeProto *neg = ctx.def(inputName(*cat, 0).str(), "Neg");
  const onnx::NodeProto *hi =
      neg ? ctx.def(inputName(*neg, 0).str(), "Slice") : nullptr;
  const onnx::NodeProto *lo = ctx.def(inputName(*cat, 1).str(), "Slice");
  if (!hi || !lo || inputName(*hi, 0).str() != inputName(*lo, 0).str() ||
      (axis != -1 && axis != 3))
    return std::nullopt;
  RankedTensorType xType = ctx.type(inputName(*lo, 0).str());
  if (!xType || xType.getRank() != 4 || xType.isDynamicDim(3))
    return std::nullopt;
  int64_t width = xType.getDimSize(3), half = width / 2;
  auto l = ctx.slice(*lo), h = ctx.slice(*hi);
  if (width % 2 != 0 || !l || !h || l->axis != 3 || h->axis != 3 ||
      l->step != 1 || h->step != 1 || l->start != 0 || l->end != half ||
      h->start != half || h->end != width)
    return std::nullopt;
  return Rotation{inputName(*lo, 0).str(), {cat, neg, hi, lo}};
}

/// interleaved (GPT-J): pairs (x[2k], x[2k+1]) -> (-x[2k+1], x[2k]), written
/// as Reshape(Concat(Unsqueeze(Neg(x[..., 1::2]), -1),
///                   Unsqueeze(x[..., 0::2], -1), axis=-1), [.., r]).
std::optional<Rotation> rotateInterleaved(RaiseContext &ctx,
                                          const std::string &rot) {
  const onnx::NodeProto *reshape = ctx.def(rot, "Reshape");
  const onnx::NodeProto *cat =
      reshape ? ctx.def(inputName(*reshape, 0).str(), "Concat") : nullptr;
  if (!cat || cat->input_size() != 2)
    return std::nullopt;
  int64_t axis = ctx.intAttr(*cat, "axis", 0);
  const onnx::NodeProto *u0 = ctx.def(inputName(*cat, 0).str(), "Unsqueeze");
  const onnx::NodeProto *u1 = ctx.def(inputName(*cat, 1).str(), "Unsqueeze");
  const onnx::NodeProto *neg =
      u0 ? ctx.def(inputName(*u0, 0).str(), "Neg") : nullptr;
  const onnx::NodeProto *odd =
      neg ? ctx.def(inputName(*neg, 0).str(), "Slice") : nullptr;
  const onnx::NodeProto *even =
      u1 ? ctx.def(inputName(*u1, 0).str(), "Slice") : nullptr;
  if (!odd || !even || inputName(*odd, 0).str() != inputName(*even, 0).str() ||
      (axis != -1 && axis != 4))
    return std::nullopt;
  for (const onnx::NodeProto *u : {u0, u1}) {
    auto axes = ctx.intsOperand(*u, "axes", 1, 13);
    if (!axes || axes->size() != 1 || ((*axes)[0] != -1 && (*axes)[0] != 4))
      return std::nullopt;
  }
  RankedTensorType xType = ctx.type(inputName(*even, 0).str());
  RankedTensorType out = ctx.type(rot);
  if (!xType || !out || xType.getRank() != 4 || xType.isDynamicDim(3) ||
      out.getRank() != 4 || out.getDimSize(3) != xType.getDimSize(3))
    return std::nullopt;
  int64_t width = xType.getDimSize(3);
  auto e = ctx.slice(*even), o = ctx.slice(*odd);
  if (width % 2 != 0 || !e || !o || e->axis != 3 || o->axis != 3 ||
      e->step != 2 || o->step != 2 || e->start != 0 || o->start != 1 ||
      e->end < width - 1 || o->end < width)
    return std::nullopt;
  return Rotation{inputName(*even, 0).str(),
                  {reshape, cat, u0, u1, neg, odd, even}};
}

/// Add(Mul(x, C), Mul(rot(x), S)) in any operand order.
Value raiseRopeAdd(RaiseContext &ctx, bool interleaved) {
  const onnx::NodeProto &add = ctx.anchor();
  for (unsigned order = 0; order < 2; ++order) {
    const onnx::NodeProto *rotMul =
        ctx.def(inputName(add, 1 - order).str(), "Mul");
    if (!rotMul)
      continue;
    for (unsigned side = 0; side < 2; ++side) {
      std::optional<Rotation> rot =
          interleaved ? rotateInterleaved(ctx, inputName(*rotMul, side).str())
                      : rotateHalf(ctx, inputName(*rotMul, side).str());
      if (!rot)
        continue;
      RankedTensorType xType = ctx.type(rot->x);
      std::string sin = inputName(*rotMul, 1 - side).str();
      auto cosMul = mulWith(ctx, inputName(add, order).str(), rot->x);
      if (!cosMul || !isTable(ctx, cosMul->second, xType) ||
          !isTable(ctx, sin, xType) ||
          ctx.type(cosMul->second) != ctx.type(sin))
        continue;
      OpBuilder &b = ctx.builder();
      Location loc = ctx.getLoc();
      Value rope = RopeTablesOp::create(
          b, loc, xType, ctx.value(rot->x),
          tableOperand(b, loc, ctx.value(cosMul->second)),
          tableOperand(b, loc, ctx.value(sin)),
          interleaved ? b.getUnitAttr() : UnitAttr());
      for (const onnx::NodeProto *n : rot->nodes)
        ctx.cover(n);
      ctx.cover(rotMul);
      ctx.cover(ctx.def(inputName(add, order), "Mul"));
      return rope;
    }
  }
  return {};
}

} // namespace

Value mlir::mnemo::onnx_import::raiseRopeRotateHalf(RaiseContext &ctx) {
  return raiseRopeAdd(ctx, /*interleaved=*/false);
}

Value mlir::mnemo::onnx_import::raiseRopeInterleaved(RaiseContext &ctx) {
  return raiseRopeAdd(ctx, /*interleaved=*/true);
}

Value mlir::mnemo::onnx_import::raiseRopeSplitHalves(RaiseContext &ctx) {
  const onnx::NodeProto &cat = ctx.anchor();
  int64_t axis = ctx.intAttr(cat, "axis", 0);
  if (cat.input_size() != 2 || (axis != -1 && axis != 3))
    return {};
  const onnx::NodeProto *sub = ctx.def(inputName(cat, 0), "Sub");
  const onnx::NodeProto *add = ctx.def(inputName(cat, 1), "Add");
  if (!sub || !add)
    return {};
  const onnx::NodeProto *first = ctx.def(inputName(*sub, 0).str(), "Mul");
  const onnx::NodeProto *second = ctx.def(inputName(*sub, 1).str(), "Mul");
  if (!first || !second)
    return {};
  // sub = a*C - b*S, add = b*C + a*S (each product in either order).
  for (unsigned i = 0; i < 2; ++i) {
    std::string a = inputName(*first, i).str(),
                c = inputName(*first, 1 - i).str();
    for (unsigned j = 0; j < 2; ++j) {
      std::string bName = inputName(*second, j).str(),
                  s = inputName(*second, 1 - j).str();
      RankedTensorType aType = ctx.type(a), bType = ctx.type(bName);
      if (!aType || aType != bType || aType.getRank() != 4 ||
          aType.isDynamicDim(3) || !isTable(ctx, c, aType) ||
          !isTable(ctx, s, aType) || ctx.type(c) != ctx.type(s))
        continue;
      auto bc0 = mulWith(ctx, inputName(*add, 0).str(), bName);
      auto as1 = mulWith(ctx, inputName(*add, 1).str(), a);
      auto bc1 = mulWith(ctx, inputName(*add, 1).str(), bName);
      auto as0 = mulWith(ctx, inputName(*add, 0).str(), a);
      bool ok = (bc0 && bc0->second == c && as1 && as1->second == s) ||
                (bc1 && bc1->second == c && as0 && as0->second == s);
      if (!ok)
        continue;
      OpBuilder &b = ctx.builder();
      Location loc = ctx.getLoc();
      Value cv = ctx.value(c), sv = ctx.value(s);
      Value x = concatValues(b, loc, {ctx.value(a), ctx.value(bName)}, 3);
      int64_t tableAxis = cast<RankedTensorType>(cv.getType()).getRank() - 1;
      Value rope = emitRope(ctx, x, concatValues(b, loc, {cv, cv}, tableAxis),
                            concatValues(b, loc, {sv, sv}, tableAxis));
      for (const onnx::NodeProto *n :
           {sub, add, first, second, ctx.def(inputName(*add, 0).str(), "Mul"),
            ctx.def(inputName(*add, 1).str(), "Mul")})
        ctx.cover(n);
      return rope;
    }
  }
  return {};
}

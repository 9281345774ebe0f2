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
  if (mul->input(0) == known)
    return std::make_pair(mul->input(0), mul->input(1));
  if (mul->input(1) == known)
    return std::make_pair(mul->input(1), mul->input(0));
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

Value mlir::mnemo::onnx_import::raiseRopeRotateHalf(RaiseContext &ctx) {
  const onnx::NodeProto &add = ctx.anchor();
  for (unsigned order = 0; order < 2; ++order) {
    // Mul(rotated, S) with rotated = Concat(Neg(x2), x1).
    const onnx::NodeProto *rotMul = ctx.def(add.input(1 - order), "Mul");
    if (!rotMul)
      continue;
    for (unsigned side = 0; side < 2; ++side) {
      const onnx::NodeProto *cat = ctx.def(rotMul->input(side), "Concat");
      if (!cat || cat->input_size() != 2)
        continue;
      const onnx::NodeProto *neg = ctx.def(cat->input(0), "Neg");
      const onnx::NodeProto *hi = neg ? ctx.def(neg->input(0), "Slice")
                                      : nullptr;
      const onnx::NodeProto *lo = ctx.def(cat->input(1), "Slice");
      if (!hi || !lo || hi->input(0) != lo->input(0))
        continue;
      std::string x = lo->input(0);
      RankedTensorType xType = ctx.type(x);
      if (!xType || xType.getRank() != 4 || xType.isDynamicDim(3))
        continue;
      int64_t width = xType.getDimSize(3), half = width / 2;
      auto loSpec = ctx.slice(*lo), hiSpec = ctx.slice(*hi);
      if (width % 2 != 0 || !loSpec || !hiSpec || loSpec->axis != 3 ||
          hiSpec->axis != 3 || loSpec->step != 1 || hiSpec->step != 1 ||
          loSpec->start != 0 || loSpec->end != half ||
          hiSpec->start != half || hiSpec->end != width)
        continue;
      int64_t catAxis = ctx.intAttr(*cat, "axis", 0);
      if (catAxis != -1 && catAxis != 3)
        continue;
      std::string sin = rotMul->input(1 - side);
      auto cosMul = mulWith(ctx, add.input(order), x);
      if (!cosMul || !isTable(ctx, cosMul->second, xType) ||
          !isTable(ctx, sin, xType) ||
          ctx.type(cosMul->second) != ctx.type(sin))
        continue;
      Value rope = emitRope(ctx, ctx.value(x), ctx.value(cosMul->second),
                            ctx.value(sin));
      for (const onnx::NodeProto *n :
           {rotMul, cat, neg, hi, lo, ctx.def(add.input(order), "Mul")})
        ctx.cover(n);
      return rope;
    }
  }
  return {};
}

Value mlir::mnemo::onnx_import::raiseRopeSplitHalves(RaiseContext &ctx) {
  const onnx::NodeProto &cat = ctx.anchor();
  int64_t axis = ctx.intAttr(cat, "axis", 0);
  if (cat.input_size() != 2 || (axis != -1 && axis != 3))
    return {};
  const onnx::NodeProto *sub = ctx.def(cat.input(0), "Sub");
  const onnx::NodeProto *add = ctx.def(cat.input(1), "Add");
  if (!sub || !add)
    return {};
  const onnx::NodeProto *first = ctx.def(sub->input(0), "Mul");
  const onnx::NodeProto *second = ctx.def(sub->input(1), "Mul");
  if (!first || !second)
    return {};
  // sub = a*C - b*S, add = b*C + a*S (each product in either order).
  for (unsigned i = 0; i < 2; ++i) {
    std::string a = first->input(i), c = first->input(1 - i);
    for (unsigned j = 0; j < 2; ++j) {
      std::string bName = second->input(j), s = second->input(1 - j);
      RankedTensorType aType = ctx.type(a), bType = ctx.type(bName);
      if (!aType || aType != bType || aType.getRank() != 4 ||
          aType.isDynamicDim(3) || !isTable(ctx, c, aType) ||
          !isTable(ctx, s, aType) || ctx.type(c) != ctx.type(s))
        continue;
      auto bc0 = mulWith(ctx, add->input(0), bName);
      auto as1 = mulWith(ctx, add->input(1), a);
      auto bc1 = mulWith(ctx, add->input(1), bName);
      auto as0 = mulWith(ctx, add->input(0), a);
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
           {sub, add, first, second, ctx.def(add->input(0), "Mul"),
            ctx.def(add->input(1), "Mul")})
        ctx.cover(n);
      return rope;
    }
  }
  return {};
}

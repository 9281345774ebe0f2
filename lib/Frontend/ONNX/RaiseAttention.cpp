//===- RaiseAttention.cpp - MatMul/Softmax/MatMul to mnemo.attention ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The attention exporters write out:
//
//   O = MatMul(Softmax(Add(Mul(MatMul(Q, Kt), scale), mask), axis=-1), V)
//
// with the scale as Mul or Div by a scalar (or split over Q and Kt), the mask
// added or applied with Where, Kt a Transpose of K, and, for GQA, K and V
// repeated to the query heads with Unsqueeze/Expand/Reshape (Hugging Face's
// repeat_kv). The pattern anchors on the last MatMul, walks up, and emits one
// mnemo.attention on the unrepeated K and V. A constant mask that is exactly
// causal (or a causal sliding window) becomes the `causal`/`window`
// attributes, so the tiled kernel skips the hidden tiles; any other mask is
// kept as the additive mask operand.
//
//===----------------------------------------------------------------------===//

#include "Raising.h"

#include "dialects/Mnemo/IR/MnemoOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {

SmallVector<int64_t> permAttr(const onnx::NodeProto &node, int64_t rank) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == "perm")
      return SmallVector<int64_t>(a.ints().begin(), a.ints().end());
  SmallVector<int64_t> reversed;
  for (int64_t i = rank - 1; i >= 0; --i)
    reversed.push_back(i);
  return reversed;
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (int64_t(i) != p)
      return false;
  return true;
}

/// A K or V operand: the tensor named `name`, read through `perm` (none
/// when empty).
struct Operand {
  std::string name;
  SmallVector<int64_t> perm;
};

/// The [B, Hkv, S, D] tensor behind Hugging Face's repeat_kv:
/// Reshape(Expand(Unsqueeze(x, axes=[2]), [B, Hkv, G, S, D]),
///         [B, Hkv*G, S, D]); `name` itself when it is not one.
std::string unrepeatKV(RaiseContext &ctx, const std::string &name) {
  const onnx::NodeProto *reshape = ctx.def(name, "Reshape");
  const onnx::NodeProto *expand =
      reshape ? ctx.def(inputName(*reshape, 0).str(), "Expand") : nullptr;
  const onnx::NodeProto *unsqueeze =
      expand ? ctx.def(inputName(*expand, 0).str(), "Unsqueeze") : nullptr;
  if (!unsqueeze)
    return name;
  auto axes = ctx.intsOperand(*unsqueeze, "axes", 1, 13);
  if (!axes || axes->size() != 1 || ((*axes)[0] != 2 && (*axes)[0] != -3))
    return name;
  RankedTensorType base = ctx.type(inputName(*unsqueeze, 0).str());
  RankedTensorType mid = ctx.type(expand->output(0));
  RankedTensorType out = ctx.type(name);
  if (!base || !mid || !out || base.getRank() != 4 || mid.getRank() != 5 ||
      out.getRank() != 4)
    return name;
  auto same = [](int64_t a, int64_t b) {
    return a == b && !ShapedType::isDynamic(a);
  };
  if (!same(mid.getDimSize(1), base.getDimSize(1)) ||
      ShapedType::isDynamic(mid.getDimSize(2)) ||
      !same(out.getDimSize(1), mid.getDimSize(1) * mid.getDimSize(2)) ||
      mid.getDimSize(0) != base.getDimSize(0) ||
      mid.getDimSize(3) != base.getDimSize(2) ||
      !same(mid.getDimSize(4), base.getDimSize(3)) ||
      out.getDimSize(2) != base.getDimSize(2) ||
      out.getDimSize(3) != base.getDimSize(3))
    return name;
  ctx.cover(reshape);
  ctx.cover(expand);
  ctx.cover(unsqueeze);
  return inputName(*unsqueeze, 0).str();
}

/// K [B, H, Skv, D] from the score MatMul's right operand Kt [B, H, D, Skv].
Operand keyFromTransposed(RaiseContext &ctx, const std::string &kt) {
  const SmallVector<int64_t> swap = {0, 1, 3, 2};
  const onnx::NodeProto *t = ctx.def(kt, "Transpose");
  RankedTensorType type =
      t ? ctx.type(inputName(*t, 0).str()) : RankedTensorType();
  if (!t || !type || type.getRank() != 4)
    return {kt, swap};
  SmallVector<int64_t> perm = permAttr(*t, 4), composed;
  if (perm.size() != 4)
    return {kt, swap};
  for (int64_t i : swap)
    composed.push_back(perm[i]);
  ctx.cover(t);
  if (isIdentity(composed))
    return {inputName(*t, 0).str(), {}};
  return {inputName(*t, 0).str(), composed};
}

/// The matched subgraph.
struct Match {
  std::string q, mask;
  Operand k, v;
  double scale = 1.0;
  DenseElementsAttr whereMask; // additive mask made from a constant Where
};

/// Peels scalar Mul/Div factors off `name` into `scale`.
std::string peelScale(RaiseContext &ctx, std::string name, double &scale) {
  while (true) {
    if (const onnx::NodeProto *mul = ctx.def(name, "Mul")) {
      std::optional<double> c = ctx.scalar(inputName(*mul, 1).str());
      unsigned other = 0;
      if (!c) {
        c = ctx.scalar(inputName(*mul, 0).str());
        other = 1;
      }
      if (!c)
        return name;
      scale *= *c;
      ctx.cover(mul);
      name = inputName(*mul, other).str();
      continue;
    }
    if (const onnx::NodeProto *div = ctx.def(name, "Div")) {
      std::optional<double> c = ctx.scalar(inputName(*div, 1).str());
      if (!c || *c == 0.0)
        return name;
      scale /= *c;
      ctx.cover(div);
      name = inputName(*div, 0).str();
      continue;
    }
    return name;
  }
}

/// Whether `name` is (scalar factors of) a rank-4 MatMul: the scores.
bool isScores(RaiseContext &ctx, const std::string &name) {
  double ignored = 1.0;
  RaiseContext probe = ctx; // peeling records covered nodes; use a copy
  std::string base = peelScale(probe, name, ignored);
  RankedTensorType t = ctx.type(base);
  return ctx.def(base, "MatMul") && t && t.getRank() == 4;
}

/// An additive mask from Where(cond, scores, fill) with a constant boolean
/// `cond` and scalar `fill` (or Where(cond, fill, scores)).
DenseElementsAttr whereToAdditive(RaiseContext &ctx,
                                  const onnx::NodeProto &where,
                                  std::string &scores) {
  DenseElementsAttr cond = ctx.constant(inputName(where, 0));
  if (!cond || !cond.getElementType().isInteger(1))
    return {};
  bool keepWhenTrue;
  std::optional<double> fill;
  if ((fill = ctx.scalar(inputName(where, 2)))) {
    keepWhenTrue = true;
    scores = inputName(where, 1);
  } else if ((fill = ctx.scalar(inputName(where, 1)))) {
    keepWhenTrue = false;
    scores = inputName(where, 2);
  } else {
    return {};
  }
  SmallVector<float> values;
  for (bool c : cond.getValues<bool>())
    values.push_back(c == keepWhenTrue ? 0.0f : float(*fill));
  auto type = RankedTensorType::get(
      cast<RankedTensorType>(cond.getType()).getShape(),
      Float32Type::get(cond.getContext()));
  return DenseElementsAttr::get(type, ArrayRef<float>(values));
}

std::optional<Match> match(RaiseContext &ctx) {
  const onnx::NodeProto &anchor = ctx.anchor();
  Match m;
  const onnx::NodeProto *softmax = ctx.def(inputName(anchor, 0), "Softmax");
  RankedTensorType probs = ctx.type(inputName(anchor, 0));
  if (!softmax || !probs || probs.getRank() != 4)
    return std::nullopt;
  int64_t axis = ctx.intAttr(*softmax, "axis", -1);
  if (axis != -1 && axis != 3)
    return std::nullopt;
  ctx.cover(softmax);

  // Above the softmax: at most one mask, then scalar factors, then Q·Kt.
  std::string s = inputName(*softmax, 0).str();
  if (const onnx::NodeProto *add = ctx.def(s, "Add")) {
    unsigned scoreSide = isScores(ctx, inputName(*add, 0).str()) ? 0 : 1;
    if (!isScores(ctx, inputName(*add, scoreSide).str()))
      return std::nullopt;
    m.mask = inputName(*add, 1 - scoreSide).str();
    s = inputName(*add, scoreSide).str();
    ctx.cover(add);
  } else if (const onnx::NodeProto *where = ctx.def(s, "Where")) {
    std::string scores;
    m.whereMask = whereToAdditive(ctx, *where, scores);
    if (!m.whereMask || !isScores(ctx, scores))
      return std::nullopt;
    s = scores;
    ctx.cover(where);
  }
  s = peelScale(ctx, s, m.scale);
  const onnx::NodeProto *qk = ctx.def(s, "MatMul");
  if (!qk)
    return std::nullopt;
  ctx.cover(qk);
  m.q = peelScale(ctx, inputName(*qk, 0).str(), m.scale);
  std::string kt = peelScale(ctx, inputName(*qk, 1).str(), m.scale);
  m.k = keyFromTransposed(ctx, kt);
  m.v = {inputName(anchor, 1).str(), {}};

  // GQA: both K and V unrepeated, or neither.
  if (m.k.perm.empty()) {
    std::string k = unrepeatKV(ctx, m.k.name);
    std::string v = unrepeatKV(ctx, m.v.name);
    if (k != m.k.name && v != m.v.name) {
      m.k.name = k;
      m.v.name = v;
    }
  }
  return m;
}

/// For a constant mask that is exactly causal, with an optional sliding
/// window, over its last two dims (the same for every leading index), the
/// query offset and window (0 when none); nothing otherwise.
std::optional<std::pair<int64_t, int64_t>>
causalWindow(DenseElementsAttr mask, int64_t sq, int64_t skv) {
  auto type = dyn_cast<RankedTensorType>(mask.getType());
  if (!type || type.getRank() < 2 || !isa<FloatType>(type.getElementType()))
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  if (shape[shape.size() - 2] != sq || shape.back() != skv || skv < sq)
    return std::nullopt;
  int64_t offset = skv - sq;
  SmallVector<float> values;
  for (const APFloat &v : mask.getValues<APFloat>())
    values.push_back(float(v.convertToDouble()));
  auto hidden = [](float v) { return v <= -1e30f; };
  // The window from the last row: its first visible key.
  int64_t plane = sq * skv;
  int64_t lastLo = 0;
  while (lastLo < skv && hidden(values[(sq - 1) * skv + lastLo]))
    ++lastLo;
  int64_t window = lastLo > 0 ? (sq - 1 + offset) - lastLo + 1 : 0;
  for (size_t at = 0; at < values.size(); ++at) {
    int64_t j = int64_t(at % skv), i = int64_t((at / skv) % sq);
    if (values[at] != values[at % plane])
      return std::nullopt;
    bool visible = j <= i + offset && (window == 0 || i + offset - j < window);
    if (visible ? values[at] != 0.0f : !hidden(values[at]))
      return std::nullopt;
  }
  return std::make_pair(offset, window);
}

Value readOperand(OpBuilder &b, Location loc, RaiseContext &ctx,
                  const Operand &o) {
  Value v = ctx.value(o.name);
  if (!v || o.perm.empty())
    return v;
  return transposeValue(b, loc, v, o.perm);
}

} // namespace

Value mlir::mnemo::onnx_import::raiseAttention(RaiseContext &ctx) {
  std::optional<Match> m = match(ctx);
  if (!m)
    return {};
  RankedTensorType qType = ctx.type(m->q), kType = ctx.type(m->k.name),
                   vType = ctx.type(m->v.name);
  if (!qType || !kType || !vType || qType.getRank() != 4 ||
      kType.getRank() != 4 || vType.getRank() != 4)
    return {};
  int64_t sq = qType.getDimSize(2);
  int64_t skv = vType.getDimSize(2);

  // The mask: attributes when constant and causal, else an operand.
  DenseElementsAttr constMask = m->whereMask;
  if (!m->mask.empty()) {
    RankedTensorType maskType = ctx.type(m->mask);
    if (!maskType || maskType.getRank() < 2 ||
        !isa<FloatType>(maskType.getElementType()))
      return {};
    constMask = ctx.constant(m->mask);
  }
  std::optional<std::pair<int64_t, int64_t>> causal;
  if (constMask && !ShapedType::isDynamic(sq) && !ShapedType::isDynamic(skv))
    causal = causalWindow(constMask, sq, skv);

  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  Operation *mark = b.getInsertionBlock()->empty()
                        ? nullptr
                        : &b.getInsertionBlock()->back();
  Value q = ctx.value(m->q);
  Value k = readOperand(b, loc, ctx, m->k);
  Value v = readOperand(b, loc, ctx, m->v);
  Value mask, qOffset;
  if (!causal) {
    if (m->whereMask)
      mask = arith::ConstantOp::create(b, loc, m->whereMask);
    else if (!m->mask.empty())
      mask = ctx.value(m->mask);
  } else if (causal->first != 0) {
    qOffset = arith::ConstantIndexOp::create(b, loc, causal->first);
  }
  auto resultType = RankedTensorType::get(
      {qType.getDimSize(0), qType.getDimSize(1), sq, vType.getDimSize(3)},
      qType.getElementType());
  auto op = AttentionOp::create(
      b, loc, resultType, q, k, v, mask, /*sink=*/Value(), qOffset,
      causal ? b.getUnitAttr() : UnitAttr(),
      causal && causal->second ? b.getI64IntegerAttr(causal->second)
                               : IntegerAttr(),
      b.getF64FloatAttr(m->scale), /*softcap=*/FloatAttr());
  // Shapes that do not form an attention (a MatMul chain that only looks
  // like one): take back what was built, import generically.
  bool valid;
  {
    ScopedDiagnosticHandler quiet(op->getContext(),
                                  [](Diagnostic &) { return success(); });
    valid = succeeded(verify(op, /*verifyRecursively=*/false));
  }
  if (!valid) {
    Block *block = b.getInsertionBlock();
    while (!block->empty() && &block->back() != mark)
      block->back().erase();
    return {};
  }
  return op.getResult();
}

//===- ShapeFolding.cpp - shape computations folded at import ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Exporters compute the shapes they reshape and expand to with small
// integer graphs: Shape -> Gather/Slice/Squeeze/Unsqueeze -> Add/Mul ->
// Concat -> Reshape. The importer evaluates such graphs element by element
// while importing: an element is a constant or, for an extent of a dynamic
// tensor, an index value (tensor.dim and index arithmetic). A fully constant
// result becomes a constant (the legacy exporters' shape chains on static
// models fold away); otherwise the elements are remembered for the shape
// consumers (Reshape, Expand, ConstantOfShape, Range, Slice) and the tensor
// is also materialized for any other user.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::mnemo::onnx_import;

namespace {

/// Integer constants up to this size are folded element by element.
constexpr int64_t kMaxElements = 4096;

using Elements = SmallVector<OpFoldResult>;

/// Integer arithmetic on elements, folded when both are constant.
struct ElementMath {
  OpBuilder &b;
  Location loc;

  Value value(OpFoldResult v) {
    return getValueOrCreateConstantIndexOp(b, loc, v);
  }
  template <typename Op>
  OpFoldResult apply(OpFoldResult x, OpFoldResult y,
                     int64_t (*fold)(int64_t, int64_t)) {
    std::optional<int64_t> cx = getConstantIntValue(x),
                           cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(fold(*cx, *cy));
    return Op::create(b, loc, value(x), value(y)).getResult();
  }
};

/// Whether `v` is an extent, or sums and products of extents and
/// non-negative constants: never negative.
bool isNonNegative(OpFoldResult v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c >= 0;
  Operation *def = cast<Value>(v).getDefiningOp();
  if (isa_and_nonnull<tensor::DimOp>(def))
    return true;
  if (isa_and_nonnull<arith::AddIOp, arith::MulIOp, arith::MaxSIOp>(def))
    return llvm::all_of(def->getOperands(), [](Value operand) {
      return isNonNegative(OpFoldResult(operand));
    });
  return false;
}

/// `x pred y` where one side is never negative and the other a negative
/// constant (an exporter comparing extents with -1); nullopt otherwise.
std::optional<bool> compareWithExtent(arith::CmpIPredicate pred,
                                      OpFoldResult x, OpFoldResult y) {
  using P = arith::CmpIPredicate;
  std::optional<int64_t> cx = getConstantIntValue(x),
                         cy = getConstantIntValue(y);
  // Order as (extent, negative constant).
  if (cx && !cy) {
    std::swap(x, y);
    std::swap(cx, cy);
    pred = pred == P::slt   ? P::sgt
           : pred == P::sle ? P::sge
           : pred == P::sgt ? P::slt
           : pred == P::sge ? P::sle
                            : pred;
  }
  if (!cy || *cy >= 0 || !isNonNegative(x))
    return std::nullopt;
  // x >= 0 > y.
  switch (pred) {
  case P::eq:
  case P::slt:
  case P::sle:
    return false;
  case P::ne:
  case P::sgt:
  case P::sge:
    return true;
  default:
    return std::nullopt;
  }
}

} // namespace

bool GraphImporter::foldShape(const onnx::NodeProto &node, OpBuilder &b,
                              Location loc) {
  llvm::StringRef op = node.op_type();
  if (node.output_size() < 1 || node.output(0).empty())
    return false;
  // Elements of input i: a small integer constant or a known tensor.
  auto elementsOf = [&](int i) -> std::optional<Elements> {
    if (i >= node.input_size() || node.input(i).empty())
      return std::nullopt;
    if (const Elements *k = lookupKnown(node.input(i)))
      return *k;
    DenseElementsAttr c = lookupConstant(node.input(i));
    if (!c || !c.getElementType().isInteger() ||
        c.getNumElements() > kMaxElements)
      return std::nullopt;
    Elements out;
    for (int64_t v : toInt64s(c))
      out.push_back(b.getIndexAttr(v));
    return out;
  };
  auto rankOf = [&](int i) -> int64_t {
    if (DenseElementsAttr c = lookupConstant(inputName(node, i)))
      return cast<RankedTensorType>(c.getType()).getRank();
    Value v = values.lookup(inputName(node, i));
    return v ? cast<RankedTensorType>(v.getType()).getRank() : -1;
  };
  auto intAttr = [&](llvm::StringRef name, int64_t otherwise) {
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.name() == name && a.type() == onnx::AttributeProto::INT)
        return int64_t(a.i());
    return otherwise;
  };
  ElementMath math{b, loc};

  // Unsqueeze/Squeeze/Reshape/Identity of a constant of any rank: the same
  // elements under the new shape.
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" ||
      op == "Identity") {
    DenseElementsAttr c = lookupConstant(inputName(node, 0));
    if (c && c.getNumElements() <= kMaxFoldedElements) {
      auto type = cast<RankedTensorType>(c.getType());
      SmallVector<int64_t> shape;
      auto ints = [&](int i, llvm::StringRef attr)
          -> std::optional<SmallVector<int64_t>> {
        if (i < node.input_size() && !inputName(node, i).empty()) {
          DenseElementsAttr a = lookupConstant(inputName(node, i));
          if (!a || !a.getElementType().isInteger())
            return std::nullopt;
          return toInt64s(a);
        }
        for (const onnx::AttributeProto &a : node.attribute())
          if (a.name() == attr)
            return SmallVector<int64_t>(a.ints().begin(), a.ints().end());
        return SmallVector<int64_t>();
      };
      bool ok = true;
      if (op == "Identity") {
        shape.assign(type.getShape());
      } else if (op == "Reshape") {
        std::optional<SmallVector<int64_t>> t = ints(1, "");
        ok = t.has_value();
        int64_t known = 1, inferred = -1;
        for (auto [i, d] : llvm::enumerate(ok ? *t : SmallVector<int64_t>())) {
          if (d == 0 && !intAttr("allowzero", 0) && int64_t(i) < type.getRank())
            d = type.getDimSize(i);
          if (d == -1 && inferred < 0)
            inferred = i;
          else if (d < 0 || llvm::MulOverflow(known, d, known))
            ok = false; // not a shape; the handler reports it
          shape.push_back(d);
        }
        if (ok && inferred >= 0) {
          if (known > 0)
            shape[inferred] = type.getNumElements() / known;
          else
            ok = false;
        }
      } else {
        std::optional<SmallVector<int64_t>> axes = ints(1, "axes");
        ok = axes.has_value();
        int64_t rank = type.getRank() +
                       (op == "Unsqueeze" && ok ? int64_t(axes->size()) : 0);
        SmallVector<bool> marked(rank, false);
        for (int64_t a : ok ? *axes : SmallVector<int64_t>()) {
          a = a < 0 ? a + rank : a;
          if (a < 0 || a >= rank)
            ok = false;
          else
            marked[a] = true;
        }
        for (int64_t i = 0, j = 0; ok && i < rank; ++i) {
          if (op == "Unsqueeze") {
            shape.push_back(marked[i] ? 1 : type.getDimSize(j++));
          } else if (!(marked[i] || (axes->empty() &&
                                     type.getDimSize(i) == 1))) {
            shape.push_back(type.getDimSize(i));
          }
        }
      }
      if (ok) {
        auto result = RankedTensorType::get(shape, type.getElementType());
        if (result.getNumElements() == type.getNumElements())
          return defineConstant(node.output(0), c.reshape(result));
      }
    }
  }

  // Compute the result elements and whether the result is a scalar.
  Elements result;
  bool scalar = false;
  Type element = b.getI64Type();
  if (op == "Shape") {
    Value x = values.lookup(inputName(node, 0));
    if (!x)
      return false; // constants' shapes fold in the Shape handler
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    int64_t start = intAttr("start", 0), end = intAttr("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    bool dynamic = false;
    for (int64_t d = start; d < end; ++d)
      dynamic |= type.isDynamicDim(d);
    if (!dynamic)
      return false;
    OpBuilder::InsertionGuard guard(b);
    for (int64_t d = start; d < end; ++d)
      result.push_back(tensor::getMixedSize(b, loc, x, d));
  } else if (op == "Size") {
    Value x = values.lookup(inputName(node, 0));
    DenseElementsAttr c = lookupConstant(inputName(node, 0));
    OpFoldResult n = b.getIndexAttr(c ? c.getNumElements() : 1);
    if (x)
      for (int64_t d = 0, e = cast<RankedTensorType>(x.getType()).getRank();
           d < e; ++d)
        n = math.apply<arith::MulIOp>(
            n, tensor::getMixedSize(b, loc, x, d),
            [](int64_t p, int64_t q) { return p * q; });
    else if (!c)
      return false;
    result.push_back(n);
    scalar = true;
  } else if (op == "Squeeze" || op == "Unsqueeze" || op == "Identity" ||
             op == "Reshape" || op == "Cast") {
    std::optional<Elements> in = elementsOf(0);
    if (!in || (op == "Unsqueeze" && rankOf(0) != 0))
      return false;
    if (op == "Cast") {
      int64_t to = intAttr("to", 0);
      if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32)
        return false;
      element = to == onnx::TensorProto::INT32 ? b.getI32Type()
                                               : b.getI64Type();
    }
    result = *in;
    // Squeeze of a one-element vector gives a scalar; Unsqueeze and
    // Reshape of a scalar give a vector.
    scalar = op == "Squeeze" ||
             ((op == "Identity" || op == "Cast") && rankOf(0) == 0);
    if (op == "Reshape") {
      // To a scalar or a vector only.
      std::optional<Elements> shape = elementsOf(1);
      if (!shape || shape->size() > 1)
        return false;
      scalar = shape->empty();
    }
    if (scalar && result.size() != 1)
      return false;
  } else if (op == "Concat") {
    for (int i = 0; i < node.input_size(); ++i) {
      std::optional<Elements> in = elementsOf(i);
      if (!in || rankOf(i) != 1)
        return false;
      result.append(*in);
    }
  } else if (op == "Gather") {
    std::optional<Elements> data = elementsOf(0);
    DenseElementsAttr idx = lookupConstant(inputName(node, 1));
    if (!data || rankOf(0) != 1 || intAttr("axis", 0) != 0 || !idx ||
        !idx.getElementType().isInteger() ||
        cast<RankedTensorType>(idx.getType()).getRank() > 1)
      return false;
    for (int64_t i : toInt64s(idx)) {
      if (i < 0)
        i += data->size();
      if (i < 0 || i >= int64_t(data->size()))
        return false;
      result.push_back((*data)[i]);
    }
    scalar = cast<RankedTensorType>(idx.getType()).getRank() == 0;
  } else if (op == "Slice") {
    std::optional<Elements> data = elementsOf(0);
    DenseElementsAttr starts = lookupConstant(inputName(node, 1));
    DenseElementsAttr ends = lookupConstant(inputName(node, 2));
    // One integer each (a one-dimensional slice).
    auto isOneInt = [](DenseElementsAttr c) {
      return c && c.getElementType().isInteger() && c.getNumElements() == 1;
    };
    if (!data || rankOf(0) != 1 || !isOneInt(starts) || !isOneInt(ends))
      return false;
    int64_t n = data->size();
    int64_t step = 1;
    if (node.input_size() > 4 && !inputName(node, 4).empty()) {
      DenseElementsAttr steps = lookupConstant(inputName(node, 4));
      if (!isOneInt(steps))
        return false;
      step = toInt64s(steps)[0];
    }
    int64_t s = toInt64s(starts)[0], e = toInt64s(ends)[0];
    if (step <= 0)
      return false;
    s = std::clamp<int64_t>(s < 0 ? s + n : s, 0, n);
    e = std::clamp<int64_t>(e < 0 ? e + n : e, 0, n);
    for (int64_t i = s; i < e; i += step)
      result.push_back((*data)[i]);
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
             op == "Max" || op == "Min" || op == "Mod") {
    if (node.input_size() != 2)
      return false;
    std::optional<Elements> x = elementsOf(0), y = elementsOf(1);
    // Empty operands are left to the handlers (they broadcast to empty).
    if (!x || !y || x->empty() || y->empty() || rankOf(0) > 1 ||
        rankOf(1) > 1 ||
        (x->size() != y->size() && x->size() != 1 && y->size() != 1))
      return false;
    if (DenseElementsAttr c = lookupConstant(inputName(node, 0)))
      element = c.getElementType();
    else if (Value v = values.lookup(inputName(node, 0)))
      element = cast<RankedTensorType>(v.getType()).getElementType();
    if (!element.isInteger())
      return false;
    size_t n = std::max(x->size(), y->size());
    for (size_t i = 0; i < n; ++i) {
      OpFoldResult a = (*x)[x->size() == 1 ? 0 : i];
      OpFoldResult c = (*y)[y->size() == 1 ? 0 : i];
      if (op == "Add")
        result.push_back(math.apply<arith::AddIOp>(
            a, c, [](int64_t p, int64_t q) { return p + q; }));
      else if (op == "Sub")
        result.push_back(math.apply<arith::SubIOp>(
            a, c, [](int64_t p, int64_t q) { return p - q; }));
      else if (op == "Mul")
        result.push_back(math.apply<arith::MulIOp>(
            a, c, [](int64_t p, int64_t q) { return p * q; }));
      else if (op == "Max")
        result.push_back(math.apply<arith::MaxSIOp>(
            a, c, [](int64_t p, int64_t q) { return std::max(p, q); }));
      else if (op == "Min")
        result.push_back(math.apply<arith::MinSIOp>(
            a, c, [](int64_t p, int64_t q) { return std::min(p, q); }));
      else if (op == "Mod") {
        // Constants only (Python-style sign, or C-style with fmod).
        std::optional<int64_t> p = getConstantIntValue(a),
                               q = getConstantIntValue(c);
        if (!p || !q || *q == 0)
          return false;
        int64_t r = *p % *q;
        if (!intAttr("fmod", 0) && r != 0 && ((r < 0) != (*q < 0)))
          r += *q;
        result.push_back(b.getIndexAttr(r));
      }
      else {
        std::optional<int64_t> cc = getConstantIntValue(c);
        if (cc && *cc == 0)
          return false;
        result.push_back(math.apply<arith::FloorDivSIOp>(
            a, c, [](int64_t p, int64_t q) {
              return p / q - ((p % q != 0) && ((p < 0) != (q < 0)));
            }));
      }
    }
    scalar = rankOf(0) == 0 && rankOf(1) == 0;
  } else if (op == "Equal" || op == "Less" || op == "Greater" ||
             op == "LessOrEqual" || op == "GreaterOrEqual" || op == "And" ||
             op == "Or" || op == "Not" || op == "Where") {
    // Logic on shape elements (exporters' GQA and -1 handling): folded
    // where the elements are constant, or where an extent (never negative)
    // is compared with a negative constant, else computed on index values
    // (a boolean is 0 or 1).
    int arity = op == "Not" ? 1 : op == "Where" ? 3 : 2;
    if (node.input_size() != arity)
      return false;
    SmallVector<Elements> in;
    size_t n = 1;
    for (int i = 0; i < node.input_size(); ++i) {
      std::optional<Elements> e = elementsOf(i);
      if (!e || e->empty() || rankOf(i) > 1)
        return false;
      if (e->size() != 1 && n != 1 && e->size() != n)
        return false;
      n = std::max(n, e->size());
      in.push_back(*e);
    }
    auto at = [&](int i, size_t k) { return in[i][in[i].size() == 1 ? 0 : k]; };
    scalar = true;
    for (int i = 0; i < node.input_size(); ++i)
      scalar &= rankOf(i) == 0;
    element = b.getI1Type();
    if (op == "Where") {
      if (DenseElementsAttr c = lookupConstant(inputName(node, 1)))
        element = c.getElementType();
      else if (Value v = values.lookup(inputName(node, 1)))
        element = cast<RankedTensorType>(v.getType()).getElementType();
      if (!element.isInteger() || element.isInteger(1))
        return false;
    }
    using P = arith::CmpIPredicate;
    P pred = op == "Equal"         ? P::eq
             : op == "Less"        ? P::slt
             : op == "Greater"     ? P::sgt
             : op == "LessOrEqual" ? P::sle
                                   : P::sge;
    for (size_t k = 0; k < n; ++k) {
      SmallVector<std::optional<int64_t>> c;
      for (int i = 0; i < node.input_size(); ++i)
        c.push_back(getConstantIntValue(at(i, k)));
      if (llvm::all_of(c, [](auto v) { return v.has_value(); })) {
        int64_t r;
        if (op == "And")
          r = *c[0] && *c[1];
        else if (op == "Or")
          r = *c[0] || *c[1];
        else if (op == "Not")
          r = !*c[0];
        else if (op == "Where")
          r = *c[0] ? *c[1] : *c[2];
        else
          r = arith::applyCmpPredicate(pred, APInt(64, *c[0], true),
                                       APInt(64, *c[1], true));
        result.push_back(b.getIndexAttr(r));
        continue;
      }
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      auto v = [&](int i) { return math.value(at(i, k)); };
      auto truth = [&](Value cond) {
        return arith::CmpIOp::create(b, loc, P::ne, cond, zero).getResult();
      };
      if (op == "And")
        result.push_back(arith::AndIOp::create(b, loc, v(0), v(1)).getResult());
      else if (op == "Or")
        result.push_back(arith::OrIOp::create(b, loc, v(0), v(1)).getResult());
      else if (op == "Not")
        result.push_back(arith::XOrIOp::create(b, loc, v(0), one).getResult());
      else if (op == "Where")
        result.push_back(
            c[0] ? at(*c[0] ? 1 : 2, k)
                 : OpFoldResult(arith::SelectOp::create(b, loc, truth(v(0)),
                                                        v(1), v(2))
                                    .getResult()));
      else if (std::optional<bool> known = compareWithExtent(
                   pred, at(0, k), at(1, k)))
        result.push_back(b.getIndexAttr(*known));
      else
        result.push_back(
            arith::SelectOp::create(
                b, loc, arith::CmpIOp::create(b, loc, pred, v(0), v(1)), one,
                zero)
                .getResult());
    }
  } else {
    return false;
  }

  // A constant when every element is, else known elements + a tensor.
  SmallVector<int64_t> shape;
  if (!scalar)
    shape.push_back(result.size());
  auto type = RankedTensorType::get(shape, element);
  if (llvm::all_of(result, [](OpFoldResult r) {
        return getConstantIntValue(r).has_value();
      })) {
    SmallVector<APInt> ints;
    for (OpFoldResult r : result)
      ints.push_back(APInt(element.getIntOrFloatBitWidth(),
                           *getConstantIntValue(r), /*isSigned=*/true));
    return defineConstant(node.output(0), DenseElementsAttr::get(type, ints));
  }
  SmallVector<Value> scalars;
  for (OpFoldResult r : result)
    scalars.push_back(arith::IndexCastOp::create(b, loc, element,
                                                 math.value(r)));
  // A few elements are computed by a generic without inputs (each picks its
  // scalar by index), which a GPU target runs as a kernel; a
  // tensor.from_elements would store them from the host.
  Value tensor;
  if (scalars.size() <= 8) {
    // A scalar is built as one element, then viewed as rank 0 (a rank-0
    // generic has no loop to run as a kernel).
    auto vector = RankedTensorType::get({int64_t(scalars.size())}, element);
    Value init = tensor::EmptyOp::create(b, loc, vector.getShape(), element);
    tensor =
        linalg::GenericOp::create(
            b, loc, vector, ValueRange{}, ValueRange{init},
            ArrayRef<AffineMap>{
                AffineMap::getMultiDimIdentityMap(1, b.getContext())},
            SmallVector<utils::IteratorType>(1, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nl, ValueRange) {
              Value picked = scalars.back();
              Value i = linalg::IndexOp::create(nb, nl, 0);
              for (int64_t k = int64_t(scalars.size()) - 2; k >= 0; --k)
                picked = arith::SelectOp::create(
                    nb, nl,
                    arith::CmpIOp::create(
                        nb, nl, arith::CmpIPredicate::eq, i,
                        arith::ConstantIndexOp::create(nb, nl, k)),
                    scalars[k], picked);
              linalg::YieldOp::create(nb, nl, picked);
            })
            .getResult(0);
    if (scalar)
      tensor = tensor::CollapseShapeOp::create(
          b, loc, type, tensor, SmallVector<ReassociationIndices>{});
  } else {
    tensor = tensor::FromElementsOp::create(b, loc, type, scalars);
  }
  defineKnown(node.output(0), result);
  return define(node.output(0), tensor);
}

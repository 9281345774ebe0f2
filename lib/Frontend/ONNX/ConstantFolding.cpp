//===- ConstantFolding.cpp - constant subgraphs evaluated at import -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Exporters of static-shape models often compute attention masks in the
// graph from constants: Range -> Unsqueeze -> Less/Greater -> And -> Where,
// or Trilu over a ConstantOfShape, then Cast and Expand. The importer
// evaluates such nodes when every input is a constant, so that the mask
// reaches the attention raising pattern as a constant and is recognized as
// causal (or a causal sliding window) instead of being read from memory.
//
// Elements are evaluated in double precision and rounded once to the result
// type: exact for integers up to 2^53 and for booleans, and correctly rounded
// for one addition, subtraction or multiplication of two float32 (or
// narrower) operands. Nodes the evaluation could get wrong are left to the
// generic ops: integers beyond 2^53, 8- and 16-bit integers (whose ONNX
// signedness the constant no longer records), casts of non-finite or
// out-of-range floats to integers, and results over kMaxFoldedElements.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mnemo::onnx_import;

namespace {

/// A constant as doubles in row-major order under its shape.
struct Array {
  SmallVector<int64_t> shape;
  std::vector<double> data;
  Type element;
};

/// Integers whose magnitude a double holds exactly.
constexpr int64_t kMaxExactInteger = int64_t(1) << 53;

/// The elements of `c` as doubles, or nothing when they would not be exact
/// (see the file comment).
std::optional<Array> toArray(DenseElementsAttr c) {
  auto type = cast<RankedTensorType>(c.getType());
  Array a{SmallVector<int64_t>(type.getShape()), {}, type.getElementType()};
  a.data.reserve(c.getNumElements());
  if (isa<FloatType>(a.element)) {
    for (const APFloat &v : c.getValues<APFloat>())
      a.data.push_back(v.convertToDouble());
  } else if (a.element.isInteger(1)) {
    for (bool v : c.getValues<bool>())
      a.data.push_back(v ? 1.0 : 0.0);
  } else if (a.element.isInteger(32) || a.element.isInteger(64)) {
    for (const APInt &v : c.getValues<APInt>()) {
      int64_t x = v.getSExtValue();
      if (x > kMaxExactInteger || x < -kMaxExactInteger)
        return std::nullopt;
      a.data.push_back(double(x));
    }
  } else {
    return std::nullopt;
  }
  return a;
}

/// The number of elements of `shape`, or nothing when it exceeds the
/// folding limit (checked before each multiplication: no overflow).
std::optional<int64_t> foldableCount(ArrayRef<int64_t> shape) {
  int64_t total = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxFoldedElements)
      return std::nullopt;
    if (d != 0 && total > kMaxFoldedElements / d)
      return std::nullopt;
    total *= d;
  }
  return total;
}

/// `data` (row-major under `shape`) as a constant of `element`s.
DenseElementsAttr toAttr(ArrayRef<int64_t> shape, ArrayRef<double> data,
                         Type element) {
  auto type = RankedTensorType::get(shape, element);
  if (auto f = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    values.reserve(data.size());
    for (double v : data) {
      APFloat x(v);
      bool lost;
      x.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(x);
    }
    return DenseElementsAttr::get(type, values);
  }
  if (element.isInteger(1)) {
    SmallVector<bool> values;
    for (double v : data)
      values.push_back(v != 0.0);
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  values.reserve(data.size());
  for (double v : data)
    values.push_back(APInt(width, uint64_t(int64_t(v)), /*isSigned=*/true,
                           /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, values);
}

/// Evaluates `f` over the numpy broadcast of `inputs`; nothing when they do
/// not broadcast or the result is too large to fold.
std::optional<std::vector<double>>
broadcastMap(ArrayRef<const Array *> inputs, SmallVector<int64_t> &shape,
             llvm::function_ref<double(ArrayRef<double>)> f) {
  shape.clear();
  for (const Array *a : inputs) {
    FailureOr<SmallVector<int64_t>> s = broadcastShapes(shape, a->shape);
    if (failed(s))
      return std::nullopt;
    shape = *s;
  }
  std::optional<int64_t> count = foldableCount(shape);
  if (!count)
    return std::nullopt;
  int64_t total = *count;
  // An empty result reads nothing (and its inputs' other dims, each within
  // the fold limit, could multiply past int64 in the strides below).
  if (total == 0)
    return std::vector<double>();
  size_t rank = shape.size();
  // Per input, the stride of each result dim (0 where broadcast).
  SmallVector<SmallVector<int64_t>> strides;
  for (const Array *a : inputs) {
    SmallVector<int64_t> s(rank, 0);
    int64_t stride = 1;
    for (size_t d = 0; d < a->shape.size(); ++d) {
      size_t from = a->shape.size() - 1 - d, to = rank - 1 - d;
      s[to] = a->shape[from] == 1 ? 0 : stride;
      stride *= a->shape[from];
    }
    strides.push_back(std::move(s));
  }
  std::vector<double> out(total);
  SmallVector<int64_t> index(rank, 0);
  SmallVector<double> args(inputs.size());
  for (int64_t at = 0; at < total; ++at) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d)
        offset += index[d] * strides[i][d];
      args[i] = inputs[i]->data[offset];
    }
    out[at] = f(args);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// The scalar function of an elementwise op, or null.
using Scalar = double (*)(ArrayRef<double>);
Scalar elementwise(llvm::StringRef op, bool isFloat) {
  return llvm::StringSwitch<Scalar>(op)
      .Case("Add", [](ArrayRef<double> a) { return a[0] + a[1]; })
      .Case("Sub", [](ArrayRef<double> a) { return a[0] - a[1]; })
      .Case("Mul", [](ArrayRef<double> a) { return a[0] * a[1]; })
      .Case("Div", isFloat ? +[](ArrayRef<double> a) { return a[0] / a[1]; }
                           : nullptr)
      .Case("Neg", [](ArrayRef<double> a) { return -a[0]; })
      .Case("Equal", [](ArrayRef<double> a) { return double(a[0] == a[1]); })
      .Case("Less", [](ArrayRef<double> a) { return double(a[0] < a[1]); })
      .Case("LessOrEqual",
            [](ArrayRef<double> a) { return double(a[0] <= a[1]); })
      .Case("Greater", [](ArrayRef<double> a) { return double(a[0] > a[1]); })
      .Case("GreaterOrEqual",
            [](ArrayRef<double> a) { return double(a[0] >= a[1]); })
      .Case("And",
            [](ArrayRef<double> a) { return double(a[0] != 0 && a[1] != 0); })
      .Case("Or",
            [](ArrayRef<double> a) { return double(a[0] != 0 || a[1] != 0); })
      .Case("Xor", [](ArrayRef<double> a) {
        return double((a[0] != 0) != (a[1] != 0));
      })
      .Case("Not", [](ArrayRef<double> a) { return double(a[0] == 0); })
      .Case("Where",
            [](ArrayRef<double> a) { return a[0] != 0 ? a[1] : a[2]; })
      .Default(nullptr);
}

bool isComparison(llvm::StringRef op) {
  return llvm::is_contained({"Equal", "Less", "LessOrEqual", "Greater",
                             "GreaterOrEqual", "And", "Or", "Xor", "Not"},
                            op);
}

} // namespace

bool GraphImporter::foldConstants(const onnx::NodeProto &node) {
  llvm::StringRef op = node.op_type();
  if (node.output_size() != 1 || node.output(0).empty() ||
      node.input_size() < 1)
    return false;
  SmallVector<Array> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back({});
      continue;
    }
    DenseElementsAttr c = lookupConstant(name);
    if (!c || c.getNumElements() < 0 || c.getNumElements() > kMaxFoldedElements)
      return false;
    std::optional<Array> a = toArray(c);
    if (!a)
      return false;
    inputs.push_back(std::move(*a));
  }
  auto intAttr = [&](llvm::StringRef name, int64_t otherwise) {
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.name() == name && a.type() == onnx::AttributeProto::INT)
        return int64_t(a.i());
    return otherwise;
  };
  auto define = [&](ArrayRef<int64_t> shape, ArrayRef<double> data,
                    Type element) {
    // Integer results a double may not have held exactly stay unfolded.
    if (isa<IntegerType>(element) && !element.isInteger(1) &&
        llvm::any_of(data, [](double v) {
          return !(std::fabs(v) <= double(kMaxExactInteger));
        }))
      return false;
    return defineConstant(node.output(0), toAttr(shape, data, element));
  };
  Type first = inputs[0].element;
  if (!first)
    return false;
  SmallVector<int64_t> shape;

  if (Scalar f = elementwise(op, isa<FloatType>(first))) {
    size_t arity = op == "Neg" || op == "Not" ? 1 : op == "Where" ? 3 : 2;
    if (inputs.size() != arity ||
        llvm::any_of(inputs, [](const Array &a) { return !a.element; }))
      return false;
    SmallVector<const Array *> ptrs;
    for (const Array &a : inputs)
      ptrs.push_back(&a);
    std::optional<std::vector<double>> out = broadcastMap(ptrs, shape, f);
    if (!out)
      return false;
    Type element = isComparison(op) ? IntegerType::get(ctx, 1)
                   : op == "Where"  ? inputs[1].element
                                    : first;
    return define(shape, *out, element);
  }
  if (op == "Cast") {
    Type to = convertElementType(ctx, int32_t(intAttr("to", 0)));
    if (!to || !(isa<FloatType>(to) || isa<IntegerType>(to)))
      return false;
    if (!(to.isInteger(1) || to.isInteger(32) || to.isInteger(64) ||
          isa<FloatType>(to)))
      return false;
    std::vector<double> out = inputs[0].data;
    if (!isa<FloatType>(to))
      for (double &v : out) {
        if (to.isInteger(1)) {
          v = double(v != 0);
          continue;
        }
        // Only casts a double represents exactly and the target holds.
        double limit = to.isInteger(32) ? 2147483647.0 : double(kMaxExactInteger);
        if (!std::isfinite(v) || std::fabs(v) > limit)
          return false;
        v = std::trunc(v);
      }
    return define(inputs[0].shape, out, to);
  }
  if (op == "Expand" && inputs.size() == 2 && inputs[1].element) {
    // x broadcast with a zero tensor of the requested shape.
    if (!inputs[1].element.isInteger(64))
      return false;
    Array zeros{{}, {}, first};
    for (double d : inputs[1].data) {
      if (d < 0 || d > double(kMaxFoldedElements))
        return false;
      zeros.shape.push_back(int64_t(d));
    }
    std::optional<int64_t> total = foldableCount(zeros.shape);
    if (!total)
      return false;
    zeros.data.assign(*total, 0.0);
    std::optional<std::vector<double>> out =
        broadcastMap({&inputs[0], &zeros}, shape,
                     [](ArrayRef<double> a) { return a[0]; });
    return out && define(shape, *out, first);
  }
  if (op == "Trilu" && inputs[0].shape.size() >= 2) {
    int64_t k = 0;
    if (inputs.size() > 1 && inputs[1].element) {
      if (inputs[1].data.size() != 1)
        return false;
      k = int64_t(inputs[1].data[0]);
    }
    bool upper = intAttr("upper", 1) != 0;
    ArrayRef<int64_t> s = inputs[0].shape;
    int64_t rows = s[s.size() - 2], cols = s.back();
    std::vector<double> out = inputs[0].data;
    for (size_t at = 0; at < out.size(); ++at) {
      int64_t j = int64_t(at) % cols, i = (int64_t(at) / cols) % rows;
      bool keep = upper ? j - i >= k : j - i <= k;
      if (!keep)
        out[at] = 0.0;
    }
    return define(s, out, first);
  }
  if (op == "Range" && inputs.size() == 3 && isa<FloatType>(first) &&
      llvm::all_of(inputs, [](const Array &a) { return a.data.size() == 1; })) {
    double start = inputs[0].data[0], limit = inputs[1].data[0],
           delta = inputs[2].data[0];
    if (delta == 0.0)
      return false;
    double n = std::max(0.0, std::ceil((limit - start) / delta));
    if (!(n <= double(kMaxFoldedElements)))
      return false;
    std::vector<double> out(static_cast<size_t>(n));
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = start + double(i) * delta;
    return define({int64_t(out.size())}, out, first);
  }
  return false;
}

//===- MnemoOps.cpp - mnemo dialect operations ------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/IR/ShapeChecks.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::shape_checks;

//===----------------------------------------------------------------------===//
// Custom assembly directives
//===----------------------------------------------------------------------===//

/// An enum attribute written as its bare keyword (`out_in`, `absorbed`,
/// `introselect`, `int4`); `expected` lists the keywords for the error.
template <typename AttrT, typename EnumT>
static ParseResult
parseEnumKeyword(OpAsmParser &parser, AttrT &attr,
                 std::optional<EnumT> (*symbolize)(StringRef),
                 StringRef expected) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<EnumT> value = symbolize(keyword);
  if (!value)
    return parser.emitError(loc, "expected ")
           << expected << ", got '" << keyword << "'";
  attr = AttrT::get(parser.getContext(), *value);
  return success();
}

static ParseResult parseWeightLayout(OpAsmParser &parser,
                                     WeightLayoutAttr &layout) {
  return parseEnumKeyword(parser, layout, symbolizeWeightLayout,
                          "weight layout out_in or in_out");
}

static void printWeightLayout(OpAsmPrinter &printer, Operation *,
                              WeightLayoutAttr layout) {
  printer << stringifyWeightLayout(layout.getValue());
}

static ParseResult parseMLAForm(OpAsmParser &parser, MLAFormAttr &form) {
  return parseEnumKeyword(parser, form, symbolizeMLAForm,
                          "MLA form expanded or absorbed");
}

static void printMLAForm(OpAsmPrinter &printer, Operation *,
                         MLAFormAttr form) {
  printer << stringifyMLAForm(form.getValue());
}

static ParseResult parseTopKTies(OpAsmParser &parser, TopKTiesAttr &ties) {
  return parseEnumKeyword(parser, ties, symbolizeTopKTies,
                          "top-k ties lowest_index or introselect");
}

static void printTopKTies(OpAsmPrinter &printer, Operation *,
                          TopKTiesAttr ties) {
  printer << stringifyTopKTies(ties.getValue());
}

static ParseResult parseQuantFormat(OpAsmParser &parser,
                                    QuantFormatAttr &format) {
  return parseEnumKeyword(parser, format, symbolizeQuantFormat,
                          "quantization format int8, int4 or nf4");
}

static void printQuantFormat(OpAsmPrinter &printer, Operation *,
                             QuantFormatAttr format) {
  printer << stringifyQuantFormat(format.getValue());
}

#define GET_OP_CLASSES
#include "dialects/Mnemo/IR/MnemoOps.cpp.inc"

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

double AttentionOp::getEffectiveScale() {
  if (FloatAttr s = getScaleAttr())
    return s.getValueAsDouble();
  return 1.0 / std::sqrt(static_cast<double>(getQuery().getType().getDimSize(3)));
}

int64_t AttentionOp::getGroupSize() {
  return getQuery().getType().getDimSize(1) / getKey().getType().getDimSize(1);
}

std::optional<double> AttentionOp::getSoftcapValue() {
  if (FloatAttr c = getSoftcapAttr())
    return c.getValueAsDouble();
  return std::nullopt;
}

std::optional<int64_t> AttentionOp::getWindowSize() {
  if (IntegerAttr w = getWindowAttr())
    return w.getInt();
  return std::nullopt;
}

LogicalResult AttentionOp::verify() {
  Operation *op = getOperation();
  RankedTensorType q = getQuery().getType(), k = getKey().getType(),
                   v = getValue().getType(), r = getResult().getType();
  if (failed(checkRank(op, q, 4, "query", "[B, Hq, Sq, D]")) ||
      failed(checkRank(op, k, 4, "key", "[B, Hkv, Skv, D]")) ||
      failed(checkRank(op, v, 4, "value", "[B, Hkv, Skv, Dv]")) ||
      failed(checkRank(op, r, 4, "result", "[B, Hq, Sq, Dv]")))
    return failure();
  if (failed(checkStatic(op, q, 1, "query head count")) ||
      failed(checkStatic(op, k, 1, "key/value head count")) ||
      failed(checkStatic(op, q, 3, "query head dim")) ||
      failed(checkStatic(op, v, 3, "value head dim")))
    return failure();
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (hkv == 0 || hq % hkv != 0)
    return emitOpError() << "query heads (" << hq
                         << ") must be a multiple of key/value heads (" << hkv
                         << ")";
  if (failed(checkDim(op, k, 0, q.getDimSize(0), "key batch", "query batch")) ||
      failed(checkDim(op, v, 0, q.getDimSize(0), "value batch",
                      "query batch")) ||
      failed(checkDim(op, v, 1, hkv, "value heads", "key heads")) ||
      failed(checkDim(op, k, 3, q.getDimSize(3), "key head dim",
                      "query head dim")) ||
      failed(checkDim(op, v, 2, k.getDimSize(2), "value length",
                      "key length")))
    return failure();
  if (r.getElementType() != q.getElementType())
    return emitOpError() << "result element type " << r.getElementType()
                         << " must match the query's " << q.getElementType();
  if (failed(checkDim(op, r, 0, q.getDimSize(0), "result batch",
                      "query batch")) ||
      failed(checkDim(op, r, 1, hq, "result heads", "query heads")) ||
      failed(checkDim(op, r, 2, q.getDimSize(2), "result length",
                      "query length")) ||
      failed(checkDim(op, r, 3, v.getDimSize(3), "result head dim",
                      "value head dim")))
    return failure();

  if (failed(checkAttentionOptions(op, getScaleAttr(), getSoftcapAttr(),
                                   getWindowAttr(), getSink(), hq)))
    return failure();
  if (Value mask = getMask()) {
    int64_t full[4] = {q.getDimSize(0), hq, q.getDimSize(2), k.getDimSize(2)};
    if (failed(checkMask(op, mask, full, "Skv")))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// RopeOp
//===----------------------------------------------------------------------===//

int64_t RopeOp::getRotaryDimOrDefault() {
  if (IntegerAttr r = getRotaryDimAttr())
    return r.getInt();
  return getInput().getType().getDimSize(3);
}

RopeScalingAttr RopeOp::getScalingOrDefault() {
  if (std::optional<RopeScalingAttr> s = getScaling())
    return *s;
  return RopeScalingAttr::get(getContext(), RopeScalingKind::None, 1.0, 0);
}

LogicalResult RopeOp::verify() {
  Operation *op = getOperation();
  RankedTensorType x = getInput().getType(), p = getPositions().getType();
  if (failed(checkRank(op, x, 4, "input", "[B, H, S, D]")) ||
      failed(checkStatic(op, x, 3, "head dim")))
    return failure();
  if (getResult().getType() != x)
    return emitOpError() << "result type " << getResult().getType()
                         << " must match the input type " << x;
  if (p.getRank() < 1 || p.getRank() > 2)
    return emitOpError() << "expects positions of shape [B, S], [1, S] or [S], "
                            "got rank "
                         << p.getRank();
  if (failed(checkDim(op, p, p.getRank() - 1, x.getDimSize(2),
                      "positions length", "input length")))
    return failure();
  if (p.getRank() == 2 && p.getDimSize(0) != 1 &&
      failed(checkDim(op, p, 0, x.getDimSize(0), "positions batch",
                      "input batch")))
    return failure();
  if (!(getTheta().convertToDouble() > 0.0))
    return emitOpError() << "theta must be positive, got "
                         << getTheta().convertToDouble();
  int64_t d = x.getDimSize(3);
  int64_t r = getRotaryDimOrDefault();
  if (r <= 0 || r > d)
    return emitOpError() << "rotary dim (" << r << ") must be in [2, " << d
                         << "]";
  if (r % 2 != 0)
    return emitOpError() << "rotary dim must be even, got " << r;
  if (getScalingOrDefault().getKind() == RopeScalingKind::Dynamic && r <= 2)
    return emitOpError() << "dynamic rope scaling needs a rotary dim above 2, "
                            "got "
                         << r;
  return success();
}

//===----------------------------------------------------------------------===//
// RopeTablesOp
//===----------------------------------------------------------------------===//

LogicalResult RopeTablesOp::verify() {
  Operation *op = getOperation();
  RankedTensorType x = getInput().getType(), t = getCos().getType();
  if (failed(checkRank(op, x, 4, "input", "[B, H, S, D]")) ||
      failed(checkStatic(op, x, 3, "head dim")))
    return failure();
  if (getResult().getType() != x)
    return emitOpError() << "result type " << getResult().getType()
                         << " must match the input type " << x;
  if (t.getRank() < 2 || t.getRank() > 3)
    return emitOpError() << "expects cos/sin tables of shape [B, S, r], "
                            "[1, S, r] or [S, r], got rank "
                         << t.getRank();
  unsigned rank = t.getRank();
  if (failed(checkStatic(op, t, rank - 1, "rotary width")))
    return failure();
  if (failed(checkDim(op, t, rank - 2, x.getDimSize(2), "table length",
                      "input length")))
    return failure();
  if (rank == 3 && t.getDimSize(0) != 1 &&
      failed(checkDim(op, t, 0, x.getDimSize(0), "table batch",
                      "input batch")))
    return failure();
  int64_t r = getRotaryDim(), d = x.getDimSize(3);
  if (r <= 0 || r > d || r % 2 != 0)
    return emitOpError() << "rotary width (" << r
                         << ") must be even and in [2, " << d << "]";
  return success();
}

//===----------------------------------------------------------------------===//
// RmsNormOp
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::verify() {
  RankedTensorType x = getInput().getType(), w = getWeight().getType();
  if (x.getRank() < 1)
    return emitOpError() << "expects an input of rank >= 1";
  if (getResult().getType() != x)
    return emitOpError() << "result type " << getResult().getType()
                         << " must match the input type " << x;
  if (w.getRank() != 1)
    return emitOpError() << "expects a weight of rank 1, got rank "
                         << w.getRank();
  if (failed(checkDim(getOperation(), w, 0, x.getDimSize(x.getRank() - 1),
                      "weight size", "the normalized (last) dimension")))
    return failure();
  double eps = getEps().convertToDouble();
  if (!(eps >= 0.0) || !std::isfinite(eps))
    return emitOpError() << "eps must be finite and non-negative, got " << eps;
  return success();
}

//===----------------------------------------------------------------------===//
// SwiGluOp
//===----------------------------------------------------------------------===//

LogicalResult SwiGluOp::verify() {
  return checkSwiGluLimit(getOperation(), getLimitAttr());
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

int64_t LinearOp::getInFeatures() {
  return getWeight().getType().getDimSize(
      getLayout() == WeightLayout::OutIn ? 1 : 0);
}

int64_t LinearOp::getOutFeatures() {
  return getWeight().getType().getDimSize(
      getLayout() == WeightLayout::OutIn ? 0 : 1);
}

LogicalResult LinearOp::verify() {
  Operation *op = getOperation();
  RankedTensorType x = getInput().getType(), w = getWeight().getType(),
                   r = getResult().getType();
  if (x.getRank() < 1)
    return emitOpError() << "expects an input of rank >= 1";
  if (w.getRank() != 2)
    return emitOpError() << "expects a weight of rank 2, got rank "
                         << w.getRank();
  if (failed(checkStatic(op, w, 0, "weight shape")) ||
      failed(checkStatic(op, w, 1, "weight shape")))
    return failure();
  int64_t k = getInFeatures(), n = getOutFeatures();
  StringRef layout = stringifyWeightLayout(getLayout());
  if (!compatible(x.getDimSize(x.getRank() - 1), k))
    return emitOpError() << "input features ("
                         << dimStr(x.getDimSize(x.getRank() - 1))
                         << ") must match the weight's in_features (" << k
                         << ") for layout " << layout;
  if (r.getRank() != x.getRank())
    return emitOpError() << "result rank (" << r.getRank()
                         << ") must match the input rank (" << x.getRank()
                         << ")";
  for (int64_t i = 0; i + 1 < x.getRank(); ++i)
    if (failed(checkDim(op, r, i, x.getDimSize(i),
                        "result dimension " + std::to_string(i),
                        "the input's")))
      return failure();
  if (failed(checkDim(op, r, r.getRank() - 1, n, "result features",
                      "the weight's out_features")))
    return failure();
  if (r.getElementType() != x.getElementType())
    return emitOpError() << "result element type " << r.getElementType()
                         << " must match the input's " << x.getElementType();
  if (Value bias = getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 1 || !compatible(b.getDimSize(0), n))
      return emitOpError() << "expects a bias of shape [" << n << "], got "
                           << b;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  RankedTensorType t = getTable().getType(), ids = getIds().getType(),
                   r = getResult().getType();
  if (t.getRank() != 2)
    return emitOpError() << "expects a table of rank 2 [V, H], got rank "
                         << t.getRank();
  if (r.getRank() != ids.getRank() + 1)
    return emitOpError() << "result rank (" << r.getRank()
                         << ") must be the ids rank plus one ("
                         << ids.getRank() + 1 << ")";
  for (int64_t i = 0; i < ids.getRank(); ++i)
    if (failed(checkDim(getOperation(), r, i, ids.getDimSize(i),
                        "result dimension " + std::to_string(i),
                        "the ids'")))
      return failure();
  return checkDim(getOperation(), r, r.getRank() - 1, t.getDimSize(1),
                  "result hidden size", "the table's");
}

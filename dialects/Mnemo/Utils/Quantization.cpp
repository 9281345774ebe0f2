//===- Quantization.cpp - quantized weights: codes, scales, decode -*- C++ -*-//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Utils/Quantization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/APFloat.h"
#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::quant;

ArrayRef<float> quant::nf4Values() {
  // bitsandbytes' NF4 code book (QLoRA, Appendix E), as float32.
  static const float values[16] = {
      -1.0f,
      -0.6961928009986877f,
      -0.5250730514526367f,
      -0.39491748809814453f,
      -0.28444138169288635f,
      -0.18477343022823334f,
      -0.09105003625154495f,
      0.0f,
      0.07958029955625534f,
      0.16093020141124725f,
      0.24611230194568634f,
      0.33791524171829224f,
      0.44070982933044434f,
      0.5626170039176941f,
      0.7229568362236023f,
      1.0f};
  return values;
}

static int64_t nearestNF4(float x) {
  ArrayRef<float> t = nf4Values();
  int64_t best = 0;
  for (int64_t i = 1; i < 16; ++i)
    if (std::fabs(x - t[i]) < std::fabs(x - t[best]))
      best = i;
  return best;
}

QuantizedMatrix quant::quantize(ArrayRef<float> values, int64_t rows,
                                int64_t cols, QuantFormat format,
                                int64_t group, bool asymmetric,
                                llvm::function_ref<float(float)> roundScale) {
  bool packed = quant::isPacked(format);
  int64_t perRow = packed ? (cols + 1) / 2 : cols;
  int64_t groups = (cols + group - 1) / group;
  QuantizedMatrix m;
  m.codes.assign(rows * perRow, 0);
  m.scales.assign(rows * groups, 0.0f);
  if (asymmetric)
    m.zeros.assign(rows * groups, 0);
  int64_t levels = format == QuantFormat::Int8 ? 255 : 15;
  int64_t half = format == QuantFormat::Int8 ? 127 : 7;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t c0 = g * group, c1 = std::min(cols, c0 + group);
      const float *row = values.data() + r * cols;
      float lo = 0.0f, hi = 0.0f, absmax = 0.0f;
      for (int64_t c = c0; c < c1; ++c) {
        lo = std::min(lo, row[c]);
        hi = std::max(hi, row[c]);
        absmax = std::max(absmax, std::fabs(row[c]));
      }
      float scale;
      if (format == QuantFormat::NF4)
        scale = absmax;
      else if (asymmetric)
        scale = (hi - lo) / float(levels);
      else
        scale = absmax / float(half);
      scale = roundScale(scale);
      int64_t zero = 0;
      if (asymmetric && scale > 0)
        zero = std::clamp<int64_t>(std::lround(-lo / scale), 0, levels);
      m.scales[r * groups + g] = scale;
      if (asymmetric)
        m.zeros[r * groups + g] = uint8_t(zero);
      for (int64_t c = c0; c < c1; ++c) {
        int64_t q;
        float x = scale > 0 ? row[c] / scale : 0.0f;
        if (format == QuantFormat::NF4)
          q = nearestNF4(x);
        else if (asymmetric)
          q = std::clamp<int64_t>(std::lround(x) + zero, 0, levels);
        else
          q = std::clamp<int64_t>(std::lround(x), -half - 1, half);
        int8_t &byte = m.codes[r * perRow + (packed ? c / 2 : c)];
        if (!packed)
          byte = int8_t(uint8_t(q));
        else if (c % 2 == 0)
          byte = int8_t((uint8_t(byte) & 0xf0u) | (uint8_t(q) & 0x0fu));
        else
          byte = int8_t((uint8_t(byte) & 0x0fu) | uint8_t(uint8_t(q) << 4));
      }
    }
  return m;
}

QuantizedMatrix quant::quantizeFP8(ArrayRef<float> values, int64_t rows,
                                   int64_t cols, int64_t block) {
  int64_t groups = (cols + block - 1) / block;
  QuantizedMatrix m;
  m.codes.assign(rows * cols, 0);
  m.scales.assign(rows * groups, 0.0f);
  for (int64_t r0 = 0; r0 < rows; r0 += block)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t r1 = std::min(rows, r0 + block);
      int64_t c0 = g * block, c1 = std::min(cols, c0 + block);
      float absmax = 0.0f;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c)
          absmax = std::max(absmax, std::fabs(values[r * cols + c]));
      float scale = absmax / 448.0f;
      for (int64_t r = r0; r < r1; ++r) {
        m.scales[r * groups + g] = scale;
        for (int64_t c = c0; c < c1; ++c) {
          float x = scale > 0 ? values[r * cols + c] / scale : 0.0f;
          bool lost;
          llvm::APFloat q(x);
          q.convert(llvm::APFloat::Float8E4M3FN(),
                    llvm::APFloat::rmNearestTiesToEven, &lost);
          m.codes[r * cols + c] =
              int8_t(uint8_t(q.bitcastToAPInt().getZExtValue()));
        }
      }
    }
  return m;
}

float quant::decodeE4M3Value(uint8_t code) {
  if ((code & 0x7f) == 0x7f) // NaN: what the IR's decoding gives
    return code & 0x80 ? -480.0f : 480.0f;
  return llvm::APFloat(llvm::APFloat::Float8E4M3FN(), llvm::APInt(8, code))
      .convertToFloat();
}

float quant::dequantizedValue(const QuantizedMatrix &m, int64_t cols,
                              QuantFormat format, int64_t group, int64_t row,
                              int64_t col) {
  int64_t groups = (cols + group - 1) / group;
  if (format == QuantFormat::FP8E4M3)
    return decodeE4M3Value(uint8_t(m.codes[row * cols + col])) *
           m.scales[row * groups + col / group];
  bool packed = quant::isPacked(format);
  bool asymmetric = !m.zeros.empty();
  int64_t perRow = packed ? (cols + 1) / 2 : cols;
  uint8_t byte = uint8_t(m.codes[row * perRow + (packed ? col / 2 : col)]);
  float q;
  if (!packed) {
    q = asymmetric ? float(byte) : float(int8_t(byte));
  } else {
    uint8_t nibble = col % 2 ? byte >> 4 : byte & 0x0f;
    if (format == QuantFormat::NF4)
      q = nf4Values()[nibble];
    else
      q = asymmetric ? float(nibble) : float(int8_t(uint8_t(nibble << 4)) >> 4);
  }
  float zero = asymmetric ? float(m.zeros[row * groups + col / group]) : 0.0f;
  return (q - zero) * m.scales[row * groups + col / group];
}

/// An integer or float constant shaped like `like` (a splat vector when
/// `like` is a vector).
static Value constLike(OpBuilder &b, Location loc, Value like, Type scalar,
                       Attribute value) {
  if (auto v = dyn_cast<VectorType>(like.getType()))
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            VectorType::get(v.getShape(), scalar, v.getScalableDims()),
            value));
  return arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
}

static Type withElement(Value like, Type scalar) {
  if (auto v = dyn_cast<VectorType>(like.getType()))
    return VectorType::get(v.getShape(), scalar, v.getScalableDims());
  return scalar;
}

/// The f32 values of E4M3 bytes `bytes` (i8, scalar or vector), in three
/// integer ops and a multiply: sign-extended and shifted left by 20, the
/// byte's exponent and mantissa fields lie under f32's (bits 20-26) and
/// its sign in bits 27-31, of which a mask keeps bit 31: the f32 value x
/// 2^-120, exactly (E4M3's subnormals become f32 subnormals), and the
/// multiply by 2^120 is exact too. (Where a process flushes subnormal
/// inputs to zero, codes below 2^-6 read as 0: under 2^-6 / 448 of the
/// block's largest weight.)
static Value decodeE4M3Bytes(OpBuilder &b, Location loc, Value bytes) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto c = [&](int64_t v) {
    return constLike(b, loc, bytes, i32, b.getI32IntegerAttr(v));
  };
  Type ints = withElement(bytes, i32), floats = withElement(bytes, f32);
  Value bits = arith::ShLIOp::create(
      b, loc, arith::ExtSIOp::create(b, loc, ints, bytes), c(20));
  Value scaled = arith::BitcastOp::create(
      b, loc, floats,
      arith::AndIOp::create(b, loc, bits, c(int32_t(0x87f00000u))));
  return arith::MulFOp::create(
      b, loc, scaled,
      constLike(b, loc, bytes, f32, b.getF32FloatAttr(0x1p120f)));
}

Value quant::decodeCodes(OpBuilder &b, Location loc, QuantFormat format,
                         bool unsignedCodes, Value bytes, bool high) {
  if (format == QuantFormat::FP8E4M3)
    return decodeE4M3Bytes(b, loc, bytes);
  Type i8 = b.getI8Type(), f32 = b.getF32Type();
  auto i8c = [&](int64_t v) {
    return constLike(b, loc, bytes, i8, b.getIntegerAttr(i8, v));
  };
  Value q = bytes;
  bool isUnsigned = unsignedCodes || format == QuantFormat::NF4;
  if (format != QuantFormat::Int8) {
    if (isUnsigned)
      q = high ? Value(arith::ShRUIOp::create(b, loc, q, i8c(4)))
               : Value(arith::AndIOp::create(b, loc, q, i8c(15)));
    else
      q = arith::ShRSIOp::create(
          b, loc, high ? q : Value(arith::ShLIOp::create(b, loc, q, i8c(4))),
          i8c(4));
  }
  Type floats = withElement(bytes, f32);
  if (format != QuantFormat::NF4)
    return isUnsigned ? Value(arith::UIToFPOp::create(b, loc, floats, q))
                      : Value(arith::SIToFPOp::create(b, loc, floats, q));
  // The table as a tree of selects on the index's bits (a lookup with
  // variable indices has no vector form): bit 0 picks within pairs, bit 3
  // between halves.
  SmallVector<Value> level;
  for (float v : nf4Values())
    level.push_back(constLike(b, loc, bytes, f32, b.getF32FloatAttr(v)));
  for (int64_t bit = 0; bit < 4; ++bit) {
    Value set = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, q, i8c(int64_t(1) << bit)), i8c(0));
    SmallVector<Value> next;
    for (size_t i = 0; i < level.size(); i += 2)
      next.push_back(
          arith::SelectOp::create(b, loc, set, level[i + 1], level[i]));
    level = std::move(next);
  }
  return level.front();
}

Value quant::scaleCodes(OpBuilder &b, Location loc, Value codes, Value scale,
                        Value zero) {
  Type f32 = withElement(codes, b.getF32Type());
  if (scale.getType() != f32)
    scale = arith::ExtFOp::create(b, loc, f32, scale);
  if (zero)
    codes = arith::SubFOp::create(
        b, loc, codes, arith::UIToFPOp::create(b, loc, f32, zero));
  return arith::MulFOp::create(b, loc, codes, scale);
}

Value quant::dequantizedElement(OpBuilder &b, Location loc, DequantizeOp op,
                                ValueRange indices) {
  SmallVector<Value> at(indices), group(indices);
  Value col = indices.back();
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  if (op.isPacked())
    at.back() = arith::DivUIOp::create(b, loc, col, idx(2));
  group.back() = arith::DivUIOp::create(b, loc, col, idx(op.getGroupSize()));
  Value byte = tensor::ExtractOp::create(b, loc, op.getCodes(), at);
  bool unsignedCodes = op.getZeroPoints() != nullptr;
  Value q = decodeCodes(b, loc, op.getFormat(), unsignedCodes, byte,
                        /*high=*/false);
  if (op.isPacked()) {
    Value odd = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::RemUIOp::create(b, loc, col, idx(2)), idx(0));
    q = arith::SelectOp::create(
        b, loc, odd,
        decodeCodes(b, loc, op.getFormat(), unsignedCodes, byte,
                    /*high=*/true),
        q);
  }
  Value scale = tensor::ExtractOp::create(b, loc, op.getScales(), group);
  Value zero;
  if (Value z = op.getZeroPoints())
    zero = tensor::ExtractOp::create(b, loc, z, group);
  return scaleCodes(b, loc, q, scale, zero);
}

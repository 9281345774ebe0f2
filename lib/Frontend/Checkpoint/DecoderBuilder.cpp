//===- DecoderBuilder.cpp - shared pieces of the decoder builders -*- C++ -*-=//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "DecoderBuilder.h"
#include "PrequantizedWeights.h"

#include "dialects/Mnemo/IR/MnemoAttrs.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/Quantization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Endian.h"

using namespace mlir;
using namespace mlir::mnemo;

DecoderBuilder::DecoderBuilder(const ModelConfig &config,
                               const SafetensorsCheckpoint &weights,
                               ImplicitLocOpBuilder &b, std::string &error,
                               CacheStep *step)
    : config(config), weights(weights), b(b), error(error),
      f32(b.getF32Type()),
      storage(config.weights.dtype == WeightDType::BF16
                  ? FloatType(b.getBF16Type())
              : config.weights.dtype == WeightDType::F16
                  ? FloatType(b.getF16Type())
                  : FloatType(b.getF32Type())),
      step(step) {}

bool DecoderBuilder::hasWeight(const Twine &name) const {
  return weights.lookup(name.str()) != nullptr;
}

const SafetensorsTensor *DecoderBuilder::lookup(const Twine &nameTwine,
                                                ArrayRef<int64_t> shape,
                                                const SafetensorsFile **file,
                                                bool integer) {
  if (failed())
    return nullptr;
  std::string name = nameTwine.str();
  const SafetensorsTensor *tensor = weights.lookup(name, file);
  if (!tensor) {
    error = (weights.getPath() + ": missing tensor '" + name + "'").str();
    return nullptr;
  }
  if (!llvm::equal(tensor->shape, shape)) {
    error = ((*file)->getPath() + ": tensor '" + name + "' has shape " +
             formatShape(tensor->shape) + ", expected " + formatShape(shape))
                .str();
    return nullptr;
  }
  using DT = SafetensorsDType;
  DT d = tensor->dtype;
  if (integer ? d == DT::I64 || d == DT::I32
              : d == DT::F32 || d == DT::F16 || d == DT::BF16)
    return tensor;
  error = ((*file)->getPath() + ": tensor '" + name + "' has dtype " +
           tensor->dtypeName + ", expected " +
           (integer ? "I64 or I32" : "F32, F16 or BF16"))
              .str();
  return nullptr;
}

Value DecoderBuilder::weight(const Twine &name, ArrayRef<int64_t> shape) {
  const SafetensorsFile *file = nullptr;
  const SafetensorsTensor *tensor = lookup(name, shape, &file);
  if (!tensor)
    return {};
  auto type = RankedTensorType::get(shape, f32);
  DenseElementsAttr attr;
  if (tensor->dtype == SafetensorsDType::F32)
    attr = DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(tensor->bytes.data(), tensor->bytes.size()));
  else
    attr = DenseElementsAttr::get(type, ArrayRef<float>(readFloats(*tensor)));
  return arith::ConstantOp::create(b, tensorLoc(name), attr);
}

Location DecoderBuilder::tensorLoc(const Twine &name) {
  return NameLoc::get(b.getStringAttr(name), b.getLoc());
}

Location DecoderBuilder::layerLoc(Value w) {
  // "model.layers.0.mlp.up_proj.weight" names the layer that reads it.
  auto name = dyn_cast<NameLoc>(w.getLoc());
  if (!name)
    return b.getLoc();
  StringRef layer = name.getName().getValue();
  layer.consume_back(".weight");
  return NameLoc::get(b.getStringAttr(layer), b.getLoc());
}

/// `values` rounded to nearest-even bf16 (NaN stays NaN).
static std::vector<uint16_t> toBF16(ArrayRef<float> values) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof(bits));
    if ((bits & 0x7fffffffu) > 0x7f800000u)
      out[i] = uint16_t((bits >> 16) | 0x40u);
    else
      out[i] = uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }
  return out;
}

/// A constant of `shape` and element type `type` (f32, bf16 or f16)
/// holding `values` rounded to nearest-even.
static DenseElementsAttr storedAttr(FloatType type, ArrayRef<int64_t> shape,
                                    ArrayRef<float> values) {
  auto tensorType = RankedTensorType::get(shape, type);
  if (type.isF32())
    return DenseElementsAttr::get(tensorType, values);
  std::vector<uint16_t> bits;
  if (type.isBF16()) {
    bits = toBF16(values);
  } else {
    bits.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      bool lost;
      llvm::APFloat h(values[i]);
      h.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      bits[i] = uint16_t(h.bitcastToAPInt().getZExtValue());
    }
  }
  return DenseElementsAttr::getFromRawBuffer(
      tensorType, ArrayRef<char>(reinterpret_cast<const char *>(bits.data()),
                                 bits.size() * sizeof(uint16_t)));
}

/// The module a weight belongs to: "x.weight" -> "x".
static std::string moduleOf(const Twine &name) {
  std::string s = name.str();
  StringRef stem(s);
  stem.consume_back(".weight");
  return stem.str();
}

Value DecoderBuilder::prequantizedMatrix(const Twine &name,
                                         ArrayRef<int64_t> shape) {
  std::string stem = moduleOf(name);
  UnpackedWeight w;
  if (shape.size() != 2 ||
      !unpackPrequantized(*config.prequantized, weights, stem, shape[0],
                          shape[1], w, error))
    return {};
  Location loc = NameLoc::get(b.getStringAttr(stem), b.getLoc());
  // Scales whose blocks run across rows: decoded as [blocks, block size].
  SmallVector<int64_t> decoded(shape);
  if (w.flatRows)
    decoded = {w.flatRows, w.groupSize};
  int64_t rows = decoded[0], groups = w.groups;
  DenseElementsAttr scales =
      w.f16Scales.empty()
          ? DenseElementsAttr::get(
                RankedTensorType::get({rows, groups}, b.getF32Type()),
                ArrayRef<float>(w.f32Scales))
          : DenseElementsAttr::getFromRawBuffer(
                RankedTensorType::get({rows, groups}, b.getF16Type()),
                ArrayRef<char>(reinterpret_cast<const char *>(
                                   w.f16Scales.data()),
                               w.f16Scales.size() * sizeof(uint16_t)));
  QuantFormat format = w.nf4         ? QuantFormat::NF4
                       : w.fp8       ? QuantFormat::FP8E4M3
                       : w.bits == 8 ? QuantFormat::Int8
                                     : QuantFormat::Int4;
  Value weight = dequantizeOp(decoded, format, w.groupSize, w.codes, scales,
                              w.zeros, loc);
  if (!w.flatRows)
    return weight;
  // Row-major, so [blocks, size] -> [blocks * size] -> [N, K].
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, weight, ArrayRef<ReassociationIndices>{{0, 1}});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, b.getF32Type()), flat,
      ArrayRef<ReassociationIndices>{{0, 1}});
}

Value DecoderBuilder::matrix(const Twine &name, ArrayRef<int64_t> shape) {
  return storedMatrix(name, shape, config.weights.quantized(), storage);
}

Value DecoderBuilder::endMatrix(const Twine &name, ArrayRef<int64_t> shape,
                                bool head) {
  const WeightOptions &o = config.weights;
  bool skip = config.tieWordEmbeddings ? o.skipEmbedding || o.skipHead
              : head                   ? o.skipHead
                                       : o.skipEmbedding;
  if (!o.quantized() || !skip)
    return matrix(name, shape);
  return storedMatrix(name, shape, /*quantize=*/false, b.getBF16Type());
}

Value DecoderBuilder::storedMatrix(const Twine &name, ArrayRef<int64_t> shape,
                                   bool quantize, FloatType type) {
  if (config.prequantized && isPrequantized(weights, moduleOf(name)))
    return prequantizedMatrix(name, shape);
  if (type.isF32() && !quantize)
    return weight(name, shape);
  const SafetensorsFile *file = nullptr;
  const SafetensorsTensor *tensor = lookup(name, shape, &file);
  if (!tensor)
    return {};
  if (quantize)
    return quantizedMatrix(shape, readFloats(*tensor), tensorLoc(name),
                           name.str());
  bool same = (type.isBF16() && tensor->dtype == SafetensorsDType::BF16) ||
              (type.isF16() && tensor->dtype == SafetensorsDType::F16);
  if (same)
    return arith::ConstantOp::create(
        b, tensorLoc(name),
        DenseElementsAttr::getFromRawBuffer(
            RankedTensorType::get(shape, type),
            ArrayRef<char>(tensor->bytes.data(), tensor->bytes.size())));
  return arith::ConstantOp::create(
      b, tensorLoc(name), storedAttr(type, shape, readFloats(*tensor)));
}

Value DecoderBuilder::matrixConstant(ArrayRef<int64_t> shape,
                                     ArrayRef<float> values) {
  if (config.weights.quantized())
    return quantizedMatrix(shape, values, b.getLoc(), "a derived matrix");
  return arith::ConstantOp::create(b, storedAttr(storage, shape, values));
}

/// `v` rounded to the nearest f16 (inf past its range).
static float roundToF16(float v) {
  bool lost;
  llvm::APFloat h(v);
  h.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  h.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return h.convertToFloat();
}

Value DecoderBuilder::quantizedMatrix(ArrayRef<int64_t> shape,
                                      ArrayRef<float> values, Location loc,
                                      StringRef what) {
  const WeightOptions &options = config.weights;
  QuantFormat format = options.dtype == WeightDType::Int8   ? QuantFormat::Int8
                       : options.dtype == WeightDType::Int4 ? QuantFormat::Int4
                       : options.dtype == WeightDType::FP8
                           ? QuantFormat::FP8E4M3
                           : QuantFormat::NF4;
  for (float v : values)
    if (!std::isfinite(v)) {
      error = (weights.getPath() + ": tensor '" + what +
               "' holds a value that is not finite; quantized storage "
               "cannot represent it")
                  .str();
      return {};
    }
  int64_t cols = shape.back(), rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  if (format == QuantFormat::FP8E4M3) {
    // DeepSeek-V3's blocks (f32 scales: a block's absmax / 448 is often
    // below f16's normal range).
    quant::QuantizedMatrix q =
        quant::quantizeFP8(values, rows, cols, options.groupSize);
    SmallVector<int64_t> scaleShape(shape);
    scaleShape.back() = llvm::divideCeil(cols, options.groupSize);
    return dequantizeOp(
        shape, format, options.groupSize,
        ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(q.codes.data()),
                          q.codes.size()),
        storedAttr(b.getF32Type(), scaleShape, q.scales), {}, loc);
  }
  bool asymmetric = options.asymmetric && format != QuantFormat::NF4;
  // Scales in f16 where each keeps its value's magnitude (a normal f16, or
  // zero for a group of zeros); f32 otherwise.
  bool f16Scales = true;
  quant::QuantizedMatrix q = quant::quantize(
      values, rows, cols, format, options.groupSize, asymmetric,
      [&](float scale) {
        float h = roundToF16(scale);
        if (!std::isfinite(h) || (scale != 0 && h < 6.103515625e-05f))
          f16Scales = false;
        return h;
      });
  if (!f16Scales)
    q = quant::quantize(values, rows, cols, format, options.groupSize,
                        asymmetric, [](float scale) { return scale; });
  SmallVector<int64_t> scaleShape(shape);
  scaleShape.back() = llvm::divideCeil(cols, options.groupSize);
  FloatType scaleType =
      f16Scales ? FloatType(b.getF16Type()) : FloatType(b.getF32Type());
  ArrayRef<uint8_t> zeros;
  if (asymmetric)
    zeros = ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(q.zeros.data()),
                              q.zeros.size());
  return dequantizeOp(
      shape, format, options.groupSize,
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(q.codes.data()),
                        q.codes.size()),
      storedAttr(scaleType, scaleShape, q.scales), zeros, loc);
}

Value DecoderBuilder::dequantizeOp(ArrayRef<int64_t> shape, QuantFormat format,
                                   int64_t groupSize, ArrayRef<uint8_t> codes,
                                   DenseElementsAttr scales,
                                   ArrayRef<uint8_t> zeros, Location loc) {
  MLIRContext *ctx = b.getContext();
  Type i8 = IntegerType::get(ctx, 8);
  auto bytes = [&](ArrayRef<int64_t> dims, ArrayRef<uint8_t> data) {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::getFromRawBuffer(
            RankedTensorType::get(dims, i8),
            ArrayRef<char>(reinterpret_cast<const char *>(data.data()),
                           data.size())));
  };
  int64_t cols = shape.back();
  SmallVector<int64_t> codeShape(shape);
  codeShape.back() = quant::isPacked(format) ? llvm::divideCeil(cols, 2) : cols;
  Value codeValues = bytes(codeShape, codes);
  Value scaleValues = arith::ConstantOp::create(b, loc, scales);
  Value zeroValues;
  if (!zeros.empty())
    zeroValues = bytes(scales.getType().getShape(), zeros);
  return DequantizeOp::create(b, loc, RankedTensorType::get(shape, f32),
                              codeValues, scaleValues, zeroValues,
                              QuantFormatAttr::get(ctx, format),
                              b.getI64IntegerAttr(groupSize));
}

std::optional<std::vector<float>>
DecoderBuilder::weightData(const Twine &name, ArrayRef<int64_t> shape) {
  // A quantized layer the builder rearranges: the values its codes decode
  // to (stored again as --dtype says).
  if (config.prequantized && shape.size() == 2 &&
      isPrequantized(weights, moduleOf(name))) {
    UnpackedWeight w;
    if (!unpackPrequantized(*config.prequantized, weights, moduleOf(name),
                            shape[0], shape[1], w, error))
      return std::nullopt;
    return dequantized(w, shape[0], shape[1]);
  }
  const SafetensorsFile *file = nullptr;
  const SafetensorsTensor *tensor = lookup(name, shape, &file);
  if (!tensor)
    return std::nullopt;
  return readFloats(*tensor);
}

Value DecoderBuilder::scaledMatrix(const Twine &name, ArrayRef<int64_t> shape,
                                   double factor) {
  std::optional<std::vector<float>> data = weightData(name, shape);
  if (!data)
    return {};
  for (float &v : *data)
    v = float(v * factor);
  return matrixConstant(shape, *data);
}

Value DecoderBuilder::rowsOf(const std::string &name, int64_t numRows,
                             int64_t cols, RowBlocks rows,
                             ArrayRef<int64_t> shape, bool isMatrix) {
  SmallVector<int64_t> stored = {numRows};
  if (cols != 1 || shape.size() != 1)
    stored.push_back(cols);
  std::optional<std::vector<float>> data = weightData(name, stored);
  if (!data)
    return {};
  std::vector<float> picked;
  for (int64_t blk = 0; blk < rows.blocks; ++blk) {
    for (auto [first, count] : rows.runs) {
      int64_t row = blk * rows.stride + first;
      if (row < 0 || count < 0 || row + count > numRows) {
        error = (weights.getPath() + ": tensor '" + name +
                 "': the config's dims select its rows [" + Twine(row) + ", " +
                 Twine(row + count) + ") of " + Twine(numRows))
                    .str();
        return {};
      }
      auto begin = data->begin() + row * cols;
      picked.insert(picked.end(), begin, begin + count * cols);
    }
  }
  return isMatrix ? matrixConstant(shape, picked) : constant(shape, picked);
}

Value DecoderBuilder::indexWeight(const Twine &name, ArrayRef<int64_t> shape,
                                  int64_t bound) {
  const SafetensorsFile *file = nullptr;
  const SafetensorsTensor *tensor =
      lookup(name, shape, &file, /*integer=*/true);
  if (!tensor)
    return {};
  bool i64 = tensor->dtype == SafetensorsDType::I64;
  std::vector<int64_t> values(tensor->bytes.size() / (i64 ? 8 : 4));
  for (size_t i = 0; i < values.size(); ++i) {
    if (i64) {
      std::memcpy(&values[i], tensor->bytes.data() + 8 * i, 8);
    } else {
      int32_t v;
      std::memcpy(&v, tensor->bytes.data() + 4 * i, 4);
      values[i] = v;
    }
    if (values[i] < 0 || values[i] >= bound) {
      error = (file->getPath() + ": tensor '" + name + "' element " +
               Twine(i) + " is " + Twine(values[i]) + ", outside [0, " +
               Twine(bound) + ")")
                  .str();
      return {};
    }
  }
  auto type = RankedTensorType::get(shape, b.getI64Type());
  return arith::ConstantOp::create(
      b, tensorLoc(name), DenseElementsAttr::get(type, ArrayRef(values)));
}

Value DecoderBuilder::constant(ArrayRef<int64_t> shape,
                               ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, f32);
  return arith::ConstantOp::create(b, DenseElementsAttr::get(type, values));
}

RankedTensorType DecoderBuilder::act(ArrayRef<int64_t> tail) {
  SmallVector<int64_t> shape = {kDyn, kDyn};
  shape.append(tail.begin(), tail.end());
  return RankedTensorType::get(shape, f32);
}

Value DecoderBuilder::empty(RankedTensorType type, ValueRange dynamic) {
  return tensor::EmptyOp::create(b, type.getShape(), type.getElementType(),
                                 dynamic);
}

Value DecoderBuilder::add(Value x, Value y) {
  Value init = empty(cast<RankedTensorType>(x.getType()), {batch, seq});
  return linalg::AddOp::create(b, ValueRange{x, y}, ValueRange{init})
      ->getResult(0);
}

Value DecoderBuilder::linear(Value x, Value w, Value bias, int64_t out) {
  Location loc = layerLoc(w);
  Value y = LinearOp::create(b, loc, act({out}), x, w, bias,
                             WeightLayout::OutIn);
  auto module = dyn_cast<NameLoc>(loc);
  if (!config.attachedLora || !module)
    return y;
  auto it = config.attachedLora->find(module.getName().str());
  if (it == config.attachedLora->end())
    return y;
  // An attached adapter: y + B (A x), its factors weights the runtime may
  // replace (they become arguments after the import:
  // adapterFactorsToArguments).
  const LoraFactors &f = it->second;
  config.loraApplied->insert(it->first);
  auto factor = [&](StringRef which, ArrayRef<int64_t> shape,
                    ArrayRef<float> values) {
    auto c = arith::ConstantOp::create(
        b, NameLoc::get(b.getStringAttr("lora." + it->first + "." + which)),
        DenseElementsAttr::get(RankedTensorType::get(shape, f32), values));
    c->setAttr(kAdapterFactorAttr, b.getUnitAttr());
    return c.getResult();
  };
  Value a = factor("A", {f.rank, f.in}, f.a);
  Value bm = factor("B", {f.out, f.rank}, f.b);
  Value down = LinearOp::create(b, loc, act({f.rank}), x, a, Value(),
                                WeightLayout::OutIn);
  Value up = LinearOp::create(b, loc, act({out}), down, bm, Value(),
                              WeightLayout::OutIn);
  return add(y, up);
}

Value DecoderBuilder::rmsNorm(Value x, Value w, double eps) {
  return RmsNormOp::create(b, layerLoc(w), x.getType(), x, w,
                           llvm::APFloat(eps));
}

Value DecoderBuilder::layerNorm(Value x, Value w, Value bias, double eps) {
  auto type = cast<RankedTensorType>(x.getType());
  double d = double(type.getDimSize(2));
  MLIRContext *ctx = b.getContext();
  AffineExpr i, j, k;
  bindDims(ctx, i, j, k);
  AffineMap id = AffineMap::get(3, 0, {i, j, k}, ctx);
  AffineMap row = AffineMap::get(3, 0, {i, j}, ctx);
  AffineMap feature = AffineMap::get(3, 0, {k}, ctx);
  SmallVector<utils::IteratorType> par(3, utils::IteratorType::parallel);
  SmallVector<utils::IteratorType> red = par;
  red[2] = utils::IteratorType::reduction;
  auto rowType = RankedTensorType::get({kDyn, kDyn}, f32);
  auto f = [](OpBuilder &nb, Location l, double v) -> Value {
    return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v));
  };
  // The mean, then the mean square deviation from it, of each row.
  auto rowMean = [&](Value mean) {
    Value init = linalg::FillOp::create(b, ValueRange{f(b, b.getLoc(), 0.0)},
                                        ValueRange{empty(rowType, {batch, seq})})
                     .getResult(0);
    SmallVector<Value> ins = {x};
    SmallVector<AffineMap> maps = {id};
    if (mean) {
      ins.push_back(mean);
      maps.push_back(row);
    }
    maps.push_back(row);
    Value sum =
        linalg::GenericOp::create(
            b, TypeRange{rowType}, ins, ValueRange{init}, maps, red,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value v = a[0];
              if (mean) {
                v = arith::SubFOp::create(nb, l, v, a[1]);
                v = arith::MulFOp::create(nb, l, v, v);
              }
              linalg::YieldOp::create(
                  nb, l, arith::AddFOp::create(nb, l, a.back(), v).getResult());
            })
            ->getResult(0);
    return linalg::GenericOp::create(
               b, TypeRange{rowType}, ValueRange{sum},
               ValueRange{empty(rowType, {batch, seq})},
               ArrayRef<AffineMap>{b.getMultiDimIdentityMap(2),
                                   b.getMultiDimIdentityMap(2)},
               SmallVector<utils::IteratorType>(2,
                                                utils::IteratorType::parallel),
               [&](OpBuilder &nb, Location l, ValueRange a) {
                 linalg::YieldOp::create(
                     nb, l,
                     arith::MulFOp::create(nb, l, a[0], f(nb, l, 1.0 / d))
                         .getResult());
               })
        ->getResult(0);
  };
  Value mean = rowMean(Value());
  Value var = rowMean(mean);
  return linalg::GenericOp::create(
             b, TypeRange{type}, ValueRange{x, mean, var, w, bias},
             ValueRange{empty(type, {batch, seq})},
             ArrayRef<AffineMap>{id, row, row, feature, feature, id}, par,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value inv = math::RsqrtOp::create(
                   nb, l, arith::AddFOp::create(nb, l, a[2], f(nb, l, eps)));
               Value v = arith::MulFOp::create(
                   nb, l, arith::SubFOp::create(nb, l, a[0], a[1]), inv);
               v = arith::MulFOp::create(nb, l, v, a[3]);
               linalg::YieldOp::create(
                   nb, l, arith::AddFOp::create(nb, l, v, a[4]).getResult());
             })
      ->getResult(0);
}

Value DecoderBuilder::positions() {
  auto type = RankedTensorType::get({kDyn, kDyn}, b.getI64Type());
  Value init = empty(type, {batch, seq});
  AffineMap map = b.getMultiDimIdentityMap(2);
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, TypeRange{type}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{map}, iterators,
      [](OpBuilder &nb, Location loc, ValueRange) {
        Value i = linalg::IndexOp::create(nb, loc, 1);
        Value p = arith::IndexCastOp::create(nb, loc, nb.getI64Type(), i);
        linalg::YieldOp::create(nb, loc, p);
      });
  return generic->getResult(0);
}

Value DecoderBuilder::splitHeads(Value x, int64_t heads, int64_t d) {
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
  SmallVector<OpFoldResult> shape = {batch, seq, b.getIndexAttr(heads),
                                     b.getIndexAttr(d)};
  return tensor::ExpandShapeOp::create(b, act({heads, d}), x, groups, shape);
}

Value DecoderBuilder::swap12(Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape = {type.getDimSize(0), type.getDimSize(2),
                                type.getDimSize(1), type.getDimSize(3)};
  SmallVector<Value> dynamic = {batch, seq};
  Value init =
      tensor::EmptyOp::create(b, shape, type.getElementType(), dynamic);
  return linalg::TransposeOp::create(b, x, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      ->getResult(0);
}

Value DecoderBuilder::mergeHeads(Value x) {
  Value bshd = swap12(x);
  auto type = cast<RankedTensorType>(bshd.getType());
  int64_t width = type.getDimSize(2) * type.getDimSize(3);
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
  return tensor::CollapseShapeOp::create(b, act({width}), bshd, groups);
}

Value DecoderBuilder::rope(Value x, bool interleaved) {
  return rope(x, interleaved, pos, config.ropeTheta, config.ropeScaling,
              config.rotaryDim);
}

Value DecoderBuilder::rope(Value x, bool interleaved, Value positions,
                           double theta, const RopeScalingConfig &s,
                           int64_t rotary) {
  RopeScalingAttr scaling;
  if (s.kind != RopeScalingConfig::Kind::None) {
    RopeScalingKind kind;
    switch (s.kind) {
    case RopeScalingConfig::Kind::Linear:
      kind = RopeScalingKind::Linear;
      break;
    case RopeScalingConfig::Kind::Dynamic:
      kind = RopeScalingKind::Dynamic;
      break;
    case RopeScalingConfig::Kind::Yarn:
      kind = RopeScalingKind::Yarn;
      break;
    default:
      kind = RopeScalingKind::Llama3;
      break;
    }
    scaling = RopeScalingAttr::get(b.getContext(), kind, s.factor,
                                   s.originalMaxPosition, s.lowFreqFactor,
                                   s.highFreqFactor, s.betaFast, s.betaSlow,
                                   s.attentionFactor, s.truncate);
  }
  IntegerAttr rotaryDim;
  int64_t d = cast<RankedTensorType>(x.getType()).getDimSize(3);
  if (rotary != d)
    rotaryDim = b.getI64IntegerAttr(rotary);
  return RopeOp::create(b, x.getType(), x, positions,
                        b.getF64FloatAttr(theta),
                        interleaved ? b.getUnitAttr() : UnitAttr(), rotaryDim,
                        scaling);
}

Value DecoderBuilder::swigluMLP(Value x, Value wg, Value bg, Value wu,
                                Value bu, Value wd, Value bd, int64_t inter) {
  Value gate = linear(x, wg, bg, inter);
  Value up = linear(x, wu, bu, inter);
  Value s = SwiGluOp::create(b, gate, up, FloatAttr());
  return linear(s, wd, bd, config.hiddenSize);
}

Value DecoderBuilder::build(Value ids) {
  int64_t vocab = config.vocabSize, hidden = config.hiddenSize;
  Value embed =
      endMatrix("model.embed_tokens.weight", {vocab, hidden}, /*head=*/false);
  Value finalNorm = weight("model.norm.weight", {hidden});
  Value head = config.tieWordEmbeddings
                   ? embed
                   : endMatrix("lm_head.weight", {vocab, hidden}, true);
  if (failed())
    return {};
  batch = tensor::DimOp::create(b, ids, 0);
  seq = tensor::DimOp::create(b, ids, 1);
  pos = step ? step->positions : positions();
  Value h = EmbeddingOp::create(b, act({hidden}), embed, ids);
  Location file = b.getLoc();
  for (int64_t i = 0; i < config.numLayers; ++i) {
    // The layer's ops (attention, rope, residual adds) carry its name.
    b.setLoc(tensorLoc("model.layers." + Twine(i)));
    h = layer(h, i);
    b.setLoc(file);
    if (failed())
      return {};
  }
  if (step && step->lastTokenLogits)
    h = lastTokenRows(b, *step, h);
  return linear(rmsNorm(h, finalNorm), head, Value(), vocab);
}

Value DecoderBuilder::attention(Value q, Value k, Value v, int64_t layer,
                                IntegerAttr window, FloatAttr scale) {
  auto qType = cast<RankedTensorType>(q.getType());
  SmallVector<int64_t> shape(qType.getShape());
  shape[3] = cast<RankedTensorType>(v.getType()).getDimSize(3);
  auto type = qType.clone(shape);
  // `forward`, and new sequences, which see only their own tokens: causal
  // attention over them (a ragged batch's padding comes after every real
  // token, so causality hides it), tiled and skipping the future.
  auto selfAttention = [&] {
    return AttentionOp::create(b, type, q, k, v, Value(), Value(), Value(),
                               /*causal=*/true, window, scale, FloatAttr())
        .getResult();
  };
  if (!step)
    return selfAttention();
  bool fp8 = !step->keyScales.empty();
  // A layer without a value pool keeps its values as its keys' leading
  // features (an MLA layer's latent): only the keys are written.
  writeCache(b, *step, layer, k, step->values[layer] ? v : Value());
  if (step->fresh)
    return selfAttention();
  auto [values, valueScales] = valuePool(b, *step, layer, shape[3]);
  return PagedAttentionOp::create(
      b, type, q, step->keys[layer], values, step->blockTable,
      step->contextLengths, step->positions,
      /*sink=*/Value(), fp8 ? step->keyScales[layer] : Value(), valueScales,
      /*indices=*/Value(), /*mask=*/Value(), /*causal=*/true, window, scale,
      FloatAttr());
}

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// `@name`, one generation step (GenerationStep.h): the model's layers over
/// the step's paged cache. `prefill` starts sequences: its positions are 0,
/// 1, ... (then -1), and its tokens attend over themselves.
LogicalResult buildStepFunction(ImplicitLocOpBuilder &b, StringRef name,
                                int64_t seqLen, bool fresh,
                                const ModelConfig &config,
                                const CacheLayout &layout, DecoderBody body) {
  SmallVector<StepLayerCache> layers(layout.perLayer);
  if (layers.empty())
    for (int64_t l = 0; l < config.numLayers; ++l)
      layers.push_back({layout.heads, layout.keyDim, layout.valueDim,
                        config.layerWindows[l], layout.indexKeyDim});
  OpBuilder::InsertionGuard guard(b);
  CacheStep step;
  // A prompt's (or an appended chunk's) logits: its last token's only.
  static_cast<GenerationStep &>(step) =
      createGenerationStep(b, name, seqLen, config.vocabSize, config.kvCache,
                           layers, /*lastTokenLogits=*/true);
  step.fresh = fresh;
  Value logits = body(b, step.inputIds, &step);
  if (!logits)
    return failure();
  finishGenerationStep(b, step, logits);
  return success();
}

} // namespace

OwningOpRef<ModuleOp> mnemo::buildDecoderModule(
    const ModelConfig &config, const SafetensorsCheckpoint &weights,
    MLIRContext *context, std::string &error, DecoderBody body,
    std::optional<CacheLayout> cache) {
  context->loadDialect<arith::ArithDialect, func::FuncDialect,
                       linalg::LinalgDialect, tensor::TensorDialect,
                       MnemoDialect>();
  Location loc = FileLineColLoc::get(context, weights.getPath(), 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  ImplicitLocOpBuilder b(loc, context);
  b.setInsertionPointToEnd(module->getBody());

  auto idsType = RankedTensorType::get({kDyn, kDyn}, b.getI64Type());
  auto logitsType =
      RankedTensorType::get({kDyn, kDyn, config.vocabSize}, b.getF32Type());
  func::FuncOp func = createNamedFunction(b, "forward",
                                          {{"input_ids", idsType}},
                                          {{"logits", logitsType}});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(func.addEntryBlock());
    Value logits = body(b, func.getArgument(0), nullptr);
    if (!logits)
      return nullptr;
    func::ReturnOp::create(b, logits);
  }
  // Dynamic NTK scaling rotates every key with the frequencies of the
  // whole sequence's length, which a cache written step by step cannot
  // follow (transformers' own cached generation keeps each key's rotation
  // as well); say so rather than drift silently.
  if (cache && config.ropeScaling.kind == RopeScalingConfig::Kind::Dynamic)
    emitWarning(loc)
        << "dynamic NTK RoPE: the generation steps' cached keys keep the "
           "rotation of the length they were written at, so decoding "
           "drifts from a full recomputation once a sequence passes "
           "original_max_position_embeddings ("
        << config.ropeScaling.originalMaxPosition << ")";
  if (cache &&
      (failed(buildStepFunction(b, "prefill", kDyn, /*fresh=*/true, config,
                                *cache, body)) ||
       failed(buildStepFunction(b, "decode", 1, /*fresh=*/false, config,
                                *cache, body)) ||
       (config.kvCache.appendStep &&
        failed(buildStepFunction(b, "append", kDyn, /*fresh=*/false, config,
                                 *cache, body)))))
    return nullptr;
  return module;
}

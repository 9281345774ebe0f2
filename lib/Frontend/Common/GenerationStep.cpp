//===- GenerationStep.cpp - the signature of a generation step --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Frontend/GenerationStep.h"

#include "dialects/Mnemo/IR/MnemoOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::mnemo;

namespace {
constexpr int64_t kDyn = ShapedType::kDynamic;
} // namespace

FloatType mnemo::kvCacheElementType(KVCacheDType dtype, Builder &b) {
  switch (dtype) {
  case KVCacheDType::BF16:
    return b.getBF16Type();
  case KVCacheDType::F16:
    return b.getF16Type();
  case KVCacheDType::FP8:
    return b.getType<Float8E4M3FNType>();
  case KVCacheDType::F32:
    break;
  }
  return b.getF32Type();
}

func::FuncOp
mnemo::createNamedFunction(ImplicitLocOpBuilder &b, StringRef name,
                           ArrayRef<std::pair<std::string, Type>> inputs,
                           ArrayRef<std::pair<std::string, Type>> results) {
  SmallVector<Type> argTypes, resultTypes;
  for (auto &[n, t] : inputs)
    argTypes.push_back(t);
  for (auto &[n, t] : results)
    resultTypes.push_back(t);
  auto func =
      func::FuncOp::create(b, name, b.getFunctionType(argTypes, resultTypes));
  for (auto [i, input] : llvm::enumerate(inputs))
    func.setArgAttr(i, "mnemo.name", b.getStringAttr(input.first));
  for (auto [i, result] : llvm::enumerate(results))
    func.setResultAttr(i, "mnemo.name", b.getStringAttr(result.first));
  return func;
}

GenerationStep mnemo::createGenerationStep(ImplicitLocOpBuilder &b,
                                           StringRef name, int64_t seqLen,
                                           int64_t vocab,
                                           const KVCacheOptions &options,
                                           ArrayRef<StepLayerCache> layers,
                                           bool lastTokenLogits) {
  lastTokenLogits = lastTokenLogits && ShapedType::isDynamic(seqLen);
  Type i64 = b.getI64Type();
  FloatType cache = kvCacheElementType(options.dtype, b);
  int64_t pageSize = options.pageSize;
  bool fp8 = options.dtype == KVCacheDType::FP8;
  // Per layer: key and value pools, then (FP8) their scales.
  SmallVector<std::pair<std::string, Type>> pools;
  SmallVector<std::optional<int64_t>> windows;
  // Per pool: which of its rows the steps read (ExtraPool).
  SmallVector<std::pair<int64_t, int64_t>> reads;
  for (auto [l, entry] : llvm::enumerate(layers)) {
    const StepLayerCache &layer = entry;
    auto pool = [&](int64_t dim) {
      return RankedTensorType::get({kDyn, layer.heads, pageSize, dim}, cache);
    };
    auto scales = RankedTensorType::get({kDyn, layer.heads, pageSize},
                                        b.getF32Type());
    std::string prefix = "cache." + std::to_string(l) + ".";
    pools.push_back({prefix + "key", pool(layer.keyDim)});
    if (layer.valueDim)
      pools.push_back({prefix + "value", pool(layer.valueDim)});
    if (fp8) {
      pools.push_back({prefix + "key_scale", scales});
      if (layer.valueDim)
        pools.push_back({prefix + "value_scale", scales});
    }
    auto side = [&](int64_t dim) {
      return RankedTensorType::get({kDyn, 1, pageSize, dim},
                                   fp8 ? b.getBF16Type() : cache);
    };
    if (layer.indexKeyDim)
      pools.push_back({prefix + "index_key", side(layer.indexKeyDim)});
    reads.resize(pools.size(), {0, layer.readWindow});
    for (const ExtraPool &extra : layer.extraPools) {
      pools.push_back({prefix + extra.name, side(extra.width)});
      reads.push_back({extra.every, extra.last});
    }
    windows.resize(pools.size(), layer.window);
  }
  auto tableType = RankedTensorType::get({kDyn, kDyn}, b.getI32Type());
  SmallVector<std::pair<std::string, Type>> inputs = {
      {"input_ids", RankedTensorType::get({kDyn, seqLen}, i64)},
      {"positions", RankedTensorType::get({kDyn, seqLen}, i64)},
      {"block_table", tableType},
      {"context_lengths", RankedTensorType::get({kDyn}, i64)}};
  // A table per rate of the entry pools, in increasing order.
  SmallVector<int64_t> rates;
  for (auto [every, last] : reads)
    if (every)
      rates.push_back(every);
  llvm::sort(rates);
  rates.erase(llvm::unique(rates), rates.end());
  for (int64_t rate : rates)
    inputs.push_back({"block_table.every." + std::to_string(rate), tableType});
  unsigned firstPool = inputs.size();
  inputs.append(pools.begin(), pools.end());
  SmallVector<std::pair<std::string, Type>> results = {
      {"logits",
       RankedTensorType::get({kDyn, lastTokenLogits ? 1 : seqLen, vocab},
                             b.getF32Type())}};
  results.append(pools.begin(), pools.end());

  func::FuncOp func = createNamedFunction(b, name, inputs, results);
  auto kinds = [&](StringRef k) { return b.getStrArrayAttr({k}); };
  func.setArgAttr(3, "mnemo.dim_kinds", kinds("batch"));
  for (unsigned i = 0; i < pools.size(); ++i) {
    func.setArgAttr(firstPool + i, "mnemo.in_place", b.getUnitAttr());
    func.setArgAttr(firstPool + i, "mnemo.dim_kinds", kinds("pages"));
    if (windows[i])
      func.setArgAttr(firstPool + i, "mnemo.kv_window",
                      b.getI64IntegerAttr(*windows[i]));
    if (int64_t every = reads[i].first)
      func.setArgAttr(firstPool + i, "mnemo.kv_every",
                      b.getI64IntegerAttr(every));
    if (int64_t last = reads[i].second)
      func.setArgAttr(firstPool + i, "mnemo.kv_last",
                      b.getI64IntegerAttr(last));
    func.setResultAttr(1 + i, "mnemo.in_place_of",
                       b.getI64IntegerAttr(firstPool + i));
  }

  b.setInsertionPointToStart(func.addEntryBlock());
  GenerationStep step;
  step.func = func;
  step.lastTokenLogits = lastTokenLogits;
  step.inputIds = func.getArgument(0);
  step.positions = func.getArgument(1);
  step.blockTable = func.getArgument(2);
  step.contextLengths = func.getArgument(3);
  for (auto [i, rate] : llvm::enumerate(rates))
    step.entryTables.push_back({rate, func.getArgument(4 + i)});
  unsigned next = firstPool;
  for (const StepLayerCache &layer : layers) {
    step.keys.push_back(func.getArgument(next++));
    step.values.push_back(layer.valueDim ? func.getArgument(next++) : Value());
    if (fp8) {
      step.keyScales.push_back(func.getArgument(next++));
      step.valueScales.push_back(layer.valueDim ? func.getArgument(next++)
                                                : Value());
    }
    step.indexKeys.push_back(layer.indexKeyDim ? func.getArgument(next++)
                                               : Value());
    SmallVector<Value> extras;
    for (size_t k = 0; k < layer.extraPools.size(); ++k)
      extras.push_back(func.getArgument(next++));
    step.extras.push_back(extras);
  }
  return step;
}

void mnemo::writeCache(ImplicitLocOpBuilder &b, GenerationStep &step,
                       int64_t layer, Value key, Value value) {
  bool fp8 = !step.keyScales.empty();
  writePool(b, step, step.keys[layer], key, step.positions,
            fp8 ? &step.keyScales[layer] : nullptr);
  if (!step.values[layer]) {
    assert(!value && "a value for a layer without a value pool");
    return;
  }
  writePool(b, step, step.values[layer], value, step.positions,
            fp8 ? &step.valueScales[layer] : nullptr);
}

/// The first `n` features (last dim) of the rank-4 tensor `x`, a
/// tensor.extract_slice at offset 0.
static Value leadingFeatures(ImplicitLocOpBuilder &b, Value x, int64_t n) {
  SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)),
      strides(4, b.getIndexAttr(1)), sizes;
  for (int64_t i = 0; i < 3; ++i)
    sizes.push_back(tensor::getMixedSize(b, b.getLoc(), x, i));
  sizes.push_back(b.getIndexAttr(n));
  return tensor::ExtractSliceOp::create(b, x, offsets, sizes, strides);
}

std::pair<Value, Value> mnemo::valuePool(ImplicitLocOpBuilder &b,
                                         const GenerationStep &step,
                                         int64_t layer, int64_t dv) {
  bool fp8 = !step.keyScales.empty();
  if (step.values[layer])
    return {step.values[layer], fp8 ? step.valueScales[layer] : Value()};
  return {leadingFeatures(b, step.keys[layer], dv),
          fp8 ? step.keyScales[layer] : Value()};
}

void mnemo::writeIndexKeys(ImplicitLocOpBuilder &b, GenerationStep &step,
                           int64_t layer, Value key) {
  writePool(b, step, step.indexKeys[layer], key, step.positions);
}

Value mnemo::blockTableOf(const GenerationStep &step, int64_t every) {
  if (!every)
    return step.blockTable;
  for (auto [rate, table] : step.entryTables)
    if (rate == every)
      return table;
  llvm_unreachable("no block table for pools of this rate");
}

void mnemo::writePool(ImplicitLocOpBuilder &b, GenerationStep &step,
                      Value &pool, Value rows, Value positions, Value *scales,
                      int64_t every) {
  SmallVector<Type> types = {pool.getType()};
  SmallVector<Value> operands = {rows, pool, positions,
                                 blockTableOf(step, every)};
  if (scales) {
    types.push_back(scales->getType());
    operands.push_back(*scales);
  }
  auto op = KVCacheWriteOp::create(b, types, operands);
  pool = op.getResult();
  if (scales)
    *scales = op.getResultScales();
}

Value mnemo::lastTokenRows(ImplicitLocOpBuilder &b, const GenerationStep &step,
                           Value h) {
  auto type = cast<RankedTensorType>(h.getType());
  Type i64 = b.getI64Type();
  Value batch = tensor::DimOp::create(b, h, 0);
  // The tokens of each row: its positions that are not -1.
  Value zero = arith::ConstantOp::create(b, b.getI64IntegerAttr(0));
  Value counts =
      linalg::FillOp::create(b, zero,
                             ValueRange{tensor::EmptyOp::create(
                                 b, ArrayRef<OpFoldResult>{batch}, i64)})
          .getResult(0);
  MLIRContext *ctx = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
             d2 = getAffineDimExpr(2, ctx);
  counts =
      linalg::GenericOp::create(
          b, counts.getType(), ValueRange{step.positions}, ValueRange{counts},
          ArrayRef<AffineMap>{AffineMap::get(2, 0, {d0, d1}, ctx),
                              AffineMap::get(2, 0, {d0}, ctx)},
          ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                        utils::IteratorType::reduction},
          [&](OpBuilder &nb, Location loc, ValueRange args) {
            Value real = arith::CmpIOp::create(
                nb, loc, arith::CmpIPredicate::sge, args[0],
                arith::ConstantOp::create(nb, loc, nb.getI64IntegerAttr(0)));
            Value one = arith::ExtUIOp::create(nb, loc, nb.getI64Type(), real);
            linalg::YieldOp::create(
                nb, loc,
                ValueRange{arith::AddIOp::create(nb, loc, args[1], one)});
          })
          .getResult(0);
  // Row b of the result is h[b, max(count_b - 1, 0), :].
  SmallVector<int64_t> shape(type.getShape());
  shape[1] = 1;
  auto resultType = type.clone(shape);
  OpFoldResult width =
      ShapedType::isDynamic(shape[2])
          ? OpFoldResult(tensor::DimOp::create(b, h, 2).getResult())
          : OpFoldResult(b.getIndexAttr(shape[2]));
  Value init = tensor::EmptyOp::create(
      b, ArrayRef<OpFoldResult>{batch, b.getIndexAttr(1), width},
      type.getElementType());
  return linalg::GenericOp::create(
             b, resultType, ValueRange{counts}, ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::get(3, 0, {d0}, ctx),
                                 AffineMap::get(3, 0, {d0, d1, d2}, ctx)},
             SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location loc, ValueRange args) {
               Value last = arith::MaxSIOp::create(
                   nb, loc,
                   arith::SubIOp::create(nb, loc, args[0],
                                         arith::ConstantOp::create(
                                             nb, loc, nb.getI64IntegerAttr(1))),
                   arith::ConstantOp::create(nb, loc, nb.getI64IntegerAttr(0)));
               Value row = linalg::IndexOp::create(nb, loc, 0);
               Value col = linalg::IndexOp::create(nb, loc, 2);
               Value at =
                   arith::IndexCastOp::create(nb, loc, nb.getIndexType(), last);
               Value x = tensor::ExtractOp::create(nb, loc, h,
                                                   ValueRange{row, at, col});
               linalg::YieldOp::create(nb, loc, x);
             })
      .getResult(0);
}

void mnemo::finishGenerationStep(ImplicitLocOpBuilder &b,
                                 GenerationStep &step, Value logits) {
  Type logitsType = step.func.getResultTypes()[0];
  if (logits.getType() != logitsType)
    logits = tensor::CastOp::create(b, logitsType, logits);
  SmallVector<Value> returned = {logits};
  bool fp8 = !step.keyScales.empty();
  for (size_t l = 0; l < step.keys.size(); ++l) {
    returned.push_back(step.keys[l]);
    if (step.values[l])
      returned.push_back(step.values[l]);
    if (fp8) {
      returned.push_back(step.keyScales[l]);
      if (step.valueScales[l])
        returned.push_back(step.valueScales[l]);
    }
    if (step.indexKeys[l])
      returned.push_back(step.indexKeys[l]);
    returned.append(step.extras[l].begin(), step.extras[l].end());
  }
  func::ReturnOp::create(b, returned);
}

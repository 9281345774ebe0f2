//===- RopeOnLoad.cpp - RoPE applied to attention tiles ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "RopeOnLoad.h"

#include "TensorCoreBuilder.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/IR/RopeFrequencies.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace {

bool isStatic(Value v) {
  return cast<RankedTensorType>(v.getType()).hasStaticShape();
}

/// Index `s` of a [B, S, ...] / [1, S, ...] / [S, ...] tensor `t` in batch
/// `batch`, followed by `rest`.
SmallVector<Value> batchedIndex(ImplicitLocOpBuilder &b, Value t, Value batch,
                                Value s, ArrayRef<Value> rest,
                                int64_t unbatchedRank) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<Value> at;
  if (type.getRank() > unbatchedRank)
    at.push_back(type.getDimSize(0) == 1 ? indexConstant(b, 0) : batch);
  at.push_back(s);
  at.append(rest.begin(), rest.end());
  return at;
}

Value loadF32(ImplicitLocOpBuilder &b, Value memref, ValueRange at) {
  Value v = memref::LoadOp::create(b, memref, at);
  if (!v.getType().isF32())
    v = arith::ExtFOp::create(b, b.getF32Type(), v);
  return v;
}

} // namespace

RopeOnLoad mlir::mnemo::nvptx::matchRopeOnLoad(Value operand, Type elem,
                                               std::string &why) {
  RopeOnLoad rope;
  Operation *def = operand.getDefiningOp();
  if (!def || !isa<mnemo::RopeOp, mnemo::RopeTablesOp>(def))
    return rope;
  auto type = cast<RankedTensorType>(operand.getType());
  Value input = def->getOperand(0);
  if (!operand.hasOneUse())
    return why = "its result has other users", rope;
  if (input.getType() != type || type.getElementType() != elem)
    return why = "its input type differs from its result's", rope;
  if (auto op = dyn_cast<mnemo::RopeOp>(def)) {
    if (!isStatic(op.getPositions()))
      return why = "dynamic positions", rope;
    mnemo::RopeScalingAttr scaling = op.getScalingOrDefault();
    // Dynamic NTK's base depends on the largest position.
    if (scaling.getKind() == mnemo::RopeScalingKind::Dynamic)
      return why = "dynamic NTK scaling", rope;
    rope.rotaryDim = op.getRotaryDimOrDefault();
    for (double f : mnemo::computeRopeInverseFrequencies(
             op.getTheta().convertToDouble(), rope.rotaryDim, scaling))
      rope.invFreq.push_back(static_cast<float>(f));
    rope.factor = scaling.getEffectiveAttentionFactor();
    rope.positions = op.getPositions();
    rope.interleaved = op.getInterleaved();
  } else {
    auto tables = cast<mnemo::RopeTablesOp>(def);
    if (!isStatic(tables.getCos()) || !isStatic(tables.getSin()))
      return why = "dynamic tables", rope;
    rope.rotaryDim = tables.getRotaryDim();
    rope.tables = true;
    rope.cos = tables.getCos();
    rope.sin = tables.getSin();
    rope.interleaved = tables.getInterleaved();
  }
  if (rope.rotaryDim <= 0 || rope.rotaryDim % 2 ||
      rope.rotaryDim > type.getDimSize(3))
    return why = "rotary width not even or above the head dim", RopeOnLoad();
  rope.op = def;
  rope.input = input;
  return rope;
}

void mlir::mnemo::nvptx::createRopeBuffers(ImplicitLocOpBuilder &b,
                                           RopeOnLoad &rope) {
  if (rope.tables) {
    rope.buffers[0] = readOnlyBuffer(b, rope.cos);
    rope.buffers[1] = readOnlyBuffer(b, rope.sin);
    return;
  }
  rope.buffers[0] = readOnlyBuffer(b, rope.positions);
  auto type = RankedTensorType::get(
      {static_cast<int64_t>(rope.invFreq.size())}, b.getF32Type());
  Value table = arith::ConstantOp::create(
      b, type, DenseElementsAttr::get(type, ArrayRef<float>(rope.invFreq)));
  rope.buffers[1] = readOnlyBuffer(b, table);
}

std::pair<Value, Value>
mlir::mnemo::nvptx::ropePairColumns(ImplicitLocOpBuilder &b,
                                    const RopeOnLoad &rope, Value k) {
  if (rope.interleaved) {
    Value a = arith::MulIOp::create(b, k, indexConstant(b, 2));
    return {a, arith::AddIOp::create(b, a, indexConstant(b, 1))};
  }
  return {k, arith::AddIOp::create(b, k, indexConstant(b, rope.rotaryDim / 2))};
}

std::pair<Value, Value>
mlir::mnemo::nvptx::rotatePair(ImplicitLocOpBuilder &b, const RopeOnLoad &rope,
                               Value batch, Value s, Value k, Value x,
                               Value y) {
  Value cosA, sinA, cosB, sinB;
  if (rope.tables) {
    auto [ca, cb] = ropePairColumns(b, rope, k);
    auto at = [&](Value col) {
      return batchedIndex(b, rope.cos, batch, s, {col}, 2);
    };
    cosA = loadF32(b, rope.buffers[0], at(ca));
    sinA = loadF32(b, rope.buffers[1], at(ca));
    cosB = loadF32(b, rope.buffers[0], at(cb));
    sinB = loadF32(b, rope.buffers[1], at(cb));
  } else {
    Value pos = memref::LoadOp::create(
        b, rope.buffers[0], batchedIndex(b, rope.positions, batch, s, {}, 1));
    Value angle = arith::MulFOp::create(
        b, arith::SIToFPOp::create(b, b.getF32Type(), pos),
        memref::LoadOp::create(b, rope.buffers[1], ValueRange{k}));
    cosA = cosB = math::CosOp::create(b, angle);
    sinA = sinB = math::SinOp::create(b, angle);
    if (rope.factor != 1.0) {
      Value f = f32Constant(b, rope.factor);
      cosA = cosB = arith::MulFOp::create(b, cosA, f);
      sinA = sinB = arith::MulFOp::create(b, sinA, f);
    }
  }
  // As the reference: self * cos + (negated) partner * sin.
  Value rx = arith::AddFOp::create(
      b, arith::MulFOp::create(b, x, cosA),
      arith::MulFOp::create(b, arith::NegFOp::create(b, y), sinA));
  Value ry = arith::AddFOp::create(b, arith::MulFOp::create(b, y, cosB),
                                   arith::MulFOp::create(b, x, sinB));
  return {rx, ry};
}

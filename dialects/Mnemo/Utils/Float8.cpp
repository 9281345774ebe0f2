//===- Float8.cpp - FP8 E4M3 conversions as integer ops ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Utils/Float8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace {

/// E4M3's exponent bias against f32's: 127 - 7.
constexpr int64_t kBiasShift = 120;
/// The smallest normal E4M3, 2^-6, and the subnormals' step, 2^-9.
constexpr double kMinNormal = 0.015625, kSubnormalStep = 0.001953125;
/// The largest E4M3 (448) as its code: exponent 15, mantissa 6.
constexpr int64_t kMaxCode = 0x7e;

struct IntBuilder {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value f(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value andi(Value x, int64_t m) { return arith::AndIOp::create(b, loc, x, c(m)); }
  Value shr(Value x, int64_t n) { return arith::ShRUIOp::create(b, loc, x, c(n)); }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, loc, x, c(n)); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value bits(Value f32) {
    return arith::BitcastOp::create(b, loc, b.getI32Type(), f32);
  }
  Value real(Value i32) {
    return arith::BitcastOp::create(b, loc, b.getF32Type(), i32);
  }
};

} // namespace

Value mlir::mnemo::encodeE4M3(OpBuilder &b, Location loc, Value x) {
  IntBuilder i{b, loc};
  Value bits = i.bits(x);
  Value sign = i.andi(i.shr(bits, 24), 0x80);
  Value magnitude = i.andi(bits, 0x7fffffff);
  // Normal: round f32's 23-bit mantissa to 3 bits (nearest even), rebias.
  Value odd = i.andi(i.shr(magnitude, 20), 1);
  Value rounded = i.add(i.add(magnitude, i.c(0x7ffff)), odd);
  Value normal = arith::SubIOp::create(b, loc, i.shr(rounded, 20),
                                       i.c(kBiasShift << 3));
  normal = arith::MinSIOp::create(b, loc, normal, i.c(kMaxCode));
  // Subnormal: a multiple of 2^-9 (8 of them is the smallest normal).
  Value a = i.real(magnitude);
  Value steps = math::RoundEvenOp::create(
      b, loc, arith::MulFOp::create(b, loc, a, i.f(1.0 / kSubnormalStep)));
  Value subnormal = arith::FPToSIOp::create(b, loc, b.getI32Type(), steps);
  Value isNormal = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, a,
                                         i.f(kMinNormal));
  Value code = arith::SelectOp::create(b, loc, isNormal, normal, subnormal);
  Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(),
                                       i.ori(sign, code));
  return arith::BitcastOp::create(b, loc, b.getType<Float8E4M3FNType>(),
                                  byte);
}

Value mlir::mnemo::decodeE4M3(OpBuilder &b, Location loc, Value x) {
  IntBuilder i{b, loc};
  Value byte = arith::BitcastOp::create(b, loc, b.getI8Type(), x);
  Value bits = arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
  Value exponent = i.andi(i.shr(bits, 3), 0xf);
  Value mantissa = i.andi(bits, 7);
  Value normal = i.real(i.ori(i.shl(i.add(exponent, i.c(kBiasShift)), 23),
                              i.shl(mantissa, 20)));
  Value subnormal = arith::MulFOp::create(
      b, loc, arith::SIToFPOp::create(b, loc, b.getF32Type(), mantissa),
      i.f(kSubnormalStep));
  Value isNormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                         exponent, i.c(0));
  Value magnitude = arith::SelectOp::create(b, loc, isNormal, normal, subnormal);
  // The sign moves to f32's bit 31.
  Value sign = i.shl(i.andi(bits, 0x80), 24);
  return i.real(i.ori(i.bits(magnitude), sign));
}

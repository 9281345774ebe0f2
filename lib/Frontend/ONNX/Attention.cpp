//===- Attention.cpp - ONNX Attention-23 as mnemo.attention -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ai.onnx Attention (opset 23) with 4-D inputs [B, H, S, D] becomes one
// mnemo.attention: GQA when Q has more heads than K/V, `is_causal` as the
// top-left aligned causal mask (no past), `scale` (default 1/sqrt(D)), and a
// float attn_mask added to the scores or a boolean one (true = attend) turned
// into 0 / -inf. The parts not imported yet are refused with an error
// naming them, never approximated: 3-D inputs, past_key/past_value and the
// present outputs, nonpad_kv_seqlen, softcap, qk_matmul_output_mode.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "dialects/Mnemo/IR/MnemoOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Verifier.h"
#include <limits>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {

/// A boolean mask as an additive float mask: 0 where true, -inf elsewhere.
FailureOr<Value> additiveMask(NodeContext &ctx, Value mask, Type element) {
  auto type = cast<RankedTensorType>(mask.getType());
  if (isa<FloatType>(type.getElementType()))
    return mask;
  if (!type.getElementType().isInteger(1))
    return ctx.error("attn_mask must be a float or boolean tensor");
  return broadcastElementwise(
      ctx, mask, element,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value zero = arith::ConstantOp::create(b, loc, element,
                                               b.getFloatAttr(element, 0.0));
        Value negInf = arith::ConstantOp::create(
            b, loc, element,
            b.getFloatAttr(element, -std::numeric_limits<double>::infinity()));
        return arith::SelectOp::create(b, loc, args[0], zero, negInf);
      },
      type.getShape());
}

LogicalResult attention(NodeContext &ctx) {
  for (unsigned i : {4u, 5u, 6u})
    if (ctx.hasInput(i))
      return ctx.error(i == 6 ? "nonpad_kv_seqlen is not supported yet"
                              : "past_key/past_value are not supported yet");
  for (unsigned i = 1; i < ctx.numOutputs(); ++i)
    if (!ctx.proto().output(i).empty())
      return ctx.error("only output Y is supported yet (present_key, "
                       "present_value and qk_matmul_output are not)");
  if (ctx.getFloat("softcap", 0.0f) != 0.0f)
    return ctx.error("softcap is not supported yet");
  if (ctx.getInt("qk_matmul_output_mode", 0) != 0)
    return ctx.error("qk_matmul_output_mode is not supported yet");

  FailureOr<Value> q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  if (failed(q) || failed(k) || failed(v))
    return failure();
  auto qType = cast<RankedTensorType>(q->getType());
  auto kType = cast<RankedTensorType>(k->getType());
  auto vType = cast<RankedTensorType>(v->getType());
  if (qType.getRank() != 4 || kType.getRank() != 4 || vType.getRank() != 4)
    return ctx.error("only 4-D Q, K, V [B, H, S, D] are supported yet");
  for (auto [what, type] : {std::pair{"Q", qType}, {"K", kType}, {"V", vType}})
    if (type.isDynamicDim(1) || type.isDynamicDim(3))
      return ctx.error(llvm::Twine(what) +
                       " needs static head count and head size");
  int64_t hq = qType.getDimSize(1), hkv = kType.getDimSize(1);
  if (hkv == 0 || hq % hkv != 0 || vType.getDimSize(1) != hkv)
    return ctx.error("Q heads (" + llvm::Twine(hq) +
                     ") must be a multiple of K/V heads (" + llvm::Twine(hkv) +
                     ")");

  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  Value mask;
  if (ctx.hasInput(3)) {
    FailureOr<Value> m = ctx.input(3);
    if (failed(m))
      return failure();
    if (cast<RankedTensorType>(m->getType()).getRank() < 2)
      return ctx.error("attn_mask of rank below 2 is not supported yet");
    FailureOr<Value> additive =
        additiveMask(ctx, *m, qType.getElementType());
    if (failed(additive))
      return failure();
    mask = *additive;
  }
  FloatAttr scale;
  if (ctx.attr("scale"))
    scale = b.getF64FloatAttr(ctx.getFloat("scale", 1.0f));
  SmallVector<int64_t> shape = {qType.getDimSize(0), hq, qType.getDimSize(2),
                                vType.getDimSize(3)};
  auto resultType = RankedTensorType::get(shape, qType.getElementType());
  Value y = AttentionOp::create(
      b, loc, resultType, *q, *k, *v, mask, /*sink=*/Value(),
      /*q_offset=*/Value(),
      ctx.getInt("is_causal", 0) ? b.getUnitAttr() : UnitAttr(),
      /*window=*/IntegerAttr(), scale, /*softcap=*/FloatAttr());
  if (failed(mlir::verify(y.getDefiningOp())))
    return ctx.error("inputs do not form a valid attention");
  ctx.raised("attention (Attention)");
  return ctx.setOutput(0, y);
}

} // namespace

void mlir::mnemo::onnx_import::registerAttentionHandlers(HandlerRegistry &r) {
  r.add("", "Attention", 23, attention);
}

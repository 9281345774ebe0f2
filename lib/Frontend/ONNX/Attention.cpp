//===- Attention.cpp - ONNX Attention-23/24 as mnemo.attention --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ai.onnx Attention becomes one mnemo.attention:
// * 4-D inputs [B, H, S, D], or 3-D [B, S, H*D] with q_num_heads and
//   kv_num_heads (split into heads before, merged after);
// * GQA when Q has more heads than K/V; `scale` (default 1/sqrt(D));
//   `softcap` (applied before the mask, as mnemo.attention does);
// * past_key/past_value concatenated in front of K/V along the sequence,
//   the results being present_key/present_value;
// * `is_causal` bottom-right aligned after the past (query i sees keys
//   j <= i + past length), top-left without one;
// * attn_mask, float (added) or boolean (true = attend), of rank 2 to 4,
//   possibly shorter than the keys (the rest is masked);
// * nonpad_kv_seqlen (opset 24): keys at and past nonpad_kv_seqlen[b] are
//   masked and, without a past, the causal frontier is per batch
//   (j <= i + nonpad_kv_seqlen[b] - Sq).
// * left_window_size/right_window_size (opset 25): keys before p - left or
//   after p + right are hidden (p: the query's position).
// Masks the op's attributes cannot say (padding, per-batch frontiers,
// non-causal windows, short masks) are built as one additive mask
// (AttentionMasks.cpp), as is the optional qk_matmul_output at each of its
// four modes. softmax_precision changes nothing: the softmax is computed in
// f32.
//
//===----------------------------------------------------------------------===//

#include "AttentionMasks.h"
#include "Importer.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::onnx_import;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// A boolean mask as an additive float mask: 0 where true, -inf elsewhere.
FailureOr<Value> additiveMask(NodeContext &ctx, Value mask, Type element) {
  auto type = cast<RankedTensorType>(mask.getType());
  if (isa<FloatType>(type.getElementType()))
    return mask;
  return broadcastElementwise(
      ctx, mask, element,
      [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return arith::SelectOp::create(
            b, loc, args[0], builders::floatConst(b, loc, element, 0.0),
            builders::floatConst(b, loc, element, kNegInf));
      },
      type.getShape());
}

LogicalResult attention(NodeContext &ctx) {
  int64_t mode = ctx.getInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return ctx.error("qk_matmul_output_mode must be 0 to 3, got " +
                     llvm::Twine(mode));

  FailureOr<Value> q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  if (failed(q) || failed(k) || failed(v))
    return failure();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.getLoc();
  int64_t rank = cast<RankedTensorType>(q->getType()).getRank();
  for (Value x : {*k, *v})
    if (cast<RankedTensorType>(x.getType()).getRank() != rank)
      return ctx.error("Q, K and V must have the same rank");
  if (rank == 3) {
    int64_t hq = ctx.getInt("q_num_heads", 0);
    int64_t hkv = ctx.getInt("kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0)
      return ctx.error("3-D inputs need q_num_heads and kv_num_heads");
    for (auto [what, x, heads] :
         {std::tuple{"Q", *q, hq}, {"K", *k, hkv}, {"V", *v, hkv}}) {
      auto t = cast<RankedTensorType>(x.getType());
      if (t.isDynamicDim(2) || t.getDimSize(2) % heads != 0)
        return ctx.error(llvm::Twine(what) + " hidden size (" +
                         llvm::Twine(t.getDimSize(2)) +
                         ") is not a static multiple of its head count (" +
                         llvm::Twine(heads) + ")");
    }
    *q = splitHeads(b, loc, *q, hq);
    *k = splitHeads(b, loc, *k, hkv);
    *v = splitHeads(b, loc, *v, hkv);
  } else if (rank != 4) {
    return ctx.error("Q, K and V must be 3-D [B, S, H*D] or 4-D [B, H, S, D]");
  }

  // The past in front of the new keys and values.
  if (ctx.hasInput(4) != ctx.hasInput(5))
    return ctx.error("past_key and past_value must be given together");
  Value pastLength;
  if (ctx.hasInput(4)) {
    FailureOr<Value> pk = ctx.input(4), pv = ctx.input(5);
    if (failed(pk) || failed(pv))
      return failure();
    for (Value p : {*pk, *pv})
      if (cast<RankedTensorType>(p.getType()).getRank() != 4)
        return ctx.error("past_key/past_value must be 4-D [B, H, P, D]");
    pastLength = tensor::DimOp::create(b, loc, *pk, 2);
    *k = concatValues(b, loc, {*pk, *k}, 2);
    *v = concatValues(b, loc, {*pv, *v}, 2);
  }
  for (unsigned i : {1u, 2u})
    if (i < ctx.numOutputs() && !ctx.proto().output(i).empty()) {
      if (!pastLength)
        return ctx.error("present_key/present_value need past_key/past_value");
      if (failed(ctx.setOutput(i, i == 1 ? *k : *v)))
        return failure();
    }

  auto qType = cast<RankedTensorType>(q->getType());
  auto kType = cast<RankedTensorType>(k->getType());
  auto vType = cast<RankedTensorType>(v->getType());
  for (auto [what, type] : {std::pair{"Q", qType}, {"K", kType}, {"V", vType}})
    if (type.isDynamicDim(1) || type.isDynamicDim(3))
      return ctx.error(llvm::Twine(what) +
                       " needs static head count and head size");
  int64_t hq = qType.getDimSize(1), hkv = kType.getDimSize(1);
  if (hkv == 0 || hq % hkv != 0 || vType.getDimSize(1) != hkv)
    return ctx.error("Q heads (" + llvm::Twine(hq) +
                     ") must be a multiple of K/V heads (" + llvm::Twine(hkv) +
                     ")");

  MaskSpec spec;
  spec.pastLength = pastLength;
  if (ctx.hasInput(3)) {
    FailureOr<Value> m = ctx.input(3);
    if (failed(m))
      return failure();
    auto t = cast<RankedTensorType>(m->getType());
    if (t.getRank() < 1 || t.getRank() > 4)
      return ctx.error("attn_mask must have rank 1 to 4");
    if (!isa<FloatType>(t.getElementType()) &&
        !t.getElementType().isInteger(1))
      return ctx.error("attn_mask must be a float or boolean tensor");
    spec.mask = *m;
  }
  if (ctx.hasInput(6)) {
    FailureOr<Value> n = ctx.input(6);
    if (failed(n))
      return failure();
    auto t = cast<RankedTensorType>(n->getType());
    if (t.getRank() != 1 || !isa<IntegerType>(t.getElementType()))
      return ctx.error("nonpad_kv_seqlen must be a 1-D integer tensor [B]");
    spec.nonpad = *n;
  }
  spec.causal = ctx.getInt("is_causal", 0) != 0;
  spec.left = ctx.getInt("left_window_size", -1);
  spec.right = ctx.getInt("right_window_size", -1);
  if (spec.left < -1 || spec.right < -1)
    return ctx.error("left_window_size/right_window_size must be -1 or more");
  if (spec.causal)
    spec.right = -1;

  // The op's attributes say causal (bottom-right after the past) and a
  // causal left window; everything else goes into one additive mask.
  auto maskType = spec.mask ? cast<RankedTensorType>(spec.mask.getType())
                            : RankedTensorType();
  bool combine =
      spec.nonpad || spec.right >= 0 || (spec.left >= 0 && !spec.causal) ||
      (maskType && (maskType.getRank() < 2 ||
                    maskType.getDimSize(maskType.getRank() - 1) !=
                        kType.getDimSize(2)));
  Value mask, qOffset;
  bool causal = spec.causal;
  IntegerAttr window;
  if (combine) {
    mask = combinedMask(b, loc, spec, *q, *k);
    causal = false;
  } else {
    if (spec.mask) {
      FailureOr<Value> additive =
          additiveMask(ctx, spec.mask, qType.getElementType());
      if (failed(additive))
        return failure();
      mask = *additive;
    }
    if (causal)
      qOffset = pastLength;
    if (spec.left >= 0)
      window = b.getI64IntegerAttr(spec.left + 1);
  }

  double scaleValue =
      ctx.attr("scale") ? ctx.getFloat("scale", 1.0f)
                        : 1.0 / std::sqrt(double(qType.getDimSize(3)));
  FloatAttr scale, softcap;
  if (ctx.attr("scale"))
    scale = b.getF64FloatAttr(scaleValue);
  float softcapValue = ctx.getFloat("softcap", 0.0f);
  if (softcapValue > 0.0f)
    softcap = b.getF64FloatAttr(softcapValue);
  if (ctx.numOutputs() > 3 && !ctx.proto().output(3).empty()) {
    Value bias = mode >= 2 ? combinedMask(b, loc, spec, *q, *k) : Value();
    Value scores =
        attentionScores(b, loc, *q, *k, scaleValue, softcapValue, bias, mode,
                        qType.getElementType());
    if (failed(ctx.setOutput(3, scores)))
      return failure();
  }
  SmallVector<int64_t> shape = {qType.getDimSize(0), hq, qType.getDimSize(2),
                                vType.getDimSize(3)};
  auto resultType = RankedTensorType::get(shape, qType.getElementType());
  Value y = AttentionOp::create(
      b, loc, resultType, *q, *k, *v, mask, /*sink=*/Value(), qOffset,
      causal ? b.getUnitAttr() : UnitAttr(), window, scale, softcap);
  if (failed(ctx.verifyBuilt(y.getDefiningOp(),
                             "inputs do not form a valid attention")))
    return failure();
  ctx.raised("attention (Attention)");
  if (rank == 3)
    y = mergeHeads(b, loc, y);
  return ctx.setOutput(0, y);
}

} // namespace

void mlir::mnemo::onnx_import::registerAttentionHandlers(HandlerRegistry &r) {
  r.add("", "Attention", 23, attention);
}

//===- LlamaFamily.cpp - Llama-family decoder builder -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Emits transformers' LlamaForCausalLM / MistralForCausalLM /
// Qwen3ForCausalLM forward pass over `input_ids` [B, S] at positions
// 0..S-1: pre-norm decoder layers of GQA attention (Qwen3: per-head RMSNorm
// on q and k before RoPE; Mistral: sliding window) and a SwiGLU MLP, then
// the final norm and the LM head (the embedding when tied). Reshapes and
// residual adds use upstream tensor and linalg ops, as
// examples/tiny-decoder does.
//
//===----------------------------------------------------------------------===//

#include "LlamaFamily.h"

#include "dialects/Mnemo/IR/MnemoAttrs.h"
#include "dialects/Mnemo/IR/MnemoOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Endian.h"

using namespace mlir;
using namespace mlir::mnemo;

static constexpr int64_t kDyn = ShapedType::kDynamic;

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// Widens F16/BF16 (or copies F32) little-endian data to floats.
static std::vector<float> toFloats(const SafetensorsTensor &tensor) {
  size_t size = getDTypeSize(tensor.dtype);
  size_t count = tensor.bytes.size() / size;
  std::vector<float> values(count);
  const char *data = tensor.bytes.data();
  for (size_t i = 0; i < count; ++i) {
    uint16_t bits = llvm::support::endian::read16le(data + i * size);
    if (tensor.dtype == SafetensorsDType::BF16) {
      uint32_t wide = uint32_t(bits) << 16;
      std::memcpy(&values[i], &wide, sizeof(float));
    } else {
      llvm::APFloat half(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
      values[i] = half.convertToFloat();
    }
  }
  return values;
}

namespace {
class DecoderBuilder {
public:
  DecoderBuilder(const ModelConfig &config, const SafetensorsCheckpoint &weights,
          ImplicitLocOpBuilder &b, std::string &error)
      : config(config), weights(weights), b(b), error(error),
        f32(b.getF32Type()) {}

  Value build(Value ids);

private:
  bool failed() const { return !error.empty(); }
  Value weight(const Twine &name, ArrayRef<int64_t> shape);
  Value optionalBias(bool present, const Twine &name, int64_t size) {
    return present ? weight(name, {size}) : Value();
  }
  RankedTensorType act(ArrayRef<int64_t> tail) {
    SmallVector<int64_t> shape = {kDyn, kDyn};
    shape.append(tail.begin(), tail.end());
    return RankedTensorType::get(shape, f32);
  }
  Value empty(RankedTensorType type, ValueRange dynamic) {
    return tensor::EmptyOp::create(b, type.getShape(), type.getElementType(),
                                   dynamic);
  }
  Value add(Value x, Value y) {
    Value init = empty(cast<RankedTensorType>(x.getType()), {batch, seq});
    return linalg::AddOp::create(b, ValueRange{x, y}, ValueRange{init})
        ->getResult(0);
  }
  Value linear(Value x, Value w, Value bias, int64_t out) {
    return LinearOp::create(b, act({out}), x, w, bias, WeightLayout::OutIn);
  }
  Value rmsNorm(Value x, Value w) {
    return RmsNormOp::create(b, x.getType(), x, w,
                             llvm::APFloat(config.rmsNormEps));
  }
  Value positions();
  Value splitHeads(Value x, int64_t heads);
  Value mergeHeads(Value x);
  Value rope(Value x);
  Value layer(Value h, int64_t i);

  const ModelConfig &config;
  const SafetensorsCheckpoint &weights;
  ImplicitLocOpBuilder &b;
  std::string &error;
  Type f32;
  Value batch, seq, pos;
};
} // namespace

Value DecoderBuilder::weight(const Twine &nameTwine, ArrayRef<int64_t> shape) {
  if (failed())
    return {};
  std::string name = nameTwine.str();
  const SafetensorsFile *file = nullptr;
  const SafetensorsTensor *tensor = weights.lookup(name, &file);
  if (!tensor) {
    error = (weights.getPath() + ": missing tensor '" + name + "'").str();
    return {};
  }
  if (!llvm::equal(tensor->shape, shape)) {
    error = (file->getPath() + ": tensor '" + name + "' has shape " +
             formatShape(tensor->shape) + ", expected " + formatShape(shape))
                .str();
    return {};
  }
  auto type = RankedTensorType::get(shape, f32);
  DenseElementsAttr attr;
  switch (tensor->dtype) {
  case SafetensorsDType::F32:
    attr = DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(tensor->bytes.data(), tensor->bytes.size()));
    break;
  case SafetensorsDType::F16:
  case SafetensorsDType::BF16:
    attr = DenseElementsAttr::get(type, ArrayRef<float>(toFloats(*tensor)));
    break;
  default:
    error = (file->getPath() + ": tensor '" + name + "' has dtype " +
             tensor->dtypeName + ", expected F32, F16 or BF16")
                .str();
    return {};
  }
  return arith::ConstantOp::create(b, attr);
}

Value DecoderBuilder::positions() {
  auto type = RankedTensorType::get({1, kDyn}, b.getI64Type());
  Value init = empty(type, {seq});
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

/// [B, S, heads*D] -> [B, S, heads, D].
Value DecoderBuilder::splitHeads(Value x, int64_t heads) {
  int64_t d = config.headDim;
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
  SmallVector<OpFoldResult> shape = {batch, seq, b.getIndexAttr(heads),
                                     b.getIndexAttr(d)};
  return tensor::ExpandShapeOp::create(b, act({heads, d}), x, groups, shape);
}

/// Swaps dims 1 and 2 of a rank-4 tensor: [B, S, H, D] <-> [B, H, S, D].
static Value swap12(ImplicitLocOpBuilder &b, Value x, Value batch, Value seq) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape = {type.getDimSize(0), type.getDimSize(2),
                                type.getDimSize(1), type.getDimSize(3)};
  SmallVector<Value> dynamic = {batch, seq};
  Value init = tensor::EmptyOp::create(b, shape, type.getElementType(), dynamic);
  return linalg::TransposeOp::create(b, x, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      ->getResult(0);
}

/// [B, H, S, D] -> [B, S, H*D].
Value DecoderBuilder::mergeHeads(Value x) {
  Value bshd = swap12(b, x, batch, seq);
  auto type = cast<RankedTensorType>(bshd.getType());
  int64_t width = type.getDimSize(2) * type.getDimSize(3);
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
  return tensor::CollapseShapeOp::create(b, act({width}), bshd, groups);
}

Value DecoderBuilder::rope(Value x) {
  const RopeScalingConfig &s = config.ropeScaling;
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
  if (config.rotaryDim != config.headDim)
    rotaryDim = b.getI64IntegerAttr(config.rotaryDim);
  return RopeOp::create(b, x.getType(), x, pos,
                        b.getF64FloatAttr(config.ropeTheta), UnitAttr(),
                        rotaryDim, scaling);
}

Value DecoderBuilder::layer(Value h, int64_t i) {
  std::string p = "model.layers." + std::to_string(i) + ".";
  int64_t hidden = config.hiddenSize, d = config.headDim;
  int64_t nq = config.numHeads, nkv = config.numKVHeads;
  bool ab = config.attentionBias;
  Value inNorm = weight(p + "input_layernorm.weight", {hidden});
  Value wq = weight(p + "self_attn.q_proj.weight", {nq * d, hidden});
  Value bq = optionalBias(ab, p + "self_attn.q_proj.bias", nq * d);
  Value wk = weight(p + "self_attn.k_proj.weight", {nkv * d, hidden});
  Value bk = optionalBias(ab, p + "self_attn.k_proj.bias", nkv * d);
  Value wv = weight(p + "self_attn.v_proj.weight", {nkv * d, hidden});
  Value bv = optionalBias(ab, p + "self_attn.v_proj.bias", nkv * d);
  Value wo = weight(p + "self_attn.o_proj.weight", {hidden, nq * d});
  Value bo = optionalBias(ab, p + "self_attn.o_proj.bias", hidden);
  Value qNorm, kNorm;
  if (config.qkNorm) {
    qNorm = weight(p + "self_attn.q_norm.weight", {d});
    kNorm = weight(p + "self_attn.k_norm.weight", {d});
  }
  Value postNorm = weight(p + "post_attention_layernorm.weight", {hidden});
  int64_t inter = config.intermediateSize;
  bool mb = config.mlpBias;
  Value wg = weight(p + "mlp.gate_proj.weight", {inter, hidden});
  Value bg = optionalBias(mb, p + "mlp.gate_proj.bias", inter);
  Value wu = weight(p + "mlp.up_proj.weight", {inter, hidden});
  Value bu = optionalBias(mb, p + "mlp.up_proj.bias", inter);
  Value wd = weight(p + "mlp.down_proj.weight", {hidden, inter});
  Value bd = optionalBias(mb, p + "mlp.down_proj.bias", hidden);
  if (failed())
    return {};

  Value x = rmsNorm(h, inNorm);
  Value q = splitHeads(linear(x, wq, bq, nq * d), nq);
  Value k = splitHeads(linear(x, wk, bk, nkv * d), nkv);
  Value v = splitHeads(linear(x, wv, bv, nkv * d), nkv);
  if (config.qkNorm) {
    q = rmsNorm(q, qNorm);
    k = rmsNorm(k, kNorm);
  }
  q = rope(swap12(b, q, batch, seq));
  k = rope(swap12(b, k, batch, seq));
  v = swap12(b, v, batch, seq);
  IntegerAttr window;
  if (std::optional<int64_t> w = config.layerWindows[i])
    window = b.getI64IntegerAttr(*w);
  Value a = AttentionOp::create(b, q.getType(), q, k, v, Value(), Value(),
                                Value(), /*causal=*/true, window, FloatAttr(),
                                FloatAttr());
  Value r = add(h, linear(mergeHeads(a), wo, bo, hidden));
  Value m = rmsNorm(r, postNorm);
  Value gate = linear(m, wg, bg, inter);
  Value up = linear(m, wu, bu, inter);
  Value s = SwiGluOp::create(b, gate, up);
  return add(r, linear(s, wd, bd, hidden));
}

Value DecoderBuilder::build(Value ids) {
  int64_t vocab = config.vocabSize, hidden = config.hiddenSize;
  Value embed = weight("model.embed_tokens.weight", {vocab, hidden});
  Value finalNorm = weight("model.norm.weight", {hidden});
  Value head = config.tieWordEmbeddings
                   ? embed
                   : weight("lm_head.weight", {vocab, hidden});
  if (failed())
    return {};
  batch = tensor::DimOp::create(b, ids, 0);
  seq = tensor::DimOp::create(b, ids, 1);
  pos = positions();
  Value h = EmbeddingOp::create(b, act({hidden}), embed, ids);
  for (int64_t i = 0; i < config.numLayers; ++i) {
    h = layer(h, i);
    if (failed())
      return {};
  }
  return linear(rmsNorm(h, finalNorm), head, Value(), vocab);
}

OwningOpRef<ModuleOp>
mnemo::buildLlamaFamily(const ModelConfig &config,
                        const SafetensorsCheckpoint &weights,
                        MLIRContext *context, std::string &error) {
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
  auto func = func::FuncOp::create(
      b, "forward", b.getFunctionType({idsType}, {logitsType}));
  func.setArgAttr(0, "mnemo.name", b.getStringAttr("input_ids"));
  func.setResultAttr(0, "mnemo.name", b.getStringAttr("logits"));
  b.setInsertionPointToStart(func.addEntryBlock());

  DecoderBuilder builder(config, weights, b, error);
  Value logits = builder.build(func.getArgument(0));
  if (!logits)
    return nullptr;
  func::ReturnOp::create(b, logits);
  return module;
}

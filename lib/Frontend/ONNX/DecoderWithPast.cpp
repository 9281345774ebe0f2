//===- DecoderWithPast.cpp - generation steps of an ONNX decoder -*- C++ -*-=//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A decoder exported with past key/values computes, for a batch whose
// cached tokens are given as contiguous tensors, the logits of the new
// tokens and the cache grown by them. Its graph decides everything about
// attention (causality, windows, how the mask is built, what a layer
// caches), so each generation step runs the graph itself, unchanged, on the
// inputs a contiguous-cache runtime such as ONNX Runtime GenAI would give it
// for a left-padded batch, built from the paged cache:
//
//   cached[b]         = positions[b, 0] (the sequence's cached tokens)
//   P                 = 1 in `prefill` (fresh sequences), the block
//                       table's capacity (pages x page size) in `decode`
//   past[b, h, t]     = token t - (P - cached[b]) of sequence b, read from
//                       its pages; zero before its first token
//   attention_mask[b, t] = 1 where t >= P - cached[b] and t < P, or t >= P
//                       and new token t - P is no padding (position >= 0)
//   position_ids      = the positions (padding: 0)
//
// and writes the presents' last S tokens (the new keys and values) into the
// pools. P is at least 1 so that no tensor is empty (a fresh batch attends
// over one masked token of zeros as well), and depends on shapes alone, so
// that a GPU launch plan can size every grid on the host.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Frontend/ONNX/DecoderWithPast.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "mnemo/Frontend/GenerationStep.h"
#include "mnemo/Frontend/OneLineError.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;
constexpr llvm::StringLiteral kPastPrefix = "past_key_values.";
constexpr llvm::StringLiteral kPresentPrefix = "present.";

/// The graph's one public function.
func::FuncOp findGraph(ModuleOp module) {
  func::FuncOp graph;
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isPrivate() && !f.isExternal())
      graph = graph ? func::FuncOp() : f;
  return graph;
}

StringRef nameOf(DictionaryAttr attrs) {
  auto name = attrs ? attrs.getAs<StringAttr>("mnemo.name") : StringAttr();
  return name ? name.getValue() : StringRef();
}

/// `PREFIX<N>.key` or `PREFIX<N>.value`: layer N, and whether a key.
bool parseCacheName(StringRef name, StringRef prefix, int64_t &layer,
                    bool &key) {
  if (!name.consume_front(prefix))
    return false;
  auto [number, kind] = name.split('.');
  if (number.getAsInteger(10, layer) || layer < 0 || layer > 100000)
    return false;
  key = kind == "key";
  return key || kind == "value";
}

/// Where the graph's inputs and outputs are.
struct GraphSignature {
  func::FuncOp graph;
  int inputIds = -1, attentionMask = -1, positionIds = -1, logits = -1;
  struct Layer {
    int past[2] = {-1, -1}, present[2] = {-1, -1}; // key, value
  };
  SmallVector<Layer> layers;

  RankedTensorType argType(int i) {
    return cast<RankedTensorType>(graph.getArgumentTypes()[i]);
  }
};

class StepsBuilder {
public:
  StepsBuilder(ModuleOp module, StringRef path, std::string &error)
      : module(module), path(path), error(error) {}

  LogicalResult run(const KVCacheOptions &options) {
    if (failed(readSignature()))
      return failure();
    for (StringRef name : {"prefill", "decode", "append"})
      if (module.lookupSymbol(name))
        return fail(("the graph already has a function '" + name +
                     "', the name of a generation step")
                        .str());
    ImplicitLocOpBuilder b(sig.graph.getLoc(), module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    if (failed(buildStep(b, "prefill", kDyn, /*fresh=*/true, options)) ||
        failed(buildStep(b, "decode", 1, /*fresh=*/false, options)) ||
        (options.appendStep &&
         failed(buildStep(b, "append", kDyn, /*fresh=*/false, options))))
      return failure();
    return success();
  }

private:
  LogicalResult fail(const Twine &message) {
    error = (path + ": " + message).str();
    return failure();
  }

  LogicalResult readSignature() {
    sig.graph = findGraph(module);
    if (!sig.graph)
      return fail("expected one graph function");
    func::FuncOp graph = sig.graph;
    auto layerAt = [&](int64_t n) -> GraphSignature::Layer & {
      if (n >= static_cast<int64_t>(sig.layers.size()))
        sig.layers.resize(n + 1);
      return sig.layers[n];
    };
    for (unsigned i = 0; i < graph.getNumArguments(); ++i) {
      StringRef name = nameOf(graph.getArgAttrDict(i));
      int64_t layer;
      bool key;
      if (name == "input_ids")
        sig.inputIds = i;
      else if (name == "attention_mask")
        sig.attentionMask = i;
      else if (name == "position_ids")
        sig.positionIds = i;
      else if (parseCacheName(name, kPastPrefix, layer, key))
        layerAt(layer).past[key ? 0 : 1] = i;
      else
        return fail("graph input '" + name +
                    "' is none of input_ids, attention_mask, position_ids and "
                    "past_key_values.N.key/value: the generation steps cannot "
                    "feed it");
    }
    for (unsigned i = 0; i < graph.getNumResults(); ++i) {
      StringRef name = nameOf(graph.getResultAttrDict(i));
      int64_t layer;
      bool key;
      if (name == "logits")
        sig.logits = i;
      else if (parseCacheName(name, kPresentPrefix, layer, key) &&
               layer < static_cast<int64_t>(sig.layers.size()))
        sig.layers[layer].present[key ? 0 : 1] = i;
    }
    // What the steps feed: token ids, the padding mask (a batch of
    // sequences of different lengths is left-padded) and the positions.
    for (auto [index, name] :
         {std::pair{sig.inputIds, "input_ids"},
          std::pair{sig.attentionMask, "attention_mask"},
          std::pair{sig.positionIds, "position_ids"}}) {
      if (index < 0)
        return fail(Twine("a decoder with past key/values needs a '") + name +
                    "' input to run over a batch of sequences of different "
                    "lengths");
      RankedTensorType t = sig.argType(index);
      if (t.getRank() != 2 || !t.isDynamicDim(0) || !t.isDynamicDim(1))
        return fail(Twine("input '") + name + "' is " + str(t) +
                    "; the generation steps need [batch, sequence], both "
                    "dynamic");
    }
    if (!sig.argType(sig.inputIds).getElementType().isInteger(64) ||
        !sig.argType(sig.positionIds).getElementType().isInteger(64))
      return fail("input_ids and position_ids must be int64");
    Type maskElement = sig.argType(sig.attentionMask).getElementType();
    if (!isa<IntegerType, FloatType>(maskElement))
      return fail("attention_mask is " + str(sig.argType(sig.attentionMask)) +
                  "; expected integers, booleans or floats");
    if (sig.logits < 0)
      return fail("a decoder with past key/values needs a 'logits' output");
    auto logits = cast<RankedTensorType>(
        graph.getResultTypes()[sig.logits]);
    if (logits.getRank() != 3 || logits.isDynamicDim(2) ||
        !logits.getElementType().isF32())
      return fail("output 'logits' is " + str(logits) +
                  "; expected [batch, sequence, vocabulary] f32 with a "
                  "static vocabulary");
    for (auto [n, layer] : llvm::enumerate(sig.layers)) {
      for (int k = 0; k < 2; ++k) {
        std::string what = (Twine(n) + (k == 0 ? ".key" : ".value")).str();
        if (layer.past[k] < 0)
          return fail("no input past_key_values." + what +
                      " beside the other layers' past key/values");
        if (layer.present[k] < 0)
          return fail("no output present." + what + " for input " +
                      kPastPrefix + what);
        RankedTensorType t = sig.argType(layer.past[k]);
        if (t.getRank() != 4 || !t.isDynamicDim(0) || !t.isDynamicDim(2) ||
            t.isDynamicDim(1) || t.isDynamicDim(3) ||
            !isa<FloatType>(t.getElementType()))
          return fail("input past_key_values." + what + " is " + str(t) +
                      "; the generation steps need [batch, heads, past, "
                      "dim] floats with dynamic batch and past and static "
                      "heads and dim");
      }
      if (sig.argType(layer.past[0]).getDimSize(1) !=
          sig.argType(layer.past[1]).getDimSize(1))
        return fail(Twine("past_key_values.") + Twine(n) +
                    ": key and value have different head counts");
    }
    return success();
  }

  static std::string str(Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << t;
    return s;
  }

  /// `value` as the graph's argument `arg` takes it.
  Value asArgument(ImplicitLocOpBuilder &b, Value value, int arg) {
    Type want = sig.graph.getArgumentTypes()[arg];
    return value.getType() == want ? value
                                   : tensor::CastOp::create(b, want, value);
  }

  /// A [dims...] tensor of `type` whose element at each index is `body`'s.
  Value generate(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> dims,
                 Type type,
                 function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    Value init = emptyTensor(b, b.getLoc(), dims, type);
    unsigned rank = dims.size();
    auto generic = linalg::GenericOp::create(
        b, init.getType(), ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{
            AffineMap::getMultiDimIdentityMap(rank, b.getContext())},
        iterators(rank), [&](OpBuilder &nb, Location nl, ValueRange) {
          SmallVector<Value> indices;
          for (unsigned d = 0; d < rank; ++d)
            indices.push_back(linalg::IndexOp::create(nb, nl, d));
          linalg::YieldOp::create(nb, nl, body(nb, nl, indices));
        });
    return generic.getResult(0);
  }

  /// `x` when `present` is a concatenation of `past` and `x` (insert_slices
  /// into an empty tensor, as the importer writes Concat); null otherwise.
  static Value appendedTo(Value present, Value past) {
    std::optional<TwoPartConcat> concat = matchTwoPartConcat(present);
    return concat && concat->first == past && concat->axis == 2
               ? concat->second
               : Value();
  }

  LogicalResult buildStep(ImplicitLocOpBuilder &b, StringRef name,
                          int64_t seqLen, bool fresh,
                          const KVCacheOptions &options) {
    SmallVector<StepLayerCache> layers;
    for (const GraphSignature::Layer &layer : sig.layers) {
      RankedTensorType key = sig.argType(layer.past[0]),
                       value = sig.argType(layer.past[1]);
      layers.push_back({key.getDimSize(1), key.getDimSize(3),
                        value.getDimSize(3), std::nullopt});
    }
    auto logitsType =
        cast<RankedTensorType>(sig.graph.getResultTypes()[sig.logits]);
    OpBuilder::InsertionGuard guard(b);
    GenerationStep step = createGenerationStep(
        b, name, seqLen, logitsType.getDimSize(2), options, layers);
    Type i64 = b.getI64Type();
    Value positions = step.positions;
    OpFoldResult batch = tensor::getMixedSize(b, b.getLoc(), positions, 0);
    Value seq = tensor::DimOp::create(b, positions, 1);
    auto cmp = [](OpBuilder &nb, Location nl, arith::CmpIPredicate pred,
                  Value x, Value y) {
      return arith::CmpIOp::create(nb, nl, pred, x, y).getResult();
    };
    auto i64Const = [](OpBuilder &nb, Location nl, int64_t v) {
      return arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), v)
          .getResult();
    };

    // cached[b]: the sequence's first new position (its cached tokens).
    Value cached = generate(
        b, {batch}, i64, [&](OpBuilder &nb, Location nl, ValueRange idx) {
          Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
          Value first = tensor::ExtractOp::create(nb, nl, positions,
                                                  ValueRange{idx[0], zero});
          return arith::MaxSIOp::create(nb, nl, first, i64Const(nb, nl, 0))
              .getResult();
        });
    // P: 1 in `prefill` (every sequence starts: the past is one masked
    // token); in `decode` the tokens the block table can hold, a bound of
    // every sequence's cached tokens known from the shapes alone (a GPU
    // launch plan sizes its grids from them).
    Value past =
        fresh ? arith::ConstantIndexOp::create(b, 1).getResult()
              : arith::MulIOp::create(
                    b, tensor::DimOp::create(b, step.blockTable, 1),
                    arith::ConstantIndexOp::create(b, options.pageSize))
                    .getResult();
    Value total = arith::AddIOp::create(b, past, seq);

    // The padding mask of the left-padded batch.
    Type maskElement =
        sig.argType(sig.attentionMask).getElementType();
    Value mask = generate(
        b, {batch, total}, maskElement,
        [&](OpBuilder &nb, Location nl, ValueRange idx) -> Value {
          Value bi = idx[0], t = idx[1];
          Value length = arith::IndexCastOp::create(
              nb, nl, nb.getIndexType(),
              tensor::ExtractOp::create(nb, nl, cached, ValueRange{bi}));
          Value inPast = cmp(nb, nl, arith::CmpIPredicate::ult, t, past);
          Value pastSeen =
              cmp(nb, nl, arith::CmpIPredicate::sge, t,
                  arith::SubIOp::create(nb, nl, past, length));
          Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
          Value k = arith::SelectOp::create(
              nb, nl, inPast, zero, arith::SubIOp::create(nb, nl, t, past));
          Value pos =
              tensor::ExtractOp::create(nb, nl, positions, ValueRange{bi, k});
          Value newSeen =
              cmp(nb, nl, arith::CmpIPredicate::sge, pos, i64Const(nb, nl, 0));
          Value seen =
              arith::SelectOp::create(nb, nl, inPast, pastSeen, newSeen);
          if (auto f = dyn_cast<FloatType>(maskElement))
            return arith::UIToFPOp::create(nb, nl, f, seen);
          if (maskElement.isInteger(1))
            return seen;
          return arith::ExtUIOp::create(nb, nl, maskElement, seen);
        });
    // Padding tokens' positions: 0 (their outputs are never read).
    Value positionIds = generate(
        b, {batch, seq}, i64, [&](OpBuilder &nb, Location nl, ValueRange idx) {
          Value p = tensor::ExtractOp::create(nb, nl, positions, idx);
          return arith::MaxSIOp::create(nb, nl, p, i64Const(nb, nl, 0))
              .getResult();
        });

    IRMapping map;
    func::FuncOp graph = sig.graph;
    map.map(graph.getArgument(sig.inputIds),
            asArgument(b, step.inputIds, sig.inputIds));
    map.map(graph.getArgument(sig.attentionMask),
            asArgument(b, mask, sig.attentionMask));
    map.map(graph.getArgument(sig.positionIds),
            asArgument(b, positionIds, sig.positionIds));
    bool fp8 = !step.keyScales.empty();
    for (auto [l, layer] : llvm::enumerate(sig.layers))
      for (int k = 0; k < 2; ++k) {
        Value pool = k == 0 ? step.keys[l] : step.values[l];
        Value scales =
            fp8 ? (k == 0 ? step.keyScales[l] : step.valueScales[l]) : Value();
        int arg = layer.past[k];
        auto poolType = cast<RankedTensorType>(pool.getType());
        auto pastType = RankedTensorType::get(
            {kDyn, poolType.getDimSize(1), kDyn, poolType.getDimSize(3)},
            sig.argType(arg).getElementType());
        Value gathered = KVCacheGatherOp::create(b, pastType, pool, scales,
                                                 step.blockTable, cached, past);
        map.map(graph.getArgument(arg), asArgument(b, gathered, arg));
      }
    Block &body = graph.front();
    for (Operation &op : body.without_terminator())
      b.clone(op, map);
    Operation *ret = body.getTerminator();
    auto mapped = [&](int result) {
      return map.lookupOrDefault(ret->getOperand(result));
    };
    // The new tokens' keys and values: the presents' last S tokens.
    for (auto [l, layer] : llvm::enumerate(sig.layers)) {
      Value grown[2];
      for (int k = 0; k < 2; ++k) {
        Value present = mapped(layer.present[k]);
        // The graph's Concat(past, new): the new part itself.
        if (Value appended =
                appendedTo(present, map.lookup(graph.getArgument(layer.past[k])))) {
          grown[k] = appended;
          continue;
        }
        auto type = cast<RankedTensorType>(present.getType());
        if (type.getRank() != 4)
          return fail("output present." + Twine(l) +
                      (k == 0 ? ".key" : ".value") + " is " + str(type) +
                      "; expected the rank of its past");
        SmallVector<OpFoldResult> offsets = {
            b.getIndexAttr(0), b.getIndexAttr(0), past, b.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {
            batch, tensor::getMixedSize(b, b.getLoc(), present, 1), seq,
            tensor::getMixedSize(b, b.getLoc(), present, 3)};
        SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
        grown[k] = tensor::ExtractSliceOp::create(b, present, offsets, sizes,
                                                  strides);
      }
      writeCache(b, step, l, grown[0], grown[1]);
    }
    finishGenerationStep(b, step, mapped(sig.logits));
    return success();
  }

  ModuleOp module;
  StringRef path;
  std::string &error;
  GraphSignature sig;
};

} // namespace

bool mnemo::isDecoderWithPast(ModuleOp module) {
  func::FuncOp graph = findGraph(module);
  if (!graph)
    return false;
  for (unsigned i = 0; i < graph.getNumArguments(); ++i)
    if (nameOf(graph.getArgAttrDict(i)).starts_with(kPastPrefix))
      return true;
  return false;
}

LogicalResult mnemo::addDecoderWithPastSteps(ModuleOp module,
                                             const KVCacheOptions &options,
                                             StringRef path,
                                             std::string &error) {
  if (succeeded(StepsBuilder(module, path, error).run(options)))
    return success();
  error = escapeToOneLine(error);
  return failure();
}

//===- DecoderBuilder.h - shared pieces of the decoder builders -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What every checkpoint decoder builder needs: weights read and checked by
// name and shape, activations [B, S, ...] with dynamic B and S, the mnemo
// and linalg ops a layer is made of, and the forward function around the
// layers (embedding, final norm, LM head). An architecture derives from
// DecoderBuilder and emits its layers.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_CHECKPOINT_DECODERBUILDER_H
#define MNEMO_LIB_FRONTEND_CHECKPOINT_DECODERBUILDER_H

#include "ModelConfig.h"
#include "dialects/Mnemo/IR/MnemoAttrs.h"
#include "mnemo/Frontend/Checkpoint/Safetensors.h"
#include "mnemo/Frontend/GenerationStep.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OwningOpRef.h"
#include <optional>
#include <vector>

namespace mlir::mnemo {

/// What a generation step (prefill or decode) reads besides its tokens: the
/// tokens' positions, the paged KV cache and where each sequence's pages
/// are. The layers' attention writes the new tokens' keys and values into
/// the pools and attends over them (DecoderBuilder::attention), replacing
/// each pool by its updated value.
struct CacheStep : GenerationStep {
  /// Every sequence starts here (`prefill`: positions 0, 1, ... then -1):
  /// the tokens attend over themselves, as in `forward`, and the cache is
  /// only written.
  bool fresh = false;
};

class DecoderBuilder {
public:
  /// Builds `forward` when `step` is null, else the layers of a generation
  /// step over `step`'s cache.
  DecoderBuilder(const ModelConfig &config,
                 const SafetensorsCheckpoint &weights, ImplicitLocOpBuilder &b,
                 std::string &error, CacheStep *step = nullptr);
  virtual ~DecoderBuilder() = default;

  /// The logits [B, S, V] of `ids` [B, S] ([B, 1, V] in a step with
  /// lastTokenLogits); null after an error.
  Value build(Value ids);

protected:
  static constexpr int64_t kDyn = ShapedType::kDynamic;

  /// Decoder layer `i` applied to the hidden states `h` [B, S, hidden].
  virtual Value layer(Value h, int64_t i) = 0;

  bool failed() const { return !error.empty(); }
  /// Tensor `name` as an f32 constant, checked to have `shape`; null (and
  /// `error` set) if it is missing, mis-shaped or not a float tensor.
  Value weight(const llvm::Twine &name, ArrayRef<int64_t> shape);
  /// A weight matrix read by mnemo.linear or mnemo.embedding, which widen
  /// its elements on load: as `weight`, stored in the --dtype type.
  Value matrix(const llvm::Twine &name, ArrayRef<int64_t> shape);
  /// The token embedding and the output head (`head` false: the embedding;
  /// one matrix when they are tied): as `matrix`, but in bf16 where the
  /// weight options leave them out of a quantized dtype.
  Value endMatrix(const llvm::Twine &name, ArrayRef<int64_t> shape,
                  bool head);
  /// `matrix` stored in `type`, or quantized as the weight options say.
  Value storedMatrix(const llvm::Twine &name, ArrayRef<int64_t> shape,
                     bool quantize, FloatType type);
  Value optionalBias(bool present, const llvm::Twine &name, int64_t size) {
    return present ? weight(name, {size}) : Value();
  }
  /// The values of tensor `name` (checked as `weight` does), for weights the
  /// builder rearranges before use.
  std::optional<std::vector<float>> weightData(const llvm::Twine &name,
                                               ArrayRef<int64_t> shape);
  /// A weight matrix `name` of `shape` times `factor`, stored as `matrix`
  /// stores (a scale folded into its projection).
  Value scaledMatrix(const llvm::Twine &name, ArrayRef<int64_t> shape,
                     double factor);
  /// An f32 constant of `shape` holding `values`.
  Value constant(ArrayRef<int64_t> shape, ArrayRef<float> values);
  /// A weight matrix assembled by the builder, stored as `matrix` stores.
  Value matrixConstant(ArrayRef<int64_t> shape, ArrayRef<float> values);
  /// `values` quantized as --dtype says (groups along the last dim), as
  /// the mnemo.dequantize of its codes and scales; `what` names the tensor
  /// in errors.
  Value quantizedMatrix(ArrayRef<int64_t> shape, ArrayRef<float> values,
                        Location loc, StringRef what);
  /// A GPTQ or AWQ layer's weight `name` of `shape` [N, K], its codes,
  /// scales and zero points as the checkpoint holds them.
  Value prequantizedMatrix(const llvm::Twine &name, ArrayRef<int64_t> shape);
  /// mnemo.dequantize of `codes` (in its layout for `format`), `scales` and
  /// `zeros` (none when empty; laid out as `scales`) into f32 `shape`.
  Value dequantizeOp(ArrayRef<int64_t> shape, QuantFormat format,
                     int64_t groupSize, ArrayRef<uint8_t> codes,
                     DenseElementsAttr scales, ArrayRef<uint8_t> zeros,
                     Location loc);
  /// Rows of a stored tensor, block by block: in block b < `blocks`, the
  /// rows `b * stride + first + j` for j < `count` of each (first, count)
  /// run in order. A head's slice of a fused projection, or its rows
  /// permuted.
  struct RowBlocks {
    int64_t blocks, stride;
    SmallVector<std::pair<int64_t, int64_t>, 2> runs;
    /// The i-th row selected.
    int64_t operator[](int64_t i) const {
      int64_t perBlock = 0;
      for (auto [first, count] : runs)
        perBlock += count;
      int64_t j = i % perBlock;
      for (auto [first, count] : runs) {
        if (j < count)
          return (i / perBlock) * stride + first + j;
        j -= count;
      }
      llvm_unreachable("a row past the selection");
    }
  };
  /// The rows of tensor `name` ([numRows, cols]) in `rows`, as a constant
  /// of `shape`: a weight matrix of a linear layer (`isMatrix`, stored in
  /// the --dtype type) or f32. Nothing is sized by the config's dims before
  /// the stored tensor is found with that shape.
  Value rowsOf(const std::string &name, int64_t numRows, int64_t cols,
               RowBlocks rows, ArrayRef<int64_t> shape, bool isMatrix = false);
  /// Integer tensor `name` (i64 or i32) as an i64 constant of `shape`, its
  /// values checked to lie in [0, bound).
  Value indexWeight(const llvm::Twine &name, ArrayRef<int64_t> shape,
                    int64_t bound);
  /// The location of checkpoint tensor `name` (weights are named after
  /// it in the artifact and in profiles).
  Location tensorLoc(const llvm::Twine &name);
  /// The location of the op reading weight `w`: the weight's module
  /// ("model.layers.0.mlp.up_proj").
  Location layerLoc(Value w);
  /// Whether the checkpoint holds a tensor called `name`.
  bool hasWeight(const llvm::Twine &name) const;

  /// Positions 0..S-1 of every row, [B, S] i64.
  Value positions();
  /// [B, S, tail...] f32.
  RankedTensorType act(ArrayRef<int64_t> tail);
  Value empty(RankedTensorType type, ValueRange dynamic);
  Value add(Value x, Value y);
  Value linear(Value x, Value w, Value bias, int64_t out);
  Value rmsNorm(Value x, Value w) { return rmsNorm(x, w, config.rmsNormEps); }
  Value rmsNorm(Value x, Value w, double eps);
  /// LayerNorm over the last dim of [B, S, D] `x`: (x - mean) /
  /// sqrt(var + eps) * w + bias, the variance biased (torch.nn.LayerNorm).
  Value layerNorm(Value x, Value w, Value bias, double eps);
  /// [B, S, heads*d] -> [B, S, heads, d].
  Value splitHeads(Value x, int64_t heads, int64_t d);
  /// Swaps dims 1 and 2 of a rank-4 tensor: [B, S, H, D] <-> [B, H, S, D].
  Value swap12(Value x);
  /// [B, H, S, D] -> [B, S, H*D].
  Value mergeHeads(Value x);
  /// mnemo.rope at the tokens' positions (0..S-1 in `forward`) with the
  /// config's theta and scaling.
  Value rope(Value x, bool interleaved = false);
  /// mnemo.rope of the first `rotary` features of `x` [B, H, S, D] at
  /// `positions` with `theta` and `scaling`.
  Value rope(Value x, bool interleaved, Value positions, double theta,
             const RopeScalingConfig &scaling, int64_t rotary);
  /// Causal attention of layer `layer` (q [B, Hq, S, D], k [B, Hkv, S, D],
  /// v [B, Hkv, S, Dv]) -> [B, Hq, S, Dv]: mnemo.attention in `forward`; in
  /// a generation step, k and v written into the layer's pages and
  /// mnemo.paged_attention over them. `scale` defaults to 1/sqrt(D).
  Value attention(Value q, Value k, Value v, int64_t layer,
                  IntegerAttr window, FloatAttr scale = {});
  /// silu(x Wg^T) * (x Wu^T), projected by Wd^T (the SwiGLU MLP).
  Value swigluMLP(Value x, Value wg, Value bg, Value wu, Value bu, Value wd,
                  Value bd, int64_t inter);

  const ModelConfig &config;
  const SafetensorsCheckpoint &weights;
  ImplicitLocOpBuilder &b;
  std::string &error;
  Type f32;
  /// The element type of weight matrices (f32, bf16 or f16).
  FloatType storage;
  Value batch, seq, pos;
  CacheStep *step;

private:
  /// The tensor `name`, checked to exist, have `shape` and be a float
  /// (or with `integer`, an I64 or I32) tensor.
  const SafetensorsTensor *lookup(const llvm::Twine &name,
                                  ArrayRef<int64_t> shape,
                                  const SafetensorsFile **file,
                                  bool integer = false);
};

/// Emits the logits of `ids` (in a generation step when `step` is set).
using DecoderBody =
    llvm::function_ref<Value(ImplicitLocOpBuilder &, Value ids, CacheStep *)>;

/// What each layer caches per token: `heads` rows of `keyDim` key and
/// `valueDim` value features (a Llama layer its KV heads; an MLA layer one
/// row of its latent and rope key).
struct CacheLayout {
  int64_t heads, keyDim, valueDim;
  /// A lightning indexer's key per token (DeepSeek-V3.2), or 0.
  int64_t indexKeyDim = 0;
  /// Layers whose caches differ (DeepSeek-V4): each layer's own, which
  /// replaces the fields above.
  SmallVector<StepLayerCache> perLayer = {};
};

/// A module with `@forward(input_ids) -> logits` whose body `body` emits
/// and, with a `cache` layout, the generation steps `@prefill` and
/// `@decode` (and `@append` with `kvCache.appendStep`) over a paged KV
/// cache (see buildStepFunction in DecoderBuilder.cpp); null with `error`
/// set when the builder fails.
OwningOpRef<ModuleOp> buildDecoderModule(const ModelConfig &config,
                                         const SafetensorsCheckpoint &weights,
                                         MLIRContext *context,
                                         std::string &error, DecoderBody body,
                                         std::optional<CacheLayout> cache);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_DECODERBUILDER_H

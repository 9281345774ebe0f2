//===- DeepSeekV4.h - DeepSeek-V4 decoder builder ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The builder of DeepseekV4ForCausalLM's forward pass (docs/DeepSeekV4.md).
// DeepSeekV4.cpp holds the layer around the attention (hyper-connections,
// the experts, the head); DeepSeekV4Attention.cpp the attention and its
// compressed memory.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_CHECKPOINT_DEEPSEEKV4_H
#define MNEMO_LIB_FRONTEND_CHECKPOINT_DEEPSEEKV4_H

#include "DecoderBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::mnemo {

/// Builds @forward for a DeepseekV4ForCausalLM checkpoint
/// (`config.deepseekV4` set). On a missing or mis-shaped tensor returns null
/// and sets `error`.
OwningOpRef<ModuleOp> buildDeepSeekV4(const ModelConfig &config,
                                      const SafetensorsCheckpoint &weights,
                                      MLIRContext *context,
                                      std::string &error);

class DeepSeekV4Builder final : public DecoderBuilder {
public:
  DeepSeekV4Builder(const ModelConfig &config,
                    const SafetensorsCheckpoint &weights,
                    ImplicitLocOpBuilder &b, std::string &error)
      : DecoderBuilder(config, weights, b, error), v4(*config.deepseekV4) {}

  /// The logits [B, S, V] of `ids` [B, S] at positions 0..S-1.
  Value forward(Value ids);

private:
  /// Unused: forward() runs the layers over the hyper-connection streams.
  Value layer(Value h, int64_t i) override { return {}; }

  /// The streams [B, S, n, hidden] after layer `i`.
  Value streamLayer(Value streams, int64_t i);

  /// One hyper-connection site (`prefix` + _fn/_base/_scale): the
  /// sublayer's input [B, S, hidden] collapsed from the streams, and the
  /// post [B, S, n] and comb [B, S, n, n] weights that place its output.
  struct Mixing {
    Value input, post, comb;
  };
  std::optional<Mixing> mixStreams(Value streams, const std::string &prefix);
  /// post[i] * out + sum_j comb[j, i] * streams[j].
  Value placeOutput(Value streams, Value out, const Mixing &m);
  /// The streams' flattened rows [B, S, n*hidden] RMS-normalized (no
  /// weight) and projected by `fn` [rows, n*hidden].
  Value streamMix(Value streams, const std::string &fnName, int64_t rows);
  /// sum_i w[b, s, i] * streams[b, s, i, :].
  Value collapseStreams(Value streams, Value w);

  /// Attention of layer `i` on the normed input [B, S, hidden].
  Value attention(Value x, int64_t i);
  /// The gated pool of compressor `prefix` over x: one entry per closed
  /// window of `rate` tokens ([B, S / rate, dim]), normalized and rotated
  /// at w * rate; `overlapping` (CSA) pools the previous window's first
  /// half with this window's second half.
  Value compress(Value x, const std::string &prefix, int64_t rate,
                 int64_t dim, bool overlapping);
  /// Per query, the CSA entries its lightning indexer selects: [B, S, k]
  /// indices (-1 for none).
  Value indexerSelection(Value x, Value qLow, const std::string &prefix,
                         int64_t rate);
  /// The additive mask [B, 1, S, S + T] of a compressed layer: the raw
  /// keys causal within the window, entry w visible to query t when
  /// w < (t + 1) / rate and (with `selected`) listed there.
  Value compressedMask(Value entries, int64_t rate, Value selected);
  /// The output projection: per group wo_a, then wo_b.
  Value outputProjection(Value o, const std::string &prefix);

  /// The MoE of layer `i` on the normed input [B, S, hidden].
  Value moe(Value x, int64_t i);

  /// Rows of a [heads * d, cols] matrix with each head's trailing `ropeDim`
  /// rows moved in front (mnemo.rope rotates leading features).
  SmallVector<int64_t> ropeFirstRows(int64_t heads, int64_t d) const;
  /// rope (interleaved) of the leading ropeDim features of [B, H, S, D]
  /// `x` at `positions`, with layer `i`'s theta (main or compress).
  Value ropeAt(Value x, Value positions, bool compressed);
  /// A generic op over `its`, writing `type` (dynamic sizes `dyn`).
  Value generic(RankedTensorType type, ValueRange dyn, ValueRange ins,
                ArrayRef<AffineMap> maps,
                ArrayRef<utils::IteratorType> its,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body,
                Value init = {});
  Value f32Const(OpBuilder &nb, Location l, double v) {
    return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v));
  }
  /// A [size] f32 constant of ones (RMSNorm without a weight).
  Value ones(int64_t size);

  const DeepSeekV4Config &v4;
  Value ids;
};

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_DEEPSEEKV4_H

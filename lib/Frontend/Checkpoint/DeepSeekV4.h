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
                    ImplicitLocOpBuilder &b, std::string &error,
                    CacheStep *step)
      : DecoderBuilder(config, weights, b, error, step),
        v4(*config.deepseekV4) {}

  /// The logits [B, S, V] of `ids` [B, S]: at positions 0..S-1 in
  /// `forward`, in a generation step at the step's positions over the
  /// layers' caches (cacheOf; [B, 1, V] with lastTokenLogits).
  Value forward(Value ids);

  /// Layer `i`'s pools in a generation step: its K = V rows
  /// (cache.L.key, with cache.L.key_scale for FP8); for a compressed layer the compressor's kv and gate
  /// rows per token (cache.L.compressor) and the entries, entry w at slot
  /// w of the sequence's pages (cache.L.entries); for CSA the same for the
  /// indexer (cache.L.index_compressor, cache.L.index_entries). These
  /// others are bf16 in an FP8 cache.
  static StepLayerCache cacheOf(const ModelConfig &config, int64_t i);

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
  /// A compressor's weights (`prefix` wkv, wgate, ape, norm), its rows
  /// permuted as ropeFirstRows says, and the position bias per slot of an
  /// entry [slots, dim].
  struct Compressor {
    Value wkv, wgate, norm, bias;
    int64_t rate, dim, width, slots;
    bool overlapping;
  };
  std::optional<Compressor> loadCompressor(const std::string &prefix,
                                           int64_t rate, int64_t dim,
                                           bool overlapping);
  /// The entries `entries` ([B, N] i64: the window each row pools, -1
  /// none) of `kv` and `gate` ([B, L, width]): mnemo.gated_pool, the
  /// weighted RMSNorm, and the compress rope at `ropePositions` ([N] or
  /// [B, N]); [B, N, dim].
  Value poolEntries(const Compressor &c, Value kv, Value gate, Value entries,
                    Value ropePositions);
  /// `forward`'s entries of x: one per closed window, [B, S / rate, dim].
  Value compress(Value x, const std::string &prefix, int64_t rate,
                 int64_t dim, bool overlapping);
  /// The compressor's kv and gate rows of x, [B, S, 2 * width].
  Value compressorRows(Value x, const Compressor &c);
  /// A generation step's entries: the compressor rows of the step's tokens
  /// written into `rowPool`, then each token that closes a window pools
  /// its entry from the pool and writes it at slot w into `entryPool`.
  /// Returns the entry pool, [Pages, 1, P, dim], whose pages the step's
  /// table for `rate` names (entry w of row b: row w % P of page
  /// table[b, w / P]).
  Value stepEntries(Value x, const std::string &prefix, int64_t rate,
                    int64_t dim, bool overlapping, Value &rowPool,
                    Value &entryPool);
  /// Per query, the CSA entries its lightning indexer selects among
  /// `keys` ([B, T, Di], or with a block table `table` a pool [Pages, 1,
  /// P, Di]): [B, S, index_topk] indices, -1 for none; `lengths` ([B], the
  /// entries a recomputed forward has) sets each row's width.
  Value indexerSelection(Value x, Value qLow, Value keys,
                         const std::string &prefix, int64_t rate, Value lengths,
                         Value table = {});
  /// mnemo.compressed_attention of `q` over the raw K = V rows `raw`
  /// ([B, 1, R, d], row j at position j, or rawStart[b] + j) and `entries`
  /// ([B, 1, T, d], or with a block table `entryTable` a pool [Pages, 1,
  /// P, d]), with CSA's `indices` (or null), at the queries' positions.
  Value unionAttention(Value q, Value raw, Value entries, Value indices,
                       Value sink, int64_t rate, Value rawStart = {},
                       Value entryTable = {});
  /// Per sequence of a step ([B] i64): its first new token's position less
  /// `back`, rounded down to a multiple of `align` (0 at least): where the
  /// rows the step reads start.
  Value readStart(int64_t back, int64_t align);
  /// [B] i64 `rows` / `divisor`.
  Value dividedBy(Value rows, int64_t divisor);
  /// The pages of `page` tokens that `tokens + extra` rows fill (an index).
  Value pagesCovering(Value tokens, int64_t extra, int64_t page);
  /// A generation step's attention of layer `i`.
  Value stepAttention(Value x, Value qLow, Value q, Value kv, Value sink,
                      int64_t i);
  /// The output projection: per group wo_a, then wo_b.
  Value outputProjection(Value o, const std::string &prefix);

  /// The MoE of layer `i` on the normed input [B, S, hidden].
  Value moe(Value x, int64_t i);

  /// Rows of a [heads * d, cols] matrix with each head's trailing `ropeDim`
  /// rows moved in front (mnemo.rope rotates leading features).
  RowBlocks ropeFirstRows(int64_t heads, int64_t d) const;
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

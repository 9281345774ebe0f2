//===- GenerationStep.h - the signature of a generation step ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every frontend that builds generation functions (a checkpoint's, an ONNX
// decoder exported with past key/values) gives them one shape, the one the
// runtime's generator calls:
//
//   @prefill / @decode / @append(input_ids [B, S] i64, positions [B, S] i64,
//                      block_table [B, W] i32, context_lengths [B] i64,
//                      for every rate R of entry pools:
//                        block_table.every.R [B, W_R] i32,
//                      for every layer L: cache.L.key [Pages, Hkv, P, Dk],
//                      cache.L.value [Pages, Hkv, P, Dv] (FP8: then
//                      cache.L.key_scale, cache.L.value_scale [Pages, Hkv, P];
//                      a lightning indexer's layer then cache.L.index_key
//                      [Pages, 1, P, Di]; then a layer's extra pools
//                      cache.L.<name> [Pages, 1, P, d]))
//       -> (logits [B, S, V] f32, or [B, 1, V] with lastTokenLogits (each
//           sequence's last token's), the updated pools)
//
// S new tokens per sequence (S = 1 in `decode`; `append`, with mnemoc
// --append-step, is `decode` with S dynamic) at their positions (-1 for
// the padding of a ragged batch); context_lengths counts each sequence's
// tokens after the step. The pools are updated in place: each pool
// argument carries `mnemo.in_place` and its result `mnemo.in_place_of`, so
// the artifact passes the caller's pool and returns only the logits.
// `mnemo.dim_kinds` says which bound a dynamic dim has (batch or pages);
// `mnemo.kv_window`, a sliding-window layer's window (the runtime may free
// the pages behind it). A pool's `mnemo.kv_last` W says the steps read only
// the rows of its last W tokens (the runtime may free the pages behind
// them too); `mnemo.kv_every` R marks a pool of one row per R tokens (entry
// w at slot w), paged through its own table block_table.every.R, whose
// page k holds entries [kP, (k+1)P).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_FRONTEND_GENERATIONSTEP_H
#define MNEMO_FRONTEND_GENERATIONSTEP_H

#include "mnemo/Frontend/KVCacheOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace mlir::mnemo {

/// A pool a layer keeps besides its keys and values: [Pages, 1, P, width]
/// named cache.L.<name>, in the cache's type (bf16 for an FP8 cache).
/// `every` and `last` say which of its rows the steps read (declared on the
/// pool as `mnemo.kv_every` and `mnemo.kv_last`): one per `every` tokens
/// (compressed entries, entry w at slot w, through the step's table for
/// `every`), or those of the last `last` tokens; 0 for none of the two.
struct ExtraPool {
  std::string name;
  int64_t width;
  int64_t every = 0, last = 0;
};

/// One layer's cache: KV heads, key and value widths, attention window,
/// and the width of a lightning indexer's key per token (DeepSeek-V3.2;
/// 0 without one), kept in a pool of its own in the cache's type (bf16 for
/// an FP8 cache).
struct StepLayerCache {
  /// A valueDim of 0: no value pool (a layer whose values are its keys or
  /// their leading features: DeepSeek-V4's K = V head, an MLA layer's
  /// latent).
  int64_t heads, keyDim, valueDim;
  /// The attention window: the runtime frees pages behind it
  /// (`mnemo.kv_window`).
  std::optional<int64_t> window;
  int64_t indexKeyDim = 0;
  /// Further pools, after the others: state a layer keeps besides its keys
  /// (DeepSeek-V4's compressor rows and compressed entries).
  SmallVector<ExtraPool> extraPools = {};
  /// The window of tokens whose keys and values the steps read, declared
  /// as `mnemo.kv_last` on the key and value pools (a layer whose
  /// attention itself has no window to declare). 0: none.
  int64_t readWindow = 0;
};

/// A generation step function being built, with its arguments; the pools
/// hold each layer's current value (updated by writeCache).
struct GenerationStep {
  func::FuncOp func;
  Value inputIds, positions, blockTable, contextLengths;
  /// Per rate R of the entry pools: block_table.every.R.
  SmallVector<std::pair<int64_t, Value>> entryTables;
  SmallVector<Value> keys, values; // per layer: [Pages, Hkv, P, D]
  /// FP8 pools' scales, per layer ([Pages, Hkv, P] f32); empty otherwise.
  SmallVector<Value> keyScales, valueScales;
  /// Per layer: its indexer keys' pool [Pages, 1, P, Di], or null.
  SmallVector<Value> indexKeys;
  /// Per layer: its extra pools (StepLayerCache::extraPools), in order.
  SmallVector<SmallVector<Value>> extras;
  /// The logits are each sequence's last token's only ([B, 1, V]; the
  /// head applied to lastTokenRows), not every token's ([B, S, V]).
  bool lastTokenLogits = false;
};

/// A public function `name(inputs...) -> results`, its arguments and
/// results named for the artifact (`mnemo.name`).
func::FuncOp
createNamedFunction(ImplicitLocOpBuilder &b, StringRef name,
                    ArrayRef<std::pair<std::string, Type>> inputs,
                    ArrayRef<std::pair<std::string, Type>> results);

/// The storage type of a cache of `dtype`.
FloatType kvCacheElementType(KVCacheDType dtype, Builder &b);

/// Creates the public function `name` (S = `seqLen`, static or dynamic)
/// with its entry block and sets `b`'s insertion point at its start. With
/// `lastTokenLogits` and a dynamic S, its logits are [B, 1, V], each
/// sequence's last token's (GenerationStep::lastTokenLogits).
GenerationStep createGenerationStep(ImplicitLocOpBuilder &b, StringRef name,
                                    int64_t seqLen, int64_t vocab,
                                    const KVCacheOptions &options,
                                    ArrayRef<StepLayerCache> layers,
                                    bool lastTokenLogits = false);

/// The rows of `h` ([B, S, H]) at each sequence's last token of the step
/// (its last position that is not padding, -1; a step's batch is padded
/// at the end): [B, 1, H]. A prompt's logits are needed at its last token
/// only, so the head (a GEMM of S x H x V) runs on those rows.
Value lastTokenRows(ImplicitLocOpBuilder &b, const GenerationStep &step,
                    Value h);

/// Writes `key` and `value` ([B, Hkv, S, D]) of layer `layer` into its pools
/// at the step's positions; the step's pools become the updated ones. A
/// layer without a value pool writes its keys alone (`value` null).
void writeCache(ImplicitLocOpBuilder &b, GenerationStep &step, int64_t layer,
                Value key, Value value);

/// The value pool of layer `layer` ([Pages, Hkv, P, dv]) and its scales
/// (FP8; else null): its own, or for a layer without one the leading `dv`
/// features of its key pool and the keys' scales (an MLA layer's latent,
/// cached once as the first features of its key rows).
std::pair<Value, Value> valuePool(ImplicitLocOpBuilder &b,
                                  const GenerationStep &step, int64_t layer,
                                  int64_t dv);

/// Writes the indexer keys `key` ([B, 1, S, Di]) of layer `layer` into its
/// pool at the step's positions.
void writeIndexKeys(ImplicitLocOpBuilder &b, GenerationStep &step,
                    int64_t layer, Value key);
/// The block table of the pools of one row per `every` tokens (0: the
/// step's block table, of the pools of a row per token).
Value blockTableOf(const GenerationStep &step, int64_t every);

/// Writes `rows` ([B, H, S, d]) into `pool` at `positions` ([B, S] i64, -1:
/// none) through the step's block table (the table of the pools of one row
/// per `every` tokens; an FP8 pool: with its `scales`); `pool` (and
/// `*scales`) become the updated ones.
void writePool(ImplicitLocOpBuilder &b, GenerationStep &step, Value &pool,
               Value rows, Value positions, Value *scales = nullptr,
               int64_t every = 0);

/// Returns `logits` (cast to the result type) and the pools.
void finishGenerationStep(ImplicitLocOpBuilder &b, GenerationStep &step,
                          Value logits);

} // namespace mlir::mnemo

#endif // MNEMO_FRONTEND_GENERATIONSTEP_H

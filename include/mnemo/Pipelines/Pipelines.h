//===- Pipelines.h - mnemo pass pipelines -----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_PIPELINES_PIPELINES_H
#define MNEMO_PIPELINES_PIPELINES_H

#include "dialects/Mnemo/Transforms/MLAFormChoice.h"

#include "mlir/Pass/PassManager.h"

#include <functional>

namespace mlir::mnemo {

/// Options of the target-independent tiling stage.
struct TilingOptions {
  bool tileAttention = true;
  int64_t blockQ = 32;
  int64_t blockKV = 64;
  /// A GQA group's packed query tile keeps blockQ rows (CPU register
  /// tiles), rather than blockQ positions of every head.
  bool groupInBlock = false;
  /// Keys are transposed once, in [D, blockKV] blocks, before the query
  /// tiles (the CPU's QK^T), rather than each key tile in every step.
  bool transposeKeys = false;
  /// A result transposed to [B, S, H, D] is written in that layout.
  bool foldTransposes = false;
  /// The positions' masks only on key tiles that hide some key.
  bool maskEdgesOnly = false;
  /// mnemo.rope's cos and sin as tables shared by the ropes of the same
  /// positions (convert-mnemo-to-linalg's rope-tables).
  bool ropeTables = false;
  /// mnemo.top_k's scratch per row (convert-mnemo-to-linalg's
  /// top-k-row-scratch).
  bool topKRowScratch = false;
  /// mnemo.experts along its output features (convert-mnemo-to-linalg's
  /// experts-along-outputs).
  bool expertsAlongOutputs = false;
  bool tileLinear = true;
  /// Queries per chunk of a DeepSeek-V4 prefill's attention
  /// (mnemo-decompose-compressed-attention's query-chunk; 0: one attention
  /// over every key).
  int64_t compressedQueryChunk = 0;
  /// Query heads a key head from which mnemo.compressed_attention becomes
  /// a mnemo.sparse_attention over each query's listed keys
  /// (mnemo-decompose-compressed-attention's selected-group; 0: never).
  int64_t compressedSelectedGroup = 0;
  /// Query rows times indexer heads per chunk of a lightning indexer and its
  /// top-k (mnemo-chunk-indexer-top-k's head-rows; 0: whole).
  int64_t indexerHeadRows = 0;
  /// A prefill's mnemo.experts grouped by expert (mnemo-group-experts).
  bool groupExperts = false;
  /// Rows of one expert's blocks in the grouped GEMMs (0: the loop over
  /// experts of the CPU targets).
  int64_t expertBlockRows = 0;
  /// An attention over a decoder's gathered past and new tokens becomes a
  /// paged attention (mnemo-attend-over-pages; a target with its kernel).
  bool attendOverPages = false;
  /// The decomposition of mnemo.mla_attention (auto: each op's form).
  MLAFormChoice mlaForm = MLAFormChoice::Auto;
  /// The target's kernel selection, run after MLA is decomposed and before
  /// attention is tiled (TargetBackend::buildKernelSelectionPipeline).
  std::function<void(OpPassManager &)> selectKernels;
  /// Run after attention is tiled (TargetBackend::buildTileKernelPipeline).
  std::function<void(OpPassManager &)> selectTileKernels;
};

/// Graph-level rewrites on mnemo ops (the `fused` stage).
/// `keepWeightLayout`: constant linear weights keep their layout (weights
/// read in place from a checkpoint), rather than being transposed to
/// in_out; `f32OutIn`: constant f32 weights are laid out [N, K] (out_in)
/// whatever their source's layout (a GPU target's TF32 GEMM reads them so).
void buildFusionPipeline(OpPassManager &pm, bool keepWeightLayout = false,
                         bool f32OutIn = false);

/// MLA decomposed into mnemo.attention, FlashAttention tiling of
/// mnemo.attention, then the reference decomposition of the remaining mnemo
/// ops (the `tiled` stage).
void buildTilingPipeline(OpPassManager &pm, const TilingOptions &options);

/// The host reference path: the reference decomposition of every mnemo op,
/// bufferized, lowered to loops and then to the LLVM dialect, ready for the
/// JIT (`mlir-runner`). Scalar math calls libm, so results are exact to f32
/// rounding; nothing is tiled or vectorized.
void buildReferencePipeline(OpPassManager &pm);

/// Registers `mnemo-reference-pipeline`.
void registerPipelines();

} // namespace mlir::mnemo

#endif // MNEMO_PIPELINES_PIPELINES_H

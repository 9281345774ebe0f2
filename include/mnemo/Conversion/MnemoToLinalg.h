//===- MnemoToLinalg.h - mnemo to linalg reference lowering -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_CONVERSION_MNEMOTOLINALG_H
#define MNEMO_CONVERSION_MNEMOTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::mnemo {

enum class TopKTies : uint32_t;

/// mnemo.attention → linalg.generic: scores, mask, softmax, weighted sum.
void populateAttentionToLinalgPatterns(RewritePatternSet &patterns);
/// mnemo.mla_attention → per-head up-projections and a mnemo.attention (the
/// expanded form), lowered in turn by the attention patterns.
void populateMLAToLinalgPatterns(RewritePatternSet &patterns);
void populateCompressedAttentionToLinalgPatterns(RewritePatternSet &patterns);
void populateGatedPoolToLinalgPatterns(RewritePatternSet &patterns);
/// mnemo.rope → one linalg.generic over the output with cos/sin inline;
/// with `tables`, the angles' cos and sin first as tables over (positions'
/// batch, sequence, rotary feature), which CSE shares between the ropes of
/// one set of positions (every layer's), and a mnemo.rope_tables reading
/// them (the same values: the same ops evaluate each angle).
void populateRopeToLinalgPatterns(RewritePatternSet &patterns,
                                  bool tables = false);
/// mnemo.rms_norm, swiglu, linear and embedding → linalg.generic.
void populateLayerToLinalgPatterns(RewritePatternSet &patterns);
/// mnemo.lightning_indexer and mnemo.sparse_attention → linalg.generic
/// (the sparse attention gathering the keys it lists inside its
/// contractions).
void populateSparseAttentionToLinalgPatterns(RewritePatternSet &patterns);
/// mnemo.experts → contractions over each token's selected experts; with
/// `alongOutputs`, constant weights transposed at compile time and the
/// output feature innermost (rows of weights and results read in order).
void populateExpertsToLinalgPatterns(RewritePatternSet &patterns,
                                     bool alongOutputs = false);
/// mnemo.top_k → a selection per row in scf loops over a scratch queue:
/// one queue for all rows, or with `rowScratch` one per row allocated in
/// the row's iteration (CPU targets: only the rows in flight hold one).
void populateTopKToLoopsPatterns(RewritePatternSet &patterns,
                                 bool rowScratch = false);
/// mnemo.top_k's selection step of that lowering, for a kernel that needs
/// it: moves the `k` largest of the queue's first `n` entries
/// (`scores[base + i]`, `ids[base + i]`, 1-D memrefs of the row's compute
/// type and i32) to its front, as libstdc++'s std::nth_element orders them
/// under `ties` (mnemo.top_k's definition).
void buildTopKSelection(OpBuilder &b, Location loc, Value scores, Value ids,
                        Value base, TopKTies ties, Value n, Value k);

/// The choices of the lowering that depend on the target.
struct MnemoToLinalgOptions {
  /// As in populateRopeToLinalgPatterns.
  bool ropeTables = false;
  /// As in populateTopKToLoopsPatterns.
  bool topKRowScratch = false;
  /// As in populateExpertsToLinalgPatterns.
  bool expertsAlongOutputs = false;
};

/// All of the above: the reference decomposition of the mnemo dialect.
void populateMnemoToLinalgPatterns(RewritePatternSet &patterns,
                                   const MnemoToLinalgOptions &options = {});

} // namespace mlir::mnemo

#endif // MNEMO_CONVERSION_MNEMOTOLINALG_H

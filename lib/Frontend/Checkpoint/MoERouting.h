//===- MoERouting.h - DeepSeek-V3 expert routing ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_CHECKPOINT_MOEROUTING_H
#define MNEMO_LIB_FRONTEND_CHECKPOINT_MOEROUTING_H

#include "ModelConfig.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::mnemo {

/// The per-expert weights [B, S, E] of transformers' DeepseekV3TopkRouter
/// for router logits [B, S, E] (f32, dynamic B and S given by `batch` and
/// `seq`): sigmoid scores, choice = score + `bias` [E], groups ranked by the
/// sum of their two best choices, the `topk_group` best groups kept, the
/// `num_experts_per_tok` best kept experts selected; a selected expert's
/// weight is its score (normalized over the selection with norm_topk_prob)
/// times routed_scaling_factor, any other expert's is 0.
///
/// Ranks are counted rather than sorted: x is among the k best of its set
/// when fewer than k others beat it (a larger value, or an equal one at a
/// lower index).
Value buildExpertWeights(ImplicitLocOpBuilder &b, Value logits, Value bias,
                         const DeepSeekConfig &config, Value batch, Value seq);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_MOEROUTING_H

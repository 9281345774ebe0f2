//===- ExpertGroups.h - mnemo.experts grouped by expert ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pieces mnemo-group-experts' two forms share (GroupExperts.cpp: the
// loop over experts; GroupExpertsGemm.cpp: grouped GEMMs).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_TRANSFORMS_EXPERTGROUPS_H
#define MNEMO_DIALECT_TRANSFORMS_EXPERTGROUPS_H

#include "dialects/Mnemo/IR/MnemoOps.h"

namespace mlir::mnemo::expert_groups {

/// The expert pair `p` of the flat indices [P] names, or `experts` when it
/// names none.
Value expertOf(OpBuilder &b, Location loc, Value indices, Value p,
               int64_t experts);

/// out[b, s, o] = sum over the token's slots j (in order) of `sorted`
/// [rows, O] at positions[(b S + s) K + j], times the slot's routing
/// weight when `weighted`; zero for a slot naming no expert. f32 [B, S, O].
Value sumSlots(OpBuilder &b, Location loc, ExpertsOp op, Value sorted,
               Value positions, bool weighted);

/// `op` as grouped GEMMs over blocks of `blockRows` rows (the pass's
/// group-rows form; `roundRows`: its round-rows option). f32 [B, S, H].
Value tiledExperts(OpBuilder &b, Location loc, ExpertsOp op, int64_t blockRows,
                   bool roundRows);

} // namespace mlir::mnemo::expert_groups

#endif // MNEMO_DIALECT_TRANSFORMS_EXPERTGROUPS_H

//===- MnemoOps.td - mnemo dialect operations --------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_MNEMOOPS
#define MNEMO_DIALECT_MNEMOOPS

include "dialects/Mnemo/IR/AttentionOps.td"
include "dialects/Mnemo/IR/MLAOps.td"
include "dialects/Mnemo/IR/PositionOps.td"
include "dialects/Mnemo/IR/LayerOps.td"
include "dialects/Mnemo/IR/KVCacheOps.td"
include "dialects/Mnemo/IR/SparseAttentionOps.td"
include "dialects/Mnemo/IR/CompressedMemoryOps.td"
include "dialects/Mnemo/IR/QuantOps.td"

#endif // MNEMO_DIALECT_MNEMOOPS

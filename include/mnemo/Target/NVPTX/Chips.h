//===- Chips.h - facts about the GPUs the NVPTX target knows ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One row per chip (`--target=` name): what the kernel passes and the
// backend decide from. Adding a chip is adding a row.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TARGET_NVPTX_CHIPS_H
#define MNEMO_TARGET_NVPTX_CHIPS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>

namespace mlir::mnemo {

struct ChipInfo {
  /// The target name and PTX architecture ("sm_90a").
  llvm::StringLiteral name;
  /// Multiprocessors of the chip's data-center part (A100, H100/H200): the
  /// split-KV and split-K choices fill them.
  int64_t multiprocessors;
  /// Warpgroup MMA (wgmma) and TMA tensor maps.
  bool warpgroupMma;
  /// Dynamic shared memory one block may take (the GEMM kernel's limit),
  /// and the most it may opt into (the attention kernel's: it counts the
  /// blocks a multiprocessor then holds).
  int64_t blockSharedBytes;
  int64_t maxBlockSharedBytes;
  /// Programmatic dependent launch (`griddepcontrol`, sm_90): a kernel may
  /// start while the one before it finishes.
  bool programmaticLaunch;
  /// LLVM NVPTX features (the PTX ISA version).
  llvm::StringLiteral ptxFeatures;
};

inline constexpr ChipInfo kChips[] = {
    // A100: two 101,376-byte blocks fit one multiprocessor; one block may
    // take 163 KiB.
    {"sm_80", 108, false, 101376, 166912, false, "+ptx80"},
    // H100/H200: up to 227 KiB of shared memory per block.
    {"sm_90a", 132, true, 232448, 232448, true, "+ptx80"},
};

/// The chip named `name`, or null.
inline const ChipInfo *lookupChip(llvm::StringRef name) {
  for (const ChipInfo &chip : kChips)
    if (chip.name == name)
      return &chip;
  return nullptr;
}

} // namespace mlir::mnemo

#endif // MNEMO_TARGET_NVPTX_CHIPS_H

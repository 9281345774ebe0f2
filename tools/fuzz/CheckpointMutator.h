//===- CheckpointMutator.h - structure-aware checkpoint mutation -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The checkpoint fuzz target's input packs a checkpoint directory into one
// buffer: config.json, a NUL byte, then model.safetensors. Byte mutations
// of either rarely keep the JSON valid or the config consistent with the
// tensors, so these parse both and mutate what the importer reads: config
// values (numbers, strings from a pool of model and rope types, keys
// dropped or copied), and the safetensors header's entries (dtypes, shapes,
// data offsets, names), keeping the tensor data.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_FUZZ_CHECKPOINTMUTATOR_H
#define MNEMO_TOOLS_FUZZ_CHECKPOINTMUTATOR_H

#include "llvm/ADT/StringRef.h"
#include <cstddef>
#include <cstdint>
#include <utility>

namespace mnemo::fuzz {

/// The config.json and model.safetensors parts of a packed checkpoint.
std::pair<llvm::StringRef, llvm::StringRef> splitCheckpoint(llvm::StringRef);

/// Mutates the packed checkpoint in `data[0, size)` in place, keeping it at
/// most `maxSize` bytes; returns its new size.
size_t mutateCheckpoint(uint8_t *data, size_t size, size_t maxSize,
                        unsigned seed);

} // namespace mnemo::fuzz

#endif // MNEMO_TOOLS_FUZZ_CHECKPOINTMUTATOR_H

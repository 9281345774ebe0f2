//===- fuzz_load_mutator.cpp - structure-aware mutation for fuzz-load -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Gives mnemo-fuzz-load (runtime/fuzz/fuzz_load.cpp) the artifact mutator of
// ArtifactMutator.h. It lives apart from the target so that the runtime's
// own fuzz build (MNEMO_RUNTIME_FUZZ), which has no FlatBuffers reflection
// library, keeps libFuzzer's byte mutations.
//
//===----------------------------------------------------------------------===//

#include "ArtifactMutator.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  return mnemo::fuzz::mutateArtifact(data, size, maxSize, seed);
}

//===- ArtifactMutator.h - structure-aware mutation of artifacts -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Byte mutations of an artifact mostly break its FlatBuffers offsets, so the
// loader rejects them in its first check and its plan, shape-expression,
// tensor-map and weight checks are rarely reached. These mutate the
// artifact through FlatBuffers' reflection over the schema it was written
// with (runtime/schema/artifact.fbs, embedded in binary form): any scalar
// field of any table or struct, strings, and the lengths and order of
// vectors, keeping every offset valid. The result is size-prefixed and
// signed again (metadata_crc32), and the embedded weights segment moves
// with the metadata, so a mutation reaches the checks behind the verifier.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_FUZZ_ARTIFACTMUTATOR_H
#define MNEMO_TOOLS_FUZZ_ARTIFACTMUTATOR_H

#include <cstddef>
#include <cstdint>

namespace mnemo::fuzz {

/// Mutates the artifact in `data[0, size)` in place, keeping it at most
/// `maxSize` bytes; returns its new size. Inputs whose metadata does not
/// verify against the schema get libFuzzer's byte mutations, as does one
/// call in eight, so damaged files keep being exercised; a quarter of the
/// mutated artifacts get byte mutations on top.
size_t mutateArtifact(uint8_t *data, size_t size, size_t maxSize,
                      unsigned seed);

} // namespace mnemo::fuzz

#endif // MNEMO_TOOLS_FUZZ_ARTIFACTMUTATOR_H

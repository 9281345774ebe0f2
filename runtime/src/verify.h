//===- verify.h - checking an artifact before use ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Loading verifies in three steps, each assuming the previous one passed:
//   1. verifyHeader: the size prefix, the identifier, the FlatBuffer (with
//      the FlatBuffers verifier), the ABI version, the target, the code
//      format;
//   2. verifyWeightsSegment: where the weights segment lies;
//   3. verifyContents: the weights table, the profile points, the kernels,
//      every function's signature and plan; it fills the model's plain
//      structures.
// Every failure is a status naming the artifact and the field.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_VERIFY_H
#define MNEMO_RUNTIME_VERIFY_H

#include "model.h"

#include "artifact_generated.h"

namespace mnemo::rt {

/// "[2, ?, 8]" (-1 as "?"), bounded in length, for messages.
String formatShape(const Vector<int64_t> &dims);

/// Step 1. On success `*out` is the root table and `*metadataEnd` the file
/// offset just past the size-prefixed FlatBuffer. `ptx` says which code the
/// caller runs: PTX (the CUDA executor) or a shared object for this host.
mnemo_status_t verifyHeader(const char *what, const uint8_t *data, size_t size,
                            const ::mnemo::artifact::Artifact **out,
                            uint64_t *metadataEnd);

/// Step 2: the segment [offset, offset + size) must lie within a region of
/// `regionSize` bytes, start 64-byte aligned and not before `minOffset`.
mnemo_status_t verifyWeightsSegment(const char *what, uint64_t offset,
                                    uint64_t size, uint64_t regionSize,
                                    uint64_t minOffset);

/// Step 3. `model.weightsBase` and `model.weightsSize` must be set; fills
/// `model.weights`, `model.profilePoints`, `model.kernels` (without their
/// addresses) and `model.functions`.
/// Fills `plan`'s inputs and outputs from `f`'s signature.
mnemo_status_t verifySignature(const mnemo_model_t &model,
                               const ::mnemo::artifact::Function &f,
                               FunctionPlan &plan);

/// Fills `plan.gpu` from a PTX artifact's function `f` (after its
/// signature), checking every index, size and launch dimension.
mnemo_status_t verifyGpuFunction(const mnemo_model_t &model,
                                 const ::mnemo::artifact::Function &f,
                                 FunctionPlan &plan);

mnemo_status_t verifyContents(mnemo_model_t &model,
                              const ::mnemo::artifact::Artifact &artifact);

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_VERIFY_H

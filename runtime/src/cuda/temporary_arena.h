//===- temporary_arena.h - GPU temporaries in one block ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Where each temporary of a GPU plan (model.h's GpuPlan) lives inside one
// device allocation. A plan is a straight line of launches on one stream,
// so a temporary is live from the first launch that names it (directly or
// through a tensor map of it) to the last one; an output stays live to the
// end of the run. Temporaries whose live ranges do not meet share bytes.
// A prefill's plan holds hundreds of temporaries (each layer's
// projections, norms and MLP); given a buffer each, a 32 x 2048-token
// prompt of a 1B model needed 117 GiB, most of it for layers long done.
//
// The layout depends on the bytes each temporary takes at the call's input
// shape and on nothing else, so that the same shape always gets the same
// offsets (a CUDA graph captured at a shape stays valid while the arena
// does not move). Placement is greedy: the largest temporary first, each
// at the lowest offset that no placed temporary live at the same time
// covers. No driver call here: the executor allocates the bytes.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_CUDA_TEMPORARY_ARENA_H
#define MNEMO_RUNTIME_CUDA_TEMPORARY_ARENA_H

#include "model.h"

#include "support/Vector.h"

#include <cstdint>

namespace mnemo::rt::cuda {

class TemporaryArena {
public:
  /// Every temporary's offset is a multiple of this (cuMemAlloc's own
  /// alignment, more than any kernel or tensor map asks for).
  static constexpr uint64_t kAlign = 256;

  /// The live ranges of `plan`'s temporaries (a verified plan: every index
  /// in range).
  explicit TemporaryArena(const GpuPlan &plan);

  /// Places the temporaries at `bytes` (per plan buffer, the bytes it
  /// takes at this shape; those of other kinds are ignored). Returns
  /// whether any offset, or the extent, changed since the last placement.
  bool place(const Vector<uint64_t> &bytes);

  /// After place: buffer `buffer`'s offset (a temporary of 0 bytes gets 0)
  /// and the bytes the layout spans.
  uint64_t offset(size_t buffer) const { return offsets[buffer]; }
  uint64_t extent() const { return span; }
  /// The plan's temporaries, by buffer index.
  const Vector<uint32_t> &temporaries() const { return temps; }

private:
  Vector<uint32_t> temps;
  Vector<uint32_t> first, last; // per plan buffer: its live launches
  Vector<uint64_t> offsets;     // per plan buffer
  Vector<uint64_t> placedBytes; // per plan buffer, at the last placement
  uint64_t span = 0;
  bool placed = false;
};

} // namespace mnemo::rt::cuda

#endif // MNEMO_RUNTIME_CUDA_TEMPORARY_ARENA_H

//===- hooks.h - the functions a code object calls back ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A CPU code object may export `mnemo_hooks`, a table of function pointers
// (schema/artifact.fbs, "Hooks"), which loading fills with hookParallelFor,
// hookProfile and, in a table of four slots, hookAlloc and hookFree. Those
// are the same for every model, so they find the session they serve
// through a thread-local execution context that mnemo_session_run installs
// around its kernel calls. A thread without one (a pool's worker, a thread
// calling a kernel outside a session) runs loops inline, profiles nothing
// and allocates plain blocks, which no session caches.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_HOOKS_H
#define MNEMO_RUNTIME_HOOKS_H

#include "parallel.h"
#include "profile.h"

#include <cstddef>
#include <cstdint>

namespace mnemo::rt {

class BufferCache;

/// The layout of the code object's `mnemo_hooks`. Older code has the first
/// two slots only (kHooksTableMinSize bytes): it calls malloc and free
/// itself, and loading fills just those two.
struct HooksTable {
  void (*parallelFor)(ParallelBody body, void *ctx, int64_t n, int64_t cost);
  void (*profile)(int64_t point, int64_t phase);
  void *(*alloc)(int64_t size, int64_t align);
  void (*free)(void *p);
};

/// The size of older code's table (parallel_for and profile).
constexpr size_t kHooksTableMinSize = offsetof(HooksTable, alloc);

/// The symbol the runtime looks up.
constexpr const char *kHooksSymbol = "mnemo_hooks";

/// What the hooks act on for the current thread's session run.
struct ExecutionContext {
  ThreadPool *pool = nullptr;      // null: loops run inline
  ProfileState *profile = nullptr; // null: profiling is off
  BufferCache *buffers = nullptr;  // null: alloc gives plain blocks
};

/// The calling thread's context; null outside a session run.
ExecutionContext *currentContext();

/// Installs a context (null: none) for the calling thread for its
/// lifetime, then restores the previous one, so nested uses are safe.
class ScopedExecutionContext {
public:
  explicit ScopedExecutionContext(ExecutionContext *context);
  ~ScopedExecutionContext();
  ScopedExecutionContext(const ScopedExecutionContext &) = delete;
  ScopedExecutionContext &operator=(const ScopedExecutionContext &) = delete;

private:
  ExecutionContext *previous;
};

/// The parallel_for hook: parallelFor on the context's pool. Bodies run
/// without a context, on every thread, so a parallel_for from inside one
/// runs inline (the pool is busy with the outer loop).
void hookParallelFor(ParallelBody body, void *ctx, int64_t n, int64_t cost);

/// The profile hook: phase 0 begins region `point`, 1 ends it; anything
/// else, or no profiling context, is ignored.
void hookProfile(int64_t point, int64_t phase);

/// The alloc hook: `size` bytes aligned to `align` (allocateBuffer), from
/// the context's buffer cache, or a plain block without one. Bodies of
/// parallel loops run without a context, so their temporaries are plain.
void *hookAlloc(int64_t size, int64_t align);

/// The free hook: freeBuffer, on any thread; null is a no-op.
void hookFree(void *p);

/// The table loading stores into a code object (the first
/// kHooksTableMinSize bytes of it into older code's table).
inline HooksTable runtimeHooks() {
  return {hookParallelFor, hookProfile, hookAlloc, hookFree};
}

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_HOOKS_H

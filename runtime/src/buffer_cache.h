//===- buffer_cache.h - the buffers the code allocates ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the code's alloc and free hooks (hooks.h) hand out. Every run of a
// model allocates the same intermediate and result buffers again; from
// malloc, those of 128 KiB or more are fresh mmaps that the kernel faults
// in and zeroes on every run. A session therefore keeps the blocks its
// code frees in a BufferCache and hands them out again, run after run.
//
// Every block starts with a BlockHeader just before the pointer the code
// gets, so that free needs nothing but the pointer: the underlying
// allocation is
//   [base ... padding ... BlockHeader][payload: size bytes]
//                                      ^ returned, aligned to `align`
// A block allocated without a session (a pool worker inside a parallel
// body, code run outside a session) has no owner and goes straight back to
// malloc's free; a block of a cache goes back to its owner's free lists,
// whichever thread frees it.
//
// Cache policy. Blocks are reused only for exactly the same (size, align),
// so a run that repeats the previous one's allocations (the common case:
// a model's working set is the same from run to run) reuses every block
// and the cache never holds more than the session's peak. Nothing bounds a
// cache within a run. A session whose shapes change (dynamic dims) would
// keep the blocks of every shape it ever saw, so each run counts as a tick:
// the blocks of a (size, align) that no allocation asked for during
// kIdleRuns consecutive runs are released when the next run begins.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_BUFFER_CACHE_H
#define MNEMO_RUNTIME_BUFFER_CACHE_H

#include "support/Map.h"
#include "support/Sync.h"
#include "support/Vector.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace mnemo::rt {

class BufferCache;

/// The smallest alignment a block gets (a smaller request gets this one),
/// and the largest the contract promises (larger powers of two work too).
constexpr int64_t kMinBufferAlign = 16;
constexpr int64_t kMaxBufferAlign = 4096;

/// The header just before every block's payload. 32 bytes, so that it
/// fits in front of a 16-aligned payload and stays 16-aligned itself.
struct alignas(16) BlockHeader {
  uint32_t magic;     // kBlockLive or kBlockCached
  uint32_t align;     // the payload's alignment
  uint64_t size;      // the payload's usable bytes
  BufferCache *owner; // null: released with std::free
  void *base;         // what malloc returned
};
static_assert(sizeof(BlockHeader) == 32, "the header layout is fixed");

/// Magic values: a block the code holds, and one in a cache's free list
/// (freeing that one again is a double free).
constexpr uint32_t kBlockLive = 0x424d6e4d;   // "MnMB"
constexpr uint32_t kBlockCached = 0x434d6e4d; // "MnMC"

/// The runs a (size, align) may go unasked before its blocks are released.
constexpr uint64_t kIdleRuns = 4;

/// A session's cache of freed blocks. allocate() and freeBuffer() may be
/// called from any thread; a mutex guards the free lists.
class BufferCache {
public:
  /// A new cache, or null when out of memory.
  static BufferCache *create();
  /// Releases every cached block. Blocks still held (code that never freed
  /// one) are released by their freeBuffer; the cache itself lives until
  /// the last of them comes back.
  static void destroy(BufferCache *cache);

  /// A block of `size` bytes aligned to `align`: a cached one of exactly
  /// that size and alignment, else a new one this cache owns. As
  /// allocateBuffer.
  void *allocate(int64_t size, int64_t align);

  /// A run begins: releases the blocks of every (size, align) that no
  /// allocation asked for during the last kIdleRuns runs.
  void beginRun();

  /// Blocks in the free lists, and their payload bytes.
  size_t cachedBlocks() const;
  uint64_t cachedBytes() const;
  /// Blocks of this cache that the code holds.
  size_t heldBlocks() const;

private:
  friend void freeBuffer(void *p);

  BufferCache() = default;
  ~BufferCache() = default;
  /// Takes back a block of this cache; returns whether the cache is to be
  /// deleted (closing, and that was the last block held).
  bool put(BlockHeader *header);

  struct FreeList {
    Vector<BlockHeader *> blocks;
    uint64_t lastUsed = 0; // the run that last asked for this key
  };

  /// Frees a cache whose last block came back.
  static void dispose(BufferCache *cache);

  mutable Mutex mutex;
  SortedMap<std::pair<uint64_t, uint64_t>, FreeList> lists; // (size, align)
  uint64_t run = 0;
  size_t cached = 0;
  uint64_t bytes = 0;
  size_t held = 0;
  bool closing = false;
};

/// Destroys a cache (BufferCache::destroy) when the owner goes.
struct BufferCacheDeleter {
  void operator()(BufferCache *cache) const { BufferCache::destroy(cache); }
};
using BufferCachePtr = std::unique_ptr<BufferCache, BufferCacheDeleter>;

/// A block of `size` bytes aligned to `align` (a power of two; below 16
/// means 16; not a power of two rounds up to one): from `cache` when given,
/// else a plain block. Null for a negative or too large size, an alignment
/// above 2^30, or when out of memory; never null otherwise, even for size
/// 0.
void *allocateBuffer(BufferCache *cache, int64_t size, int64_t align);

/// Releases a block allocateBuffer returned, on any thread: back to its
/// cache, or to malloc's free. Null is a no-op. Aborts with a message on a
/// pointer that is not a live block (a runtime bug: memory would be
/// corrupted otherwise).
void freeBuffer(void *p);

/// Underlying allocations that exist now, held or cached, process-wide
/// (for tests: a session that leaks or grows shows up here).
int64_t liveBufferBlocks();

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_BUFFER_CACHE_H

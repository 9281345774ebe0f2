//===- buffer_cache.cpp - the buffers the code allocates --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The blocks come from malloc, over-allocated by the header and the
// alignment, rather than from aligned_alloc: the header must sit right
// before the aligned payload, and one std::free of `base` releases both.
//
// A large new block has its pages faulted in with one madvise: a first run
// otherwise takes one page fault per 4 KiB of its intermediates, which
// dominated a first prefill's time (and is dearer still in a VM).
//
//===----------------------------------------------------------------------===//

#include "buffer_cache.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

using namespace mnemo::rt;

namespace {

/// Alignments beyond this are refused (null): the header stores 32 bits,
/// and no tensor wants more than a page or two.
constexpr uint64_t kLargestAlign = uint64_t(1) << 30;

static_assert(alignof(std::max_align_t) <= kMinBufferAlign &&
                  sizeof(BlockHeader) % alignof(std::max_align_t) == 0,
              "malloc's alignment bounds the padding in front of a header");

std::atomic<int64_t> liveBlocks{0};

/// The alignment a request gets, or 0 when it cannot be served.
uint64_t normalizeAlign(int64_t align) {
  if (align < kMinBufferAlign)
    return kMinBufferAlign;
  auto a = static_cast<uint64_t>(align);
  if (a > kLargestAlign)
    return 0;
  if (a & (a - 1)) // not a power of two: the next one serves it too
    a = uint64_t(1) << (64 - __builtin_clzll(a));
  return a;
}

/// Faults in the whole pages of [p, p + size) at once, where the system
/// can (Linux 5.14+); otherwise they fault in as they are first written.
void populate(void *p, uint64_t size) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  constexpr uint64_t kLarge = uint64_t(256) << 10;
  if (size < kLarge)
    return;
  // Blocks this large cost far more than the call.
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + size) & ~(page - 1);
  if (end > begin)
    (void)madvise(reinterpret_cast<void *>(begin), end - begin,
                  MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)size;
#endif
}

/// A new block with its header filled, or null.
void *newBlock(uint64_t size, uint64_t align, BufferCache *owner) {
  // malloc's result is max_align_t-aligned, so aligning base + header up
  // to `align` moves it by at most align - alignof(max_align_t).
  uint64_t extra = sizeof(BlockHeader) + align - alignof(std::max_align_t);
  // No object may exceed PTRDIFF_MAX; refusing here spares malloc (and a
  // sanitizer's malloc, which aborts) an impossible request.
  if (size > uint64_t(PTRDIFF_MAX) - extra)
    return nullptr;
  void *base = std::malloc(static_cast<size_t>(size + extra));
  if (!base)
    return nullptr;
  uintptr_t payload =
      (reinterpret_cast<uintptr_t>(base) + sizeof(BlockHeader) + align - 1) &
      ~static_cast<uintptr_t>(align - 1);
  auto *header = reinterpret_cast<BlockHeader *>(payload) - 1;
  header->magic = kBlockLive;
  header->align = static_cast<uint32_t>(align);
  header->size = size;
  header->owner = owner;
  header->base = base;
  liveBlocks.fetch_add(1, std::memory_order_relaxed);
  populate(header + 1, size);
  return header + 1;
}

/// Gives a block back to malloc.
void releaseBlock(BlockHeader *header) {
  header->magic = 0; // a stale pointer freed again fails the check
  liveBlocks.fetch_sub(1, std::memory_order_relaxed);
  std::free(header->base);
}

[[noreturn]] void die(const void *p, const char *what) {
  std::fprintf(stderr, "mnemo runtime: freeing buffer %p: %s\n", p, what);
  std::abort();
}

} // namespace

BufferCache *BufferCache::create() {
  void *p = std::malloc(sizeof(BufferCache));
  return p ? ::new (p) BufferCache() : nullptr;
}

void BufferCache::dispose(BufferCache *cache) {
  cache->~BufferCache();
  std::free(cache);
}

void BufferCache::destroy(BufferCache *cache) {
  if (!cache)
    return;
  Vector<BlockHeader *> blocks;
  bool last = false;
  {
    LockGuard lock(cache->mutex);
    cache->closing = true;
    for (auto &entry : cache->lists)
      blocks.insert(blocks.end(), entry.second.blocks.begin(),
                    entry.second.blocks.end());
    cache->lists.clear();
    cache->cached = 0;
    cache->bytes = 0;
    last = cache->held == 0;
  }
  for (BlockHeader *header : blocks)
    releaseBlock(header);
  if (last)
    dispose(cache);
}

void *BufferCache::allocate(int64_t size, int64_t align) {
  uint64_t a = normalizeAlign(align);
  if (size < 0 || a == 0)
    return nullptr;
  auto bytesWanted = static_cast<uint64_t>(size);
  {
    LockGuard lock(mutex);
    FreeList &list = lists[{bytesWanted, a}];
    list.lastUsed = run;
    ++held;
    if (!list.blocks.empty()) {
      BlockHeader *header = list.blocks.back();
      list.blocks.pop_back();
      --cached;
      bytes -= header->size;
      header->magic = kBlockLive;
      return header + 1;
    }
  }
  // malloc (maybe an mmap) outside the lock.
  void *p = newBlock(bytesWanted, a, this);
  if (!p) {
    LockGuard lock(mutex);
    --held;
  }
  return p;
}

bool BufferCache::put(BlockHeader *header) {
  mutex.lock();
  --held;
  if (closing) {
    bool last = held == 0;
    mutex.unlock();
    releaseBlock(header);
    return last;
  }
  auto [it, inserted] = lists.emplace({header->size, header->align}, {});
  if (inserted) // a key aged out while this block was held: a fresh start
    it->second.lastUsed = run;
  header->magic = kBlockCached;
  it->second.blocks.push_back(header);
  ++cached;
  bytes += header->size;
  mutex.unlock();
  return false;
}

void BufferCache::beginRun() {
  // Releases under the lock: a run begins on the session's thread while
  // none of its code runs, so nobody waits for it.
  LockGuard lock(mutex);
  ++run;
  for (auto it = lists.begin(); it != lists.end();) {
    FreeList &list = it->second;
    if (run - list.lastUsed <= kIdleRuns) {
      ++it;
      continue;
    }
    for (BlockHeader *header : list.blocks) {
      --cached;
      bytes -= header->size;
      releaseBlock(header);
    }
    it = lists.erase(it);
  }
}

size_t BufferCache::cachedBlocks() const {
  LockGuard lock(mutex);
  return cached;
}

uint64_t BufferCache::cachedBytes() const {
  LockGuard lock(mutex);
  return bytes;
}

size_t BufferCache::heldBlocks() const {
  LockGuard lock(mutex);
  return held;
}

void *mnemo::rt::allocateBuffer(BufferCache *cache, int64_t size,
                                int64_t align) {
  if (cache)
    return cache->allocate(size, align);
  uint64_t a = normalizeAlign(align);
  if (size < 0 || a == 0)
    return nullptr;
  return newBlock(static_cast<uint64_t>(size), a, nullptr);
}

void mnemo::rt::freeBuffer(void *p) {
  if (!p)
    return;
  auto *header = static_cast<BlockHeader *>(p) - 1;
  if (header->magic != kBlockLive)
    die(p, header->magic == kBlockCached
               ? "freed twice"
               : "not a block the runtime's alloc hook returned");
  if (BufferCache *owner = header->owner) {
    if (owner->put(header))
      BufferCache::dispose(owner);
    return;
  }
  releaseBlock(header);
}

int64_t mnemo::rt::liveBufferBlocks() {
  return liveBlocks.load(std::memory_order_relaxed);
}

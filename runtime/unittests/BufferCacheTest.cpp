//===- BufferCacheTest.cpp - the blocks of the alloc hook -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The buffer cache as a unit, without a code object: blocks reused for the
// same size and alignment, every alignment honoured, plain blocks where no
// session is, frees on other threads than the allocating one, the aging of
// unused sizes, destruction, large blocks faulted in at once, and the loud
// end of a foreign or double free.
// Sessions running code through the hooks are tested in HooksTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "buffer_cache.h"
#include "hooks.h"
#include "parallel.h"

#include "gtest/gtest.h"

#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

using namespace mnemo::rt;

namespace {

const BlockHeader &headerOf(const void *p) {
  return *(static_cast<const BlockHeader *>(p) - 1);
}

/// Owns a cache for a test.
struct Cache {
  BufferCachePtr cache{BufferCache::create()};
  BufferCache *operator->() { return cache.get(); }
  BufferCache *get() { return cache.get(); }
};

TEST(BufferCache, ReusesABlockOfTheSameSizeAndAlignment) {
  int64_t before = liveBufferBlocks();
  Cache c;
  ASSERT_NE(c.get(), nullptr);
  void *p = c->allocate(1000, 64);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(c->heldBlocks(), 1u);
  freeBuffer(p);
  EXPECT_EQ(c->heldBlocks(), 0u);
  EXPECT_EQ(c->cachedBlocks(), 1u);
  EXPECT_EQ(c->cachedBytes(), 1000u);
  // The same size and alignment: the same block.
  EXPECT_EQ(c->allocate(1000, 64), p);
  EXPECT_EQ(c->cachedBlocks(), 0u);
  // Another size or alignment: another block, even with p cached.
  freeBuffer(p);
  void *larger = c->allocate(1001, 64);
  void *aligned = c->allocate(1000, 128);
  EXPECT_NE(larger, p);
  EXPECT_NE(aligned, p);
  EXPECT_EQ(c->cachedBlocks(), 1u);
  // Alignments below 16 are all 16.
  void *a = c->allocate(24, 0);
  freeBuffer(a);
  EXPECT_EQ(c->allocate(24, 8), a);
  freeBuffer(a);
  EXPECT_EQ(c->allocate(24, 16), a);
  freeBuffer(a);
  freeBuffer(larger);
  freeBuffer(aligned);
  EXPECT_EQ(liveBufferBlocks() - before, 4);
  EXPECT_EQ(c->cachedBlocks(), 4u);
  // Several blocks of one size: each handed out once.
  std::set<void *> blocks;
  for (int i = 0; i < 5; ++i)
    blocks.insert(c->allocate(4096, 16));
  EXPECT_EQ(blocks.size(), 5u);
  for (void *b : blocks)
    freeBuffer(b);
  std::set<void *> again;
  for (int i = 0; i < 5; ++i)
    again.insert(c->allocate(4096, 16));
  EXPECT_EQ(again, blocks);
  for (void *b : again)
    freeBuffer(b);
  c.cache.reset();
  EXPECT_EQ(liveBufferBlocks(), before);
}

TEST(BufferCache, AlignmentIsHonoured) {
  int64_t before = liveBufferBlocks();
  Cache c;
  for (BufferCache *cache : {c.get(), static_cast<BufferCache *>(nullptr)}) {
    for (int64_t align = 16; align <= kMaxBufferAlign; align *= 2) {
      for (int64_t size : {0, 1, 100, 4096, 300000}) {
        void *p = allocateBuffer(cache, size, align);
        ASSERT_NE(p, nullptr) << size << " bytes, align " << align;
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u)
            << size << " bytes, align " << align;
        const BlockHeader &h = headerOf(p);
        EXPECT_EQ(h.magic, kBlockLive);
        EXPECT_EQ(h.size, uint64_t(size));
        EXPECT_EQ(h.align, uint64_t(align));
        EXPECT_EQ(h.owner, cache);
        std::memset(p, 0xab, size_t(size)); // all of it is usable
        EXPECT_EQ(h.magic, kBlockLive);     // and apart from the header
        freeBuffer(p);
      }
    }
  }
  // Below 16 is 16; not a power of two rounds up; beyond 2^30 is refused.
  for (int64_t align : {-8, 0, 1, 2, 8}) {
    void *p = allocateBuffer(nullptr, 10, align);
    EXPECT_EQ(headerOf(p).align, 16u);
    freeBuffer(p);
  }
  void *p = allocateBuffer(c.get(), 10, 48);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(headerOf(p).align, 64u);
  freeBuffer(p);
  EXPECT_EQ(allocateBuffer(nullptr, 10, int64_t(1) << 31), nullptr);
  // A negative or impossible size gives null, and nothing is held.
  EXPECT_EQ(allocateBuffer(nullptr, -1, 16), nullptr);
  EXPECT_EQ(allocateBuffer(c.get(), -1, 16), nullptr);
  EXPECT_EQ(allocateBuffer(c.get(), INT64_MAX, 16), nullptr);
  EXPECT_EQ(c->heldBlocks(), 0u);
  freeBuffer(nullptr);
  c.cache.reset();
  EXPECT_EQ(liveBufferBlocks(), before);
}

TEST(BufferCache, PlainBlocksWhereNoSessionIs) {
  int64_t before = liveBufferBlocks();
  // A thread without a context (a thread calling the code outside a
  // session): plain blocks, freed on another thread.
  void *p = nullptr;
  std::thread([&] { p = hookAlloc(300000, 64); }).join();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(headerOf(p).owner, nullptr);
  EXPECT_EQ(liveBufferBlocks() - before, 1);
  hookFree(p);
  EXPECT_EQ(liveBufferBlocks(), before);

  // In a session's context, alloc takes the session's cache; inside a
  // parallel body, on the workers and the calling thread alike, there is
  // no context, and the blocks are plain. One body frees what another
  // thread allocated.
  Cache c;
  ThreadPool pool;
  pool.setThreads(4);
  ExecutionContext context{&pool, nullptr, c.get()};
  ScopedExecutionContext scope(&context);
  void *cached = hookAlloc(1000, 16);
  EXPECT_EQ(headerOf(cached).owner, c.get());
  struct Bodies {
    std::mutex mutex;
    std::vector<void *> blocks;
    int owned = 0;
  } bodies;
  auto body = [](void *ctx, int64_t begin, int64_t end) {
    auto *b = static_cast<Bodies *>(ctx);
    for (int64_t i = begin; i < end; ++i) {
      void *q = hookAlloc(64 + i, 32);
      std::lock_guard<std::mutex> lock(b->mutex);
      b->owned += headerOf(q).owner != nullptr;
      // Free a block another chunk allocated, keep this one.
      if (!b->blocks.empty()) {
        hookFree(b->blocks.back());
        b->blocks.pop_back();
      }
      b->blocks.push_back(q);
    }
  };
  hookParallelFor(body, &bodies, 4000, 1000);
  EXPECT_EQ(bodies.owned, 0);
  ASSERT_EQ(bodies.blocks.size(), 1u);
  hookFree(bodies.blocks.back());
  hookFree(cached);
  EXPECT_EQ(c->cachedBlocks(), 1u);
  EXPECT_EQ(liveBufferBlocks() - before, 1);
}

TEST(BufferCache, ABlockFreedOnAnotherThreadGoesBackToItsCache) {
  Cache c;
  void *p = c->allocate(200000, 256);
  std::thread([p] { freeBuffer(p); }).join();
  EXPECT_EQ(c->heldBlocks(), 0u);
  EXPECT_EQ(c->cachedBlocks(), 1u);
  EXPECT_EQ(c->allocate(200000, 256), p);
  // And allocated on another thread, from the same cache.
  void *q = nullptr;
  std::thread([&] { q = c->allocate(200000, 256); }).join();
  EXPECT_NE(q, p);
  EXPECT_EQ(headerOf(q).owner, c.get());
  freeBuffer(q);
  freeBuffer(p);
  EXPECT_EQ(c->cachedBlocks(), 2u);
}

TEST(BufferCache, ManyThreadsOnOneCache) {
  int64_t before = liveBufferBlocks();
  Cache c;
  constexpr int kThreads = 8, kRounds = 2000;
  // Every thread allocates, frees some of its own blocks and hands others
  // to the next thread, which frees them.
  std::vector<std::mutex> mutexes(kThreads);
  std::vector<std::vector<void *>> inbox(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 random(t);
      for (int round = 0; round < kRounds; ++round) {
        int64_t size = 16 * int64_t(random() % 8);
        int64_t align = int64_t(16) << (random() % 3);
        auto *p = static_cast<unsigned char *>(c->allocate(size, align));
        std::memset(p, t, size_t(size));
        if (round % 3 == 0) {
          freeBuffer(p);
        } else {
          std::lock_guard<std::mutex> lock(mutexes[(t + 1) % kThreads]);
          inbox[(t + 1) % kThreads].push_back(p);
        }
        std::vector<void *> mine;
        {
          std::lock_guard<std::mutex> lock(mutexes[t]);
          mine.swap(inbox[t]);
        }
        for (void *q : mine)
          freeBuffer(q);
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (auto &blocks : inbox)
    for (void *p : blocks)
      freeBuffer(p);
  // Every block came back to the cache, none was lost or counted twice.
  EXPECT_EQ(c->heldBlocks(), 0u);
  EXPECT_EQ(int64_t(c->cachedBlocks()), liveBufferBlocks() - before);
  c.cache.reset();
  EXPECT_EQ(liveBufferBlocks(), before);
}

TEST(BufferCache, SizesUnusedForFourRunsAreReleased) {
  int64_t before = liveBufferBlocks();
  Cache c;
  c->beginRun(); // run 1: both sizes
  void *once = c->allocate(5000, 16);
  void *always = c->allocate(7000, 16);
  freeBuffer(once);
  freeBuffer(always);
  EXPECT_EQ(c->cachedBlocks(), 2u);
  // Runs 2 to 5 ask for `always` only: `once` stays through four of them.
  for (int run = 2; run <= 5; ++run) {
    c->beginRun();
    EXPECT_EQ(c->cachedBlocks(), 2u) << "run " << run;
    void *p = c->allocate(7000, 16);
    EXPECT_EQ(p, always);
    freeBuffer(p);
  }
  // Run 6 begins: `once` goes, `always` stays.
  c->beginRun();
  EXPECT_EQ(c->cachedBlocks(), 1u);
  EXPECT_EQ(c->cachedBytes(), 7000u);
  EXPECT_EQ(liveBufferBlocks() - before, 1);
  EXPECT_EQ(c->allocate(7000, 16), always);
  // A block held across the aging of its key goes back to the cache when
  // freed and ages from there.
  for (int run = 7; run <= 12; ++run)
    c->beginRun();
  freeBuffer(always);
  EXPECT_EQ(c->cachedBlocks(), 1u);
  for (int run = 13; run <= 16; ++run)
    c->beginRun();
  EXPECT_EQ(c->cachedBlocks(), 1u);
  c->beginRun();
  EXPECT_EQ(c->cachedBlocks(), 0u);
  EXPECT_EQ(liveBufferBlocks(), before);
}

TEST(BufferCache, DestroyReleasesEverything) {
  int64_t before = liveBufferBlocks();
  BufferCache *cache = BufferCache::create();
  ASSERT_NE(cache, nullptr);
  std::vector<void *> blocks;
  for (int64_t size = 0; size < 1 << 20; size = 2 * size + 100)
    blocks.push_back(cache->allocate(size, 64));
  void *held = blocks.back();
  blocks.pop_back();
  for (void *p : blocks)
    freeBuffer(p);
  EXPECT_EQ(liveBufferBlocks() - before, int64_t(blocks.size()) + 1);
  // A block still held when its cache goes (code that never freed it) is
  // released when it is freed, on any thread; the cache waits for it.
  BufferCache::destroy(cache);
  EXPECT_EQ(liveBufferBlocks() - before, 1);
  std::thread([held] { freeBuffer(held); }).join();
  EXPECT_EQ(liveBufferBlocks(), before);
  BufferCache::destroy(nullptr);
}

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
TEST(BufferCache, ALargeBlockIsFaultedInWhenAllocated) {
  // A first run would otherwise take a page fault per page it writes.
  Cache c;
  constexpr int64_t kBytes = int64_t(4) << 20;
  void *p = c->allocate(kBytes, 64);
  ASSERT_NE(p, nullptr);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + kBytes) & ~(page - 1);
  std::vector<unsigned char> resident((end - begin) / page);
  ASSERT_EQ(mincore(reinterpret_cast<void *>(begin), end - begin,
                    resident.data()),
            0);
  size_t in = 0;
  for (unsigned char r : resident)
    in += r & 1;
  // A kernel before 5.14 refuses the advice: the pages then fault in as
  // they are written, and the block is still served.
  void *probe = mmap(nullptr, page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(probe, MAP_FAILED);
  bool supported = madvise(probe, page, MADV_POPULATE_WRITE) == 0;
  munmap(probe, page);
  EXPECT_EQ(in, supported ? resident.size() : in);
  freeBuffer(p);
}
#endif

TEST(BufferCacheDeathTest, AForeignPointerAborts) {
  // 64 bytes whose "header" is zeros: no magic.
  alignas(64) static unsigned char memory[128];
  EXPECT_DEATH(freeBuffer(memory + 64),
               "mnemo runtime: freeing buffer .*: not a block the runtime's "
               "alloc hook returned");
}

TEST(BufferCacheDeathTest, ADoubleFreeAborts) {
  EXPECT_DEATH(
      {
        BufferCache *cache = BufferCache::create();
        void *p = cache->allocate(100, 16);
        freeBuffer(p);
        freeBuffer(p);
      },
      "mnemo runtime: freeing buffer .*: freed twice");
}

} // namespace

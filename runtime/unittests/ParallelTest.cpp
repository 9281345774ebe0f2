//===- ParallelTest.cpp - thread pools and the parallel_for hook *- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The dispatcher and the pool as a unit, without a code object: bodies
// record the ranges they are given, and every loop must hand out disjoint,
// non-empty ranges that cover [0, n) exactly once, whatever the thread
// count. Then the hook's rules (inline without a context, inside a body,
// for small loops) and the session's thread count through the C API.
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"
#include "RuntimeTestUtil.h"

#include "call_generated.h"
#include "hooks.h"
#include "parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

using namespace mnemo::rt;
using namespace mnemo::test;

namespace {

/// Records the ranges a loop's body is given, and the threads that ran it.
struct Recorder {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::set<std::thread::id> threads;
  /// Per-index counts, for small loops.
  std::vector<std::atomic<int>> counts;
  std::chrono::microseconds delay{0};

  explicit Recorder(size_t countsSize = 0) : counts(countsSize) {}

  static void body(void *ctx, int64_t begin, int64_t end) {
    auto *r = static_cast<Recorder *>(ctx);
    if (r->delay.count())
      std::this_thread::sleep_for(r->delay);
    for (int64_t i = begin; i < end && size_t(i) < r->counts.size(); ++i)
      r->counts[i].fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(r->mutex);
    r->ranges.emplace_back(begin, end);
    r->threads.insert(std::this_thread::get_id());
  }

  /// Whether the ranges tile [0, n): sorted, each non-empty and starting
  /// where the previous one ended.
  ::testing::AssertionResult coversExactlyOnce(int64_t n) {
    std::sort(ranges.begin(), ranges.end());
    int64_t at = 0;
    for (auto [begin, end] : ranges) {
      if (begin != at || end <= begin)
        return ::testing::AssertionFailure()
               << "range [" << begin << ", " << end << ") after " << at;
      at = end;
    }
    if (at != n)
      return ::testing::AssertionFailure()
             << "covered up to " << at << " of " << n;
    for (size_t i = 0; i < counts.size() && int64_t(i) < n; ++i)
      if (counts[i].load() != 1)
        return ::testing::AssertionFailure()
               << "index " << i << " ran " << counts[i].load() << " times";
    return ::testing::AssertionSuccess();
  }
};

/// A cost that makes every loop of n >= 2 worth splitting.
constexpr int64_t kBig = kMinParallelWork;

TEST(Parallel, EveryIndexOnceForManyShapes) {
  for (size_t threads : {1, 2, 3, 4, 7, 16}) {
    ThreadPool pool;
    pool.setThreads(threads);
    for (int64_t n : {0, 1, 2, 3, 5, 8, 31, 32, 33, 64, 65, 100, 1000, 4099}) {
      Recorder r(static_cast<size_t>(n));
      parallelFor(&pool, Recorder::body, &r, n, kBig);
      EXPECT_TRUE(r.coversExactlyOnce(n))
          << "n " << n << ", " << threads << " threads";
      if (n >= 2)
        EXPECT_EQ(int64_t(r.ranges.size()),
                  threads == 1 ? 1 : parallelChunks(n, kBig, threads))
            << "n " << n << ", " << threads << " threads";
      if (n <= 0)
        EXPECT_TRUE(r.ranges.empty());
    }
  }
}

TEST(Parallel, ChunksGrowWithTheWork) {
  // Little work per chunk: kChunksPerThread per thread (fewer atomic
  // claims); plenty: up to kMaxChunksPerThread (a short tail); never more
  // chunks than iterations; n * cost saturates.
  EXPECT_EQ(parallelChunks(100, kMinParallelWork / 100, 4),
            4 * kChunksPerThread);
  EXPECT_EQ(parallelChunks(100, kChunkWork / 100 * 2 * 12, 2), 2 * 12);
  EXPECT_EQ(parallelChunks(int64_t(1) << 20, 1000, 4),
            4 * kMaxChunksPerThread);
  EXPECT_EQ(parallelChunks(INT64_MAX, INT64_MAX, 3), 3 * kMaxChunksPerThread);
  EXPECT_EQ(parallelChunks(3, INT64_MAX, 4), 3);
  EXPECT_EQ(parallelChunks(10, 1, 16), 10);
}

TEST(Parallel, HugeRanges) {
  ThreadPool pool;
  pool.setThreads(4);
  for (int64_t n : {int64_t(1) << 20, (int64_t(1) << 40) + 3, INT64_MAX}) {
    Recorder r;
    // n * cost overflows for the largest: it counts as plenty of work.
    parallelFor(&pool, Recorder::body, &r, n, 1000);
    EXPECT_TRUE(r.coversExactlyOnce(n)) << n;
    EXPECT_EQ(r.ranges.size(), size_t(4 * kMaxChunksPerThread));
  }
}

TEST(Parallel, InlineWhenNotWorthIt) {
  ThreadPool pool;
  pool.setThreads(4);
  auto expectInline = [](ThreadPool *p, int64_t n, int64_t cost) {
    Recorder r;
    parallelFor(p, Recorder::body, &r, n, cost);
    ASSERT_EQ(r.ranges.size(), 1u) << "n " << n << ", cost " << cost;
    EXPECT_EQ(r.ranges[0], std::make_pair(int64_t(0), n));
    EXPECT_EQ(*r.threads.begin(), std::this_thread::get_id());
  };
  // One iteration; too little work; a cost below 1 counts as 1; no pool.
  expectInline(&pool, 1, INT64_MAX);
  expectInline(&pool, 100, kMinParallelWork / 100 - 1);
  expectInline(&pool, kMinParallelWork - 1, 0);
  expectInline(&pool, kMinParallelWork - 1, -5);
  expectInline(nullptr, 1000, kBig);
  ThreadPool single;
  single.setThreads(1);
  expectInline(&single, 1000, kBig);
  EXPECT_EQ(single.startedWorkers(), 0u);
  // Inline loops never started a worker.
  EXPECT_EQ(pool.startedWorkers(), 0u);
  Recorder r;
  parallelFor(&pool, Recorder::body, &r, 100, kMinParallelWork / 100);
  EXPECT_EQ(r.ranges.size(), size_t(4 * kChunksPerThread));
  EXPECT_EQ(pool.startedWorkers(), 3u);
}

TEST(Parallel, WorkersShareTheLoop) {
  ThreadPool pool;
  pool.setThreads(4);
  Recorder r;
  r.delay = std::chrono::milliseconds(2); // every thread gets to claim some
  parallelFor(&pool, Recorder::body, &r, 16, kBig);
  EXPECT_TRUE(r.coversExactlyOnce(16));
  EXPECT_GE(r.threads.size(), 2u);
  EXPECT_LE(r.threads.size(), 4u);
}

TEST(Parallel, ManyShortLoopsAndSleepingWorkers) {
  ThreadPool pool;
  pool.setThreads(4);
  std::atomic<int64_t> sum{0};
  auto add = [](void *ctx, int64_t begin, int64_t end) {
    int64_t s = 0;
    for (int64_t i = begin; i < end; ++i)
      s += i;
    static_cast<std::atomic<int64_t> *>(ctx)->fetch_add(s);
  };
  // Back to back, as a model's loops: the workers stay awake.
  for (int round = 0; round < 20000; ++round) {
    sum = 0;
    parallelFor(&pool, add, &sum, 64, kBig);
    ASSERT_EQ(sum.load(), 64 * 63 / 2) << "round " << round;
  }
  // With pauses long enough for the workers to block.
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    Recorder r(257);
    parallelFor(&pool, Recorder::body, &r, 257, kBig);
    ASSERT_TRUE(r.coversExactlyOnce(257)) << "round " << round;
  }
}

TEST(Parallel, PlainWritesAreVisibleAfterTheLoop) {
  // No atomics in the body: the pool's own synchronization must order each
  // round's writes (on any thread) before the caller's reads and the next
  // round's writes (ThreadSanitizer checks this in a sanitizer build).
  ThreadPool pool;
  pool.setThreads(4);
  std::vector<int64_t> out(1000);
  struct Round {
    int64_t *out;
    int64_t round;
  };
  for (int64_t round = 0; round < 2000; ++round) {
    Round r{out.data(), round};
    parallelFor(
        &pool,
        [](void *ctx, int64_t begin, int64_t end) {
          auto *r = static_cast<Round *>(ctx);
          for (int64_t i = begin; i < end; ++i)
            r->out[i] = i * 3 + r->round;
        },
        &r, 1000, kBig);
    for (int64_t i = 0; i < 1000; i += 37)
      ASSERT_EQ(out[i], i * 3 + round);
  }
}

TEST(Parallel, ChangingTheThreadCount) {
  ThreadPool pool;
  for (size_t threads : {4, 1, 8, 2, 3, 1, 5}) {
    pool.setThreads(threads);
    EXPECT_EQ(pool.threads(), threads);
    EXPECT_EQ(pool.startedWorkers(), 0u); // joined; new ones start lazily
    for (int round = 0; round < 50; ++round) {
      Recorder r(1000);
      parallelFor(&pool, Recorder::body, &r, 1000, kBig);
      ASSERT_TRUE(r.coversExactlyOnce(1000)) << threads << " threads";
    }
    EXPECT_EQ(pool.startedWorkers(), threads - 1);
  }
  pool.setThreads(0);
  EXPECT_EQ(pool.threads(), 1u);
  pool.setThreads(100000);
  EXPECT_EQ(pool.threads(), kMaxThreads);
  pool.setThreads(2);
}

TEST(Parallel, OverlappingCallersNeverWait) {
  // One caller at a time is the contract; a second one runs inline rather
  // than wait or corrupt the first one's loop.
  ThreadPool pool;
  pool.setThreads(3);
  std::atomic<int> failures{0};
  auto caller = [&] {
    for (int round = 0; round < 2000; ++round) {
      Recorder r(300);
      parallelFor(&pool, Recorder::body, &r, 300, kBig);
      failures += !r.coversExactlyOnce(300);
    }
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Parallel, AvailableCores) {
  size_t cores = availableCores();
  EXPECT_GE(cores, 1u);
  EXPECT_LE(cores, kMaxThreads);
}

// Calls into compiled code. A code object's first function starts its
// executable mapping, with nothing readable below it. The runtime's calls
// must not read there (as -fsanitize=function's check does in the
// sanitized builds of scripts/test.sh), so this places a function that
// returns at once at the start of a page whose lower neighbour is
// inaccessible, and calls it as an entry point and as loop bodies.

namespace {
/// `ret`, the whole function. The test needs a callee at a page start, so
/// its code is two or four bytes written here, not compiled.
#if defined(__x86_64__)
const uint8_t kReturn[] = {0xc3};
#elif defined(__aarch64__)
const uint8_t kReturn[] = {0xc0, 0x03, 0x5f, 0xd6};
#endif
} // namespace

TEST(GeneratedCode, CalledAtTheStartOfAMapping) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void *map = mmap(nullptr, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto *code = static_cast<uint8_t *>(map) + page;
  ASSERT_EQ(mprotect(code, page, PROT_READ | PROT_WRITE), 0);
  std::memcpy(code, kReturn, sizeof(kReturn));
  __builtin___clear_cache(reinterpret_cast<char *>(code),
                          reinterpret_cast<char *>(code + sizeof(kReturn)));
  ASSERT_EQ(mprotect(code, page, PROT_READ | PROT_EXEC), 0);

  void *args[2] = {nullptr, nullptr};
  callKernel(reinterpret_cast<KernelFn>(code), args);
  auto body = reinterpret_cast<ParallelBody>(code);
  callBody(body, nullptr, 0, 1);
  for (size_t threads : {1, 2, 4}) {
    ThreadPool pool;
    pool.setThreads(threads);
    for (int64_t n : {1, 7, 4096})
      parallelFor(&pool, body, nullptr, n, kBig);
  }
  ASSERT_EQ(munmap(map, 2 * page), 0);
}

// The hook: what the code object calls.

TEST(ParallelHook, InlineWithoutAContext) {
  ASSERT_EQ(currentContext(), nullptr);
  Recorder r(5000);
  hookParallelFor(Recorder::body, &r, 5000, kBig);
  ASSERT_EQ(r.ranges.size(), 1u);
  EXPECT_TRUE(r.coversExactlyOnce(5000));
}

TEST(ParallelHook, UsesTheContextsPoolAndRestoresIt) {
  ThreadPool pool;
  pool.setThreads(2);
  ExecutionContext outer{&pool, nullptr}, inner{nullptr, nullptr};
  {
    ScopedExecutionContext a(&outer);
    EXPECT_EQ(currentContext(), &outer);
    {
      ScopedExecutionContext b(&inner);
      EXPECT_EQ(currentContext(), &inner);
      Recorder r(100);
      hookParallelFor(Recorder::body, &r, 100, kBig);
      EXPECT_EQ(r.ranges.size(), 1u); // no pool in this context
      EXPECT_EQ(currentContext(), &inner);
    }
    EXPECT_EQ(currentContext(), &outer);
    Recorder r(100);
    hookParallelFor(Recorder::body, &r, 100, kBig);
    EXPECT_TRUE(r.coversExactlyOnce(100));
    EXPECT_EQ(int64_t(r.ranges.size()), parallelChunks(100, kBig, 2));
    EXPECT_EQ(currentContext(), &outer);
  }
  EXPECT_EQ(currentContext(), nullptr);
}

/// An outer loop whose body runs an inner loop through the hook.
struct Nested {
  std::atomic<int> innerCalls{0};
  std::atomic<int> splitInner{0};  // inner loops that were not one call
  std::atomic<int> withContext{0}; // bodies that saw a context
  std::atomic<int64_t> innerSum{0};

  static void inner(void *ctx, int64_t begin, int64_t end) {
    auto *n = static_cast<Nested *>(ctx);
    n->innerCalls.fetch_add(1);
    if (begin != 0 || end != 1000)
      n->splitInner.fetch_add(1);
    n->innerSum.fetch_add(end - begin);
  }
  static void outer(void *ctx, int64_t begin, int64_t end) {
    auto *n = static_cast<Nested *>(ctx);
    for (int64_t i = begin; i < end; ++i) {
      if (currentContext())
        n->withContext.fetch_add(1);
      hookParallelFor(inner, ctx, 1000, kBig);
    }
  }
};

TEST(ParallelHook, NestedLoopsRunInline) {
  ThreadPool pool;
  pool.setThreads(4);
  ExecutionContext context{&pool, nullptr};
  ScopedExecutionContext scope(&context);
  for (int round = 0; round < 100; ++round) {
    Nested n;
    hookParallelFor(Nested::outer, &n, 32, kBig);
    ASSERT_EQ(n.innerCalls.load(), 32);
    ASSERT_EQ(n.splitInner.load(), 0);
    ASSERT_EQ(n.withContext.load(), 0);
    ASSERT_EQ(n.innerSum.load(), 32 * 1000);
  }
  EXPECT_EQ(currentContext(), &context);
}

// The session's thread count.

TEST(SessionThreads, SetAndQuery) {
  ArtifactBuilder b;
  fb::FunctionT &f = b.addFunction("pass");
  f.inputs.push_back(sig("a", fb::DType::F32, {2}));
  f.outputs.push_back(sig("y", fb::DType::F32, {2}));
  f.output_slots = {0};
  std::string bytes = b.build();
  mnemo_model_t *model = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(model, nullptr, &s));
  EXPECT_EQ(mnemo_session_threads(s), availableCores());
  ASSERT_MNEMO_OK(mnemo_session_set_threads(s, 3));
  EXPECT_EQ(mnemo_session_threads(s), 3u);
  ASSERT_MNEMO_OK(mnemo_session_set_threads(s, 1024));
  EXPECT_EQ(mnemo_session_threads(s), 1024u);
  EXPECT_MNEMO_ERROR(mnemo_session_set_threads(s, 1025),
                     MNEMO_STATUS_INVALID_ARGUMENT,
                     "mnemo_session_set_threads: 1025 threads, at most 1024");
  EXPECT_MNEMO_ERROR(mnemo_session_set_threads(s, SIZE_MAX),
                     MNEMO_STATUS_INVALID_ARGUMENT, "at most 1024");
  EXPECT_EQ(mnemo_session_threads(s), 1024u); // unchanged by the errors
  ASSERT_MNEMO_OK(mnemo_session_set_threads(s, 0));
  EXPECT_EQ(mnemo_session_threads(s), availableCores());
  ASSERT_MNEMO_OK(mnemo_session_set_threads(s, 1));
  // Runs are unaffected (this code has no parallel loops).
  float a[2] = {1, 2};
  int64_t shape[1] = {2};
  ASSERT_MNEMO_OK(
      mnemo_session_set_input(s, "a", MNEMO_DTYPE_F32, shape, 1, a));
  ASSERT_MNEMO_OK(mnemo_session_run(s));
  mnemo_tensor_t y;
  ASSERT_MNEMO_OK(mnemo_session_get_output(s, 0, &y));
  EXPECT_EQ(floats(y), (std::vector<float>{1, 2}));
  EXPECT_MNEMO_ERROR(mnemo_session_set_threads(nullptr, 2),
                     MNEMO_STATUS_INVALID_ARGUMENT,
                     "mnemo_session_set_threads: NULL session");
  EXPECT_EQ(mnemo_session_threads(nullptr), 0u);
  mnemo_session_free(s);
  mnemo_model_free(model);
}

} // namespace

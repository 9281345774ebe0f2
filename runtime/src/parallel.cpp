//===- parallel.cpp - a session's threads and parallel loops ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Workers are POSIX threads rather than std::thread: pthread_create reports
// a thread the system refuses, and the pool simply runs with the workers it
// got (std::thread's constructor would abort without exceptions), and the
// runtime does not link libstdc++, where std::thread lives.
//
//===----------------------------------------------------------------------===//

#include "parallel.h"

#include "call_generated.h"

#include <algorithm>
#include <sched.h>
#include <unistd.h>

using namespace mnemo::rt;

namespace {

/// How long an idle worker, or the caller waiting for the last chunks,
/// spins before it blocks or yields: longer than the gap between two loops
/// of a run (kernels between them are short), far shorter than a run.
constexpr int64_t kSpinNanos = 50000;

/// Tells the core this is a spin-wait (saves power, yields the pipeline to
/// a hyperthread sibling).
inline void cpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  // `yield` is a no-op on many cores; `isb` takes a few tens of cycles.
  asm volatile("isb" ::: "memory");
#endif
}

/// Spins while `waiting()` holds, up to kSpinNanos; says whether it still holds.
template <typename Pred> bool spinWhile(Pred waiting) {
  int64_t deadline = monotonicNanos() + kSpinNanos;
  for (unsigned i = 1;; ++i) {
    if (!waiting())
      return false;
    cpuRelax();
    // Reading the clock costs about as much as a few pauses.
    if (i % 32 == 0 && monotonicNanos() > deadline)
      return true;
  }
}

uint32_t generationOf(uint64_t claim) {
  return static_cast<uint32_t>(claim >> 32);
}

} // namespace

size_t mnemo::rt::availableCores() {
  size_t n = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    n = static_cast<size_t>(CPU_COUNT(&set));
  if (n == 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    n = online > 0 ? static_cast<size_t>(online) : 1;
  }
  return std::clamp<size_t>(n, 1, kMaxThreads);
}

void ThreadPool::setThreads(size_t threads) {
  threads = std::clamp<size_t>(threads, 1, kMaxThreads);
  if (threads == wanted)
    return; // keep the workers
  stopWorkers();
  wanted = threads;
}

void *ThreadPool::workerMain(void *pool) {
  static_cast<ThreadPool *>(pool)->work();
  return nullptr;
}

void ThreadPool::startWorkers() {
  started = true;
  stopping.store(false, std::memory_order_relaxed);
  startGeneration = generationOf(claim.load(std::memory_order_relaxed));
  workers.reserve(wanted - 1);
  for (size_t i = 1; i < wanted; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, nullptr, workerMain, this) != 0)
      break; // run with the workers there are
    workers.push_back(thread);
  }
}

void ThreadPool::stopWorkers() {
  if (!workers.empty()) {
    stopping.store(true, std::memory_order_seq_cst);
    { LockGuard lock(mutex); }
    wake.notifyAll();
    for (pthread_t thread : workers)
      pthread_join(thread, nullptr);
    workers.clear();
  }
  started = false;
}

void ThreadPool::work() {
  // Workers start just before run() publishes a job: waiting for any
  // generation but the one before it lets them join that job.
  uint32_t seen = startGeneration;
  for (;;) {
    uint64_t c = 0;
    auto idle = [&] {
      c = claim.load(std::memory_order_seq_cst);
      return generationOf(c) == seen &&
             !stopping.load(std::memory_order_relaxed);
    };
    if (spinWhile(idle)) {
      LockGuard lock(mutex);
      // Paired with run()'s store to `claim` then load of `sleepers` (both
      // sequentially consistent): either run() sees this sleeper and
      // notifies under the mutex, or the predicate sees the new job.
      sleepers.fetch_add(1, std::memory_order_seq_cst);
      wake.wait(mutex, [&] { return !idle(); });
      sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stopping.load(std::memory_order_relaxed))
      return;
    seen = generationOf(c);
    if (int64_t ran = runChunks(seen))
      done.fetch_add(ran, std::memory_order_release);
  }
}

int64_t ThreadPool::runChunks(uint32_t generation) {
  int64_t ran = 0;
  uint64_t c = claim.load(std::memory_order_acquire);
  for (;;) {
    auto next = static_cast<int64_t>(c & 0xffff);
    auto chunks = static_cast<int64_t>((c >> 16) & 0xffff);
    if (generationOf(c) != generation || next >= chunks)
      return ran;
    if (!claim.compare_exchange_weak(c, c + 1, std::memory_order_acquire,
                                     std::memory_order_acquire))
      continue;
    // Chunk `next` is ours: the job stays as it is until it is done.
    const Job &j = job;
    int64_t base = j.n / chunks, extra = j.n % chunks;
    int64_t begin = next * base + std::min(next, extra);
    callBody(j.body, j.ctx, begin, begin + base + (next < extra ? 1 : 0));
    ++ran;
    c = claim.load(std::memory_order_acquire);
  }
}

void ThreadPool::run(ParallelBody body, void *ctx, int64_t n, int64_t chunks) {
  chunks = std::min(chunks, kMaxChunks);
  if (busy.exchange(true, std::memory_order_acquire)) {
    // Another thread is using the pool: never wait for it.
    callBody(body, ctx, 0, n);
    return;
  }
  if (!started)
    startWorkers();
  if (workers.empty() || chunks < 2) {
    busy.store(false, std::memory_order_release);
    callBody(body, ctx, 0, n);
    return;
  }
  // Every chunk of the previous job is done, so no thread reads the job.
  job = {body, ctx, n, chunks};
  done.store(0, std::memory_order_relaxed);
  uint32_t generation = generationOf(claim.load(std::memory_order_relaxed)) + 1;
  claim.store(uint64_t(generation) << 32 | uint64_t(chunks) << 16,
              std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) > 0) {
    { LockGuard lock(mutex); }
    wake.notifyAll();
  }
  int64_t mine = runChunks(generation);
  // Every chunk is claimed; wait for those still running elsewhere. The
  // workers' release of `done` publishes what their chunks wrote.
  auto running = [&] {
    return mine + done.load(std::memory_order_acquire) < chunks;
  };
  if (running() && spinWhile(running))
    while (running())
      sched_yield();
  busy.store(false, std::memory_order_release);
}

namespace {
/// n * cost, saturated; a cost below 1 counts as 1.
int64_t workOf(int64_t n, int64_t cost) {
  int64_t work = 0;
  if (__builtin_mul_overflow(n, std::max<int64_t>(cost, 1), &work))
    work = INT64_MAX;
  return work;
}
} // namespace

int64_t mnemo::rt::parallelChunks(int64_t n, int64_t cost, size_t threads) {
  int64_t t = static_cast<int64_t>(threads);
  int64_t perThread = std::clamp<int64_t>(workOf(n, cost) / kChunkWork / t,
                                          kChunksPerThread,
                                          kMaxChunksPerThread);
  return std::min<int64_t>(n, perThread * t);
}

void mnemo::rt::parallelFor(ThreadPool *pool, ParallelBody body, void *ctx,
                            int64_t n, int64_t cost) {
  if (n <= 0)
    return;
  size_t threads = pool ? pool->threads() : 1;
  if (threads < 2 || n < 2 || workOf(n, cost) < kMinParallelWork) {
    callBody(body, ctx, 0, n);
    return;
  }
  pool->run(body, ctx, n, parallelChunks(n, cost, threads));
}

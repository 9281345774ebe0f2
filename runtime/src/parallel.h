//===- parallel.h - a session's threads and parallel loops ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The code object's parallel_for hook lands in parallelFor: small loops run
// inline, larger ones are cut into contiguous chunks that the pool's
// workers and the calling thread claim one at a time. The compiler only
// outlines loops whose iterations are independent, so how the range is
// split never changes a result.
//
// A model makes hundreds of short parallel_for calls per run, so waking the
// workers must be cheap: after a job they spin for a few tens of
// microseconds (with a pause instruction) before blocking on a condition
// variable. Workers start at the first job that needs them, not when the
// pool is made, so sessions of models without parallel loops never create a
// thread.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_PARALLEL_H
#define MNEMO_RUNTIME_PARALLEL_H

#include "support/Sync.h"
#include "support/Vector.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <pthread.h>

namespace mnemo::rt {

/// The body of a parallel loop: runs iterations [begin, end).
using ParallelBody = void (*)(void *ctx, int64_t begin, int64_t end);

/// Loops whose n * cost is below this run inline: about 50k scalar
/// operations take ~10 us on one core, the same order as waking the
/// workers, handing out the chunks and waiting for the last one.
constexpr int64_t kMinParallelWork = 50000;
/// Chunks per thread: at least a few, so that a thread that started late
/// or was preempted does not hold everyone up; up to kMaxChunksPerThread
/// for loops with at least kChunkWork per chunk, so that the last chunks
/// are short when iterations differ in cost (causal attention's query
/// tiles, a GEMM's last row tile). Claiming a chunk costs an atomic add:
/// 16 chunks per thread on every loop made a tiny model's run 3.5% slower;
/// 4 on every loop made the attention of scripts/bench_cpu.py's attention
/// block 10% slower on two threads.
constexpr int64_t kChunksPerThread = 4;
constexpr int64_t kMaxChunksPerThread = 16;
constexpr int64_t kChunkWork = 4 * kMinParallelWork;
/// The most threads a session may use.
constexpr size_t kMaxThreads = 1024;

/// The cores this process may run on (its CPU affinity mask, else
/// the online processors), at least 1 and at most kMaxThreads.
size_t availableCores();

/// N - 1 workers that, with the thread calling run(), execute one loop at a
/// time. One thread calls run() at a time (a session's); a second,
/// overlapping call runs its loop inline rather than wait.
class ThreadPool {
public:
  ThreadPool() = default;
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;
  ~ThreadPool() { stopWorkers(); }

  /// Threads that run a loop, the caller included (1 = no workers).
  size_t threads() const { return wanted; }
  /// Joins the current workers unless the count stays the same; the next
  /// run() starts `threads` - 1 new ones (clamped to 1..kMaxThreads). Not
  /// while a run() is in progress.
  void setThreads(size_t threads);
  /// Workers started so far (fewer than threads() - 1 before the first
  /// parallel run, or where the system refused a thread).
  size_t startedWorkers() const { return workers.size(); }

  /// Runs body(ctx, b, e) over `chunks` contiguous chunks covering [0, n)
  /// on the workers and the calling thread, and returns when every chunk is
  /// done. 1 <= chunks <= n; more than 65535 chunks count as 65535.
  void run(ParallelBody body, void *ctx, int64_t n, int64_t chunks);

private:
  // `claim` is the current job's generation (high 32 bits), its number of
  // chunks and the next chunk to hand out (16 bits each). A thread claims a
  // chunk with a CAS that also checks the generation, so a worker that
  // woke late can never claim a chunk of a later job, and the job's other
  // fields stay unchanged from a successful claim until that chunk is done
  // (the caller rewrites them only once `done` counts every chunk). The
  // caller so waits for chunks, never for a worker that is slow to wake.
  static constexpr int64_t kMaxChunks = 0xffff;

  struct Job {
    ParallelBody body = nullptr;
    void *ctx = nullptr;
    int64_t n = 0;
    int64_t chunks = 0;
  };

  static void *workerMain(void *pool);
  void work();
  /// Claims and runs chunks of job `generation` until none is left;
  /// returns how many it ran.
  int64_t runChunks(uint32_t generation);
  void startWorkers();
  void stopWorkers();

  size_t wanted = 1;
  Vector<pthread_t> workers;
  bool started = false;
  uint32_t startGeneration = 0; // the generation when the workers started
  Job job;
  std::atomic<uint64_t> claim{0};
  std::atomic<int64_t> done{0};
  std::atomic<bool> busy{false};
  std::atomic<bool> stopping{false};
  // Workers blocked on `wake`; the caller takes the mutex only when some
  // are.
  std::atomic<int> sleepers{0};
  Mutex mutex;
  CondVar wake;
};

/// The chunks of a parallel loop of `n` iterations of `cost` each on
/// `threads` threads (two or more): min(n, c * threads) with c chunks per
/// thread, n * cost / (kChunkWork * threads) within [kChunksPerThread,
/// kMaxChunksPerThread].
int64_t parallelChunks(int64_t n, int64_t cost, size_t threads);

/// Runs body(ctx, b, e) over [0, n): inline (one call, [0, n)) without a
/// pool, with a pool of one thread, for n < 2, or when n * cost is below
/// kMinParallelWork; otherwise in parallelChunks(n, cost, threads) chunks
/// on `pool`. A cost below 1 counts as 1.
void parallelFor(ThreadPool *pool, ParallelBody body, void *ctx, int64_t n,
                 int64_t cost);

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_PARALLEL_H

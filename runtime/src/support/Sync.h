//===- Sync.h - locks, condition variables, clocks over POSIX ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// std::mutex reports a failed lock through libstdc++ and
// std::condition_variable, std::call_once and the clocks live there, so the
// runtime uses pthreads and clock_gettime directly.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_SUPPORT_SYNC_H
#define MNEMO_RUNTIME_SUPPORT_SYNC_H

#include <cstdint>
#include <cstdlib>
#include <pthread.h>
#include <time.h>

namespace mnemo::rt {

class Mutex {
public:
  Mutex() = default;
  Mutex(const Mutex &) = delete;
  Mutex &operator=(const Mutex &) = delete;
  ~Mutex() { pthread_mutex_destroy(&m); }

  /// Locking a valid default mutex cannot fail but for a deadlock the
  /// program made itself; that ends the process, as in libstdc++.
  void lock() {
    if (pthread_mutex_lock(&m) != 0)
      std::abort();
  }
  void unlock() { pthread_mutex_unlock(&m); }
  pthread_mutex_t *native() { return &m; }

private:
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
};

/// Holds a Mutex for its scope.
class LockGuard {
public:
  explicit LockGuard(Mutex &m) : m(m) { m.lock(); }
  LockGuard(const LockGuard &) = delete;
  LockGuard &operator=(const LockGuard &) = delete;
  ~LockGuard() { m.unlock(); }

private:
  Mutex &m;
};

class CondVar {
public:
  CondVar() = default;
  CondVar(const CondVar &) = delete;
  CondVar &operator=(const CondVar &) = delete;
  ~CondVar() { pthread_cond_destroy(&c); }

  /// Waits on `m` (held) until `ready()` holds.
  template <typename Pred> void wait(Mutex &m, Pred ready) {
    while (!ready())
      pthread_cond_wait(&c, m.native());
  }
  void notifyAll() { pthread_cond_broadcast(&c); }

private:
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
};

/// A monotonic clock in nanoseconds.
inline int64_t monotonicNanos() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_SUPPORT_SYNC_H

//===- hooks.cpp - the functions a code object calls back -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "hooks.h"

#include "buffer_cache.h"

using namespace mnemo::rt;

namespace {

// A plain pointer: no thread_local constructor or destructor to run.
thread_local ExecutionContext *current = nullptr;

} // namespace

ExecutionContext *mnemo::rt::currentContext() { return current; }

ScopedExecutionContext::ScopedExecutionContext(ExecutionContext *context)
    : previous(current) {
  current = context;
}

ScopedExecutionContext::~ScopedExecutionContext() { current = previous; }

void mnemo::rt::hookParallelFor(ParallelBody body, void *ctx, int64_t n,
                                int64_t cost) {
  ExecutionContext *context = current;
  ThreadPool *pool = context ? context->pool : nullptr;
  ScopedExecutionContext inside(nullptr);
  parallelFor(pool, body, ctx, n, cost);
}

void mnemo::rt::hookProfile(int64_t point, int64_t phase) {
  ExecutionContext *context = current;
  if (!context || !context->profile)
    return;
  if (phase == 0)
    context->profile->begin(point);
  else if (phase == 1)
    context->profile->end(point);
}

void *mnemo::rt::hookAlloc(int64_t size, int64_t align) {
  ExecutionContext *context = current;
  return allocateBuffer(context ? context->buffers : nullptr, size, align);
}

void mnemo::rt::hookFree(void *p) { freeBuffer(p); }

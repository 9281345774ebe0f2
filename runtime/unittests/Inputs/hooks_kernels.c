/*===- hooks_kernels.c - hand-written kernels that use the hooks --*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * A code object for HooksTest.cpp, written as mnemoc's code behaves (the
 * Kernel ABI and the hooks table of runtime/schema/artifact.fbs), so that
 * sessions are tested running real code through the hooks without mnemoc:
 *
 *   affine(x: f32 [n]) -> f32 [n]   y[i] = 2 x[i] + i, one parallel loop
 *                                   (profile point 0 around it); each body
 *                                   call runs an inner parallel loop of 8
 *                                   iterations, which must run inline, and
 *                                   allocates and frees a temporary
 *                                   (profile point 1 around the kernel).
 *                                   The kernel also allocates and frees a
 *                                   scratch buffer of its own.
 *
 * Buffers come from the table's alloc and free slots (all of them: the
 * result, the scratch buffer, the bodies' temporaries), as mnemoc's code
 * allocates them. Built with MNEMO_TEST_LEGACY_HOOKS, the object is older
 * code instead: a table of two slots, and malloc and free.
 *
 * Counters the test reads through dlsym: body calls (chunks), inner loops
 * that were not handed out whole, and buffers not aligned as asked.
 */

#include <stdint.h>
#include <stdlib.h>

typedef void (*mnemo_parallel_body_fn)(void *ctx, int64_t begin, int64_t end);
struct mnemo_hooks {
  void (*parallel_for)(mnemo_parallel_body_fn body, void *ctx, int64_t n,
                       int64_t cost);
  void (*profile)(int64_t point, int64_t phase);
#ifndef MNEMO_TEST_LEGACY_HOOKS
  void *(*alloc)(int64_t size, int64_t align);
  void (*free)(void *p);
#endif
};

struct mnemo_hooks mnemo_hooks;
int64_t mnemo_test_chunks;
int64_t mnemo_test_split_inner;
int64_t mnemo_test_misaligned;

typedef struct {
  float *allocated, *aligned;
  int64_t offset, size, stride;
} Memref1;

typedef struct {
  const float *in;
  float *out;
} Context;

static void parallel_for(mnemo_parallel_body_fn body, void *ctx, int64_t n,
                         int64_t cost) {
  if (mnemo_hooks.parallel_for)
    mnemo_hooks.parallel_for(body, ctx, n, cost);
  else
    body(ctx, 0, n);
}

static void profile(int64_t point, int64_t phase) {
  if (mnemo_hooks.profile)
    mnemo_hooks.profile(point, phase);
}

/* `size` bytes aligned to `align`: the hook's, else malloc's (which gives
 * 16 bytes, all the legacy kernels ask for). */
static void *alloc(int64_t size, int64_t align) {
  void *p;
#ifndef MNEMO_TEST_LEGACY_HOOKS
  if (mnemo_hooks.alloc)
    p = mnemo_hooks.alloc(size, align);
  else
#endif
    p = malloc((size_t)(size > 0 ? size : 1));
  if (!p || (uintptr_t)p % (uintptr_t)(align > 16 ? align : 16) != 0)
    __atomic_fetch_add(&mnemo_test_misaligned, 1, __ATOMIC_RELAXED);
  return p;
}

static void release(void *p) {
#ifndef MNEMO_TEST_LEGACY_HOOKS
  if (mnemo_hooks.free) {
    mnemo_hooks.free(p);
    return;
  }
#endif
  free(p);
}

#ifdef MNEMO_TEST_LEGACY_HOOKS
enum { kResultAlign = 16, kScratchAlign = 16, kTempAlign = 16 };
#else
enum { kResultAlign = 64, kScratchAlign = 128, kTempAlign = 32 };
#endif

static void inner(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  if (begin != 0 || end != 8)
    __atomic_fetch_add(&mnemo_test_split_inner, 1, __ATOMIC_RELAXED);
}

static void body(void *ctx, int64_t begin, int64_t end) {
  const Context *c = ctx;
  __atomic_fetch_add(&mnemo_test_chunks, 1, __ATOMIC_RELAXED);
  parallel_for(inner, NULL, 8, 1000000);
  /* A per-chunk temporary, allocated and freed inside the body (on a
   * worker, or on the calling thread without its context). */
  float *t = alloc(16 * sizeof(float), kTempAlign);
  for (int64_t i = begin; i < end; ++i) {
    t[i % 16] = 2 * c->in[i];
    c->out[i] = t[i % 16] + (float)i;
  }
  release(t);
}

void affine(void **args) {
  Memref1 *result = args[0];
  const Memref1 *x = args[1];
  profile(1, 0);
  int64_t n = x->size;
  float *out = alloc(n * (int64_t)sizeof(float), kResultAlign);
  /* A scratch buffer on the calling thread, freed before returning. */
  float *scratch = alloc(4096, kScratchAlign);
  scratch[0] = 1;
  Context c = {x->aligned + x->offset, out};
  profile(0, 0);
  parallel_for(body, &c, n, 64);
  profile(0, 1);
  release(scratch);
  result->allocated = out;
  result->aligned = out;
  result->offset = 0;
  result->size = n;
  result->stride = 1;
  profile(1, 1);
}

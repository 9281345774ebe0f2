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
 *                                   iterations, which must run inline
 *                                   (profile point 1 around the kernel).
 *
 * Counters the test reads through dlsym: body calls (chunks), and inner
 * loops that were not handed out whole.
 */

#include <stdint.h>
#include <stdlib.h>

typedef void (*mnemo_parallel_body_fn)(void *ctx, int64_t begin, int64_t end);
struct mnemo_hooks {
  void (*parallel_for)(mnemo_parallel_body_fn body, void *ctx, int64_t n,
                       int64_t cost);
  void (*profile)(int64_t point, int64_t phase);
};

struct mnemo_hooks mnemo_hooks;
int64_t mnemo_test_chunks;
int64_t mnemo_test_split_inner;

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

static void inner(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  if (begin != 0 || end != 8)
    __atomic_fetch_add(&mnemo_test_split_inner, 1, __ATOMIC_RELAXED);
}

static void body(void *ctx, int64_t begin, int64_t end) {
  const Context *c = ctx;
  __atomic_fetch_add(&mnemo_test_chunks, 1, __ATOMIC_RELAXED);
  parallel_for(inner, NULL, 8, 1000000);
  for (int64_t i = begin; i < end; ++i)
    c->out[i] = 2 * c->in[i] + (float)i;
}

void affine(void **args) {
  Memref1 *result = args[0];
  const Memref1 *x = args[1];
  profile(1, 0);
  int64_t n = x->size;
  float *out = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  Context c = {x->aligned + x->offset, out};
  profile(0, 0);
  parallel_for(body, &c, n, 64);
  profile(0, 1);
  result->allocated = out;
  result->aligned = out;
  result->offset = 0;
  result->size = n;
  result->stride = 1;
  profile(1, 1);
}

/*===- generator_append.c - tokens appended to live sequences ------*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * mnemo-runtime-append-test MODEL.mnemo
 *
 * mnemo_generator_append over the C API. A model without an `append` step
 * (mnemoc without --append-step) refuses it with NOT_FOUND and nothing
 * else is checked. With one, one generator holds:
 *
 *   W, a 19-token prompt added whole;
 *   C, the same prompt added as its first 5 tokens, then appended as 9
 *      tokens (in one call beside R's) and 5 more (across a page boundary);
 *   R, a 3-token prompt appended 2 tokens at a time to 11 tokens.
 *
 * C's logits must be W's after every call that leaves them at the same
 * tokens (within 1e-4: the prefill attends over its own keys, the append
 * over the cache), then through 4 greedy decode steps of both; R's must
 * be those of its 11 tokens added whole to another generator. The calls a
 * caller can get wrong must fail in one line and change nothing: an empty
 * append, a sequence appended to twice in one call, a released sequence,
 * a token outside the vocabulary, more tokens than the pool holds or the
 * model's maximum length. Prints one line per check; exits 1 on the first
 * failure.
 */

#include "mnemo/runtime.h"
#include "status_checks.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t vocab;


/* max |a - b| over the logits of sequences `x` (in `gx`) and `y` (in `gy`);
 * INFINITY on an error or a NaN. */
static double distance(mnemo_generator_t *gx, uint64_t x, mnemo_generator_t *gy,
                       uint64_t y) {
  const float *a = NULL, *b = NULL;
  if (check(mnemo_generator_logits(gx, x, &a), "logits") ||
      check(mnemo_generator_logits(gy, y, &b), "logits"))
    return INFINITY;
  double worst = 0;
  for (size_t v = 0; v < vocab; ++v) {
    double d = fabs((double)a[v] - b[v]);
    if (!(d <= worst))
      worst = isnan(d) ? INFINITY : d;
  }
  return worst;
}

static int same(mnemo_generator_t *gx, uint64_t x, mnemo_generator_t *gy,
                uint64_t y, const char *what) {
  double d = distance(gx, x, gy, y);
  printf("%s: max |d| %.1e\n", what, d);
  return d <= 1e-4 ? 0 : 1;
}

static size_t argmax(mnemo_generator_t *g, uint64_t id) {
  const float *logits = NULL;
  if (check(mnemo_generator_logits(g, id, &logits), "logits"))
    return 0;
  size_t best = 0;
  for (size_t v = 1; v < vocab; ++v)
    if (logits[v] > logits[best])
      best = v;
  return best;
}

static int append1(mnemo_generator_t *g, uint64_t id, const int64_t *tokens,
                   size_t n, const char *what) {
  return check(mnemo_generator_append(g, 1, &id, &tokens, &n), what);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.mnemo\n", argv[0]);
    return 2;
  }
  mnemo_model_t *model = NULL;
  if (check(mnemo_model_load_file(argv[1], &model), argv[1]))
    return 1;
  mnemo_generator_t *g = NULL, *whole = NULL;
  /* 6 pages of 16 tokens: W and C take 2 each, R 1. */
  if (check(mnemo_generator_create(model, NULL, 6, &g), "create") ||
      check(mnemo_generator_create(model, NULL, 8, &whole), "create"))
    return 1;
  vocab = mnemo_generator_vocab_size(g);
  size_t page = mnemo_generator_page_size(g);
  int64_t prompt[64], shortPrompt[11];
  for (size_t i = 0; i < 64; ++i)
    prompt[i] = (int64_t)((3 + 7 * i * i) % vocab);
  for (size_t i = 0; i < 11; ++i)
    shortPrompt[i] = (int64_t)((5 + 11 * i) % vocab);
  const int64_t *p = prompt, *s = shortPrompt;
  uint64_t w = 0, c = 0, r = 0, rWhole = 0;
  size_t n19 = 19, n5 = 5, n3 = 3, n11 = 11;
  int rc = 0;
  if (!mnemo_generator_can_append(g)) {
    rc = check(mnemo_generator_add(g, 1, &p, &n5, &c), "add C") ||
         refused(mnemo_generator_append(g, 1, &c, &p, &n5),
                 MNEMO_STATUS_NOT_FOUND, "append without the step");
    if (!rc)
      printf("append: ok\n");
    mnemo_generator_free(g);
    mnemo_generator_free(whole);
    mnemo_model_free(model);
    return rc;
  }
  printf("pages of %zu tokens, at most %zu tokens\n", page,
         mnemo_generator_max_length(g));

  rc = check(mnemo_generator_add(g, 1, &p, &n19, &w), "add W") ||
       check(mnemo_generator_add(g, 1, &p, &n5, &c), "add C") ||
       check(mnemo_generator_add(g, 1, &s, &n3, &r), "add R") ||
       check(mnemo_generator_add(whole, 1, &s, &n11, &rWhole), "add R whole");
  /* C and R in one call, of 9 and 2 tokens. */
  uint64_t cr[] = {c, r};
  const int64_t *parts[] = {prompt + 5, shortPrompt + 3};
  size_t counts[] = {9, 2};
  rc = rc || check(mnemo_generator_append(g, 2, cr, parts, counts), "C, R");
  rc = rc || append1(g, c, prompt + 14, 5, "C");
  for (size_t k = 5; !rc && k < 11; k += 2)
    rc = append1(g, r, shortPrompt + k, k + 2 <= 11 ? 2 : 1, "R");
  rc = rc || same(g, c, g, w, "C appended 5 + 9 + 5 = W added whole") ||
       same(g, r, whole, rWhole, "R appended 3 + 2 x 4 = R added whole");

  /* Refused calls, each leaving every sequence as it was. */
  size_t zero = 0, before = mnemo_generator_free_pages(g);
  rc = rc || refused(mnemo_generator_append(g, 1, &c, &p, &zero),
                     MNEMO_STATUS_INVALID_ARGUMENT, "empty append");
  uint64_t twice[] = {c, c};
  const int64_t *twiceParts[] = {p, p};
  size_t twiceCounts[] = {1, 1};
  rc = rc ||
       refused(mnemo_generator_append(g, 2, twice, twiceParts, twiceCounts),
               MNEMO_STATUS_INVALID_ARGUMENT, "C appended to twice");
  int64_t outside = (int64_t)vocab;
  const int64_t *bad[] = {prompt, &outside};
  size_t badCounts[] = {3, 1};
  rc = rc || refused(mnemo_generator_append(g, 2, cr, bad, badCounts),
                     MNEMO_STATUS_INVALID_ARGUMENT, "token past the vocabulary");
  size_t many = 30; /* 49 tokens, 2 more pages; 1 is free */
  rc = rc || refused(mnemo_generator_append(g, 1, &c, &p, &many),
                     MNEMO_STATUS_RESOURCE_EXHAUSTED, "append past the pool");
  size_t max = mnemo_generator_max_length(g);
  int64_t *longTokens = calloc(max, sizeof(int64_t));
  const int64_t *lp = longTokens;
  rc = rc || refused(mnemo_generator_append(g, 1, &w, &lp, &max),
                     MNEMO_STATUS_INVALID_ARGUMENT, "append past the maximum");
  free(longTokens);
  if (!rc && mnemo_generator_free_pages(g) != before) {
    fprintf(stderr, "error: a refused append kept pages\n");
    rc = 1;
  }
  rc = rc || check(mnemo_generator_release(g, r), "release R") ||
       refused(mnemo_generator_append(g, 1, &r, &s, &n3),
               MNEMO_STATUS_NOT_FOUND, "append to released R");

  /* C and W decode on together, greedily from W's logits. */
  double worst = 0;
  for (size_t k = 0; !rc && k < 4; ++k) {
    int64_t next = (int64_t)argmax(g, w);
    int64_t both[] = {next, next};
    uint64_t cw[] = {c, w};
    rc = check(mnemo_generator_step(g, 2, cw, both), "step C, W");
    double d = rc ? INFINITY : distance(g, c, g, w);
    worst = d > worst ? d : worst;
  }
  if (!rc) {
    printf("C = W through 4 decode steps: max |d| %.1e\n", worst);
    rc = worst <= 1e-4 ? 0 : 1;
  }
  mnemo_generator_free(g);
  mnemo_generator_free(whole);
  mnemo_model_free(model);
  if (!rc)
    printf("append: ok\n");
  return rc;
}

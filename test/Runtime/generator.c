/*===- generator.c - continuous batching over the C API ------------*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * mnemo-runtime-generator-test MODEL.mnemo
 *
 * Runs three sequences through one generator the way a server does, and
 * checks every logits row against the same sequence generated alone:
 *
 *   add A (19 tokens) and B (5 tokens) in one prefill; 4 decode steps of
 *   both; add C (11 tokens) while they live; release B; 4 steps of A and C.
 *
 * On the way, the calls a caller can get wrong must fail in one line and
 * change nothing: stepping the released B, a token outside the vocabulary,
 * a sequence stepped twice in one call, an add that the pool cannot hold,
 * and a sequence grown past the model's maximum length. After each refused
 * call the live sequences go on and must still match. Tokens are chosen
 * greedily. Prints one line per check; exits 1 on the first failure.
 */

#include "mnemo/runtime.h"
#include "status_checks.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kSteps = 8, kMaxTokens = 64 };

typedef struct {
  int64_t tokens[kMaxTokens]; /* prompt, then the tokens fed */
  size_t prompt, fed;
  float *logits[kSteps + 1]; /* after the prefill and each step */
} Trace;

static mnemo_model_t *model;
static size_t vocab;


static void makePrompt(Trace *t, size_t n, int64_t seed) {
  memset(t, 0, sizeof *t);
  t->prompt = n;
  for (size_t i = 0; i < n; ++i)
    t->tokens[i] = (seed + 7 * (int64_t)i * (int64_t)i) % (int64_t)vocab;
}

static void freeTrace(Trace *t) {
  for (size_t k = 0; k <= kSteps; ++k)
    free(t->logits[k]);
}

static int record(mnemo_generator_t *g, uint64_t id, Trace *t, size_t k) {
  const float *logits = NULL;
  if (check(mnemo_generator_logits(g, id, &logits), "logits"))
    return 1;
  free(t->logits[k]); /* a step recorded again */
  t->logits[k] = malloc(vocab * sizeof(float));
  memcpy(t->logits[k], logits, vocab * sizeof(float));
  size_t best = 0;
  for (size_t v = 1; v < vocab; ++v)
    if (logits[v] > logits[best])
      best = v;
  t->tokens[t->prompt + k] = (int64_t)best; /* the next token to feed */
  return 0;
}

/* `t` generated alone: the same tokens through a fresh generator. */
static int alone(const Trace *t, size_t steps, const char *name) {
  mnemo_generator_t *g = NULL;
  if (check(mnemo_generator_create(model, NULL, 16, &g), "create"))
    return 1;
  const int64_t *prompt = t->tokens;
  uint64_t id = 0;
  int rc = check(mnemo_generator_add(g, 1, &prompt, &t->prompt, &id), "add");
  double worst = 0;
  for (size_t k = 0; !rc && k <= steps; ++k) {
    const float *logits = NULL;
    rc = check(mnemo_generator_logits(g, id, &logits), "logits");
    for (size_t v = 0; !rc && v < vocab; ++v) {
      double d = fabs((double)logits[v] - t->logits[k][v]);
      if (!(d <= worst)) /* NaN too */
        worst = isnan(d) ? INFINITY : d;
    }
    if (!rc && k < steps)
      rc = check(mnemo_generator_step(g, 1, &id, &t->tokens[t->prompt + k]),
                 "step");
  }
  mnemo_generator_free(g);
  if (rc)
    return rc;
  printf("%s: %zu steps batched = alone (max |d| %.1e)\n", name, steps, worst);
  return worst <= 1e-5 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.mnemo\n", argv[0]);
    return 2;
  }
  if (check(mnemo_model_load_file(argv[1], &model), argv[1]))
    return 1;
  mnemo_generator_t *g = NULL;
  /* Pages of 16: A (19 + 8 tokens) takes 2, B 1, C 1; 6 leave no room
   * for a 64-token prompt once B is released. */
  if (check(mnemo_generator_create(model, NULL, 6, &g), "create"))
    return 1;
  vocab = mnemo_generator_vocab_size(g);
  size_t page = mnemo_generator_page_size(g);
  printf("pages of %zu tokens, vocabulary %zu, at most %zu tokens\n", page,
         vocab, mnemo_generator_max_length(g));

  Trace a, b, c;
  makePrompt(&a, 19, 3);
  makePrompt(&b, 5, 11);
  makePrompt(&c, 11, 5);
  const int64_t *prompts[] = {a.tokens, b.tokens};
  size_t lengths[] = {a.prompt, b.prompt};
  uint64_t ids[3];
  int rc = check(mnemo_generator_add(g, 2, prompts, lengths, ids), "add A, B");
  rc = rc || record(g, ids[0], &a, 0) || record(g, ids[1], &b, 0);
  for (size_t k = 0; !rc && k < 4; ++k) {
    int64_t next[] = {a.tokens[a.prompt + k], b.tokens[b.prompt + k]};
    rc = check(mnemo_generator_step(g, 2, ids, next), "step A, B") ||
         record(g, ids[0], &a, k + 1) || record(g, ids[1], &b, k + 1);
  }
  const int64_t *promptC = c.tokens;
  rc = rc || check(mnemo_generator_add(g, 1, &promptC, &c.prompt, &ids[2]),
                   "add C") ||
       record(g, ids[2], &c, 0);
  rc = rc || check(mnemo_generator_release(g, ids[1]), "release B");
  printf("after releasing B: %zu free pages\n", mnemo_generator_free_pages(g));

  /* Refused calls, each leaving A and C as they were. */
  int64_t token = 0;
  rc = rc || refused(mnemo_generator_step(g, 1, &ids[1], &token),
                     MNEMO_STATUS_NOT_FOUND, "step released B");
  int64_t bad[] = {a.tokens[a.prompt + 4], (int64_t)vocab};
  uint64_t ac[] = {ids[0], ids[2]};
  rc = rc || refused(mnemo_generator_step(g, 2, ac, bad),
                     MNEMO_STATUS_INVALID_ARGUMENT, "token past the vocabulary");
  uint64_t twice[] = {ids[0], ids[0]};
  rc = rc || refused(mnemo_generator_step(g, 2, twice, bad),
                     MNEMO_STATUS_INVALID_ARGUMENT, "A stepped twice");
  size_t before = mnemo_generator_free_pages(g);
  int64_t big[kMaxTokens] = {0};
  const int64_t *promptBig = big;
  size_t bigLength = 4 * page;
  uint64_t idBig = 0;
  rc = rc || refused(mnemo_generator_add(g, 1, &promptBig, &bigLength, &idBig),
                     MNEMO_STATUS_RESOURCE_EXHAUSTED, "add past the pool");
  if (!rc && mnemo_generator_free_pages(g) != before) {
    fprintf(stderr, "error: the refused add kept pages\n");
    rc = 1;
  }

  for (size_t k = 0; !rc && k < 4; ++k) {
    int64_t next[] = {a.tokens[a.prompt + 4 + k], c.tokens[c.prompt + k]};
    rc = check(mnemo_generator_step(g, 2, ac, next), "step A, C") ||
         record(g, ids[0], &a, 5 + k) || record(g, ids[2], &c, k + 1);
  }
  size_t length = 0;
  rc = rc || check(mnemo_generator_sequence_length(g, ids[0], &length), "A");
  if (!rc)
    printf("A holds %zu tokens\n", length);
  mnemo_generator_free(g);

  rc = rc || alone(&a, 8, "A") || alone(&b, 4, "B") || alone(&c, 4, "C");

  /* Past the maximum length: a sequence fed until the model refuses. */
  if (!rc && check(mnemo_generator_create(model, NULL, 256, &g), "create"))
    rc = 1;
  size_t max = rc ? 0 : mnemo_generator_max_length(g);
  int64_t *longPrompt = calloc(max + 1, sizeof(int64_t));
  const int64_t *promptLong = longPrompt;
  uint64_t idLong = 0;
  rc = rc || check(mnemo_generator_add(g, 1, &promptLong, &max, &idLong),
                   "add a prompt of the maximum length");
  rc = rc || refused(mnemo_generator_step(g, 1, &idLong, &token),
                     MNEMO_STATUS_INVALID_ARGUMENT, "step past the maximum");
  size_t over = max + 1;
  rc = rc || refused(mnemo_generator_add(g, 1, &promptLong, &over, &idLong),
                     MNEMO_STATUS_INVALID_ARGUMENT, "prompt past the maximum");
  free(longPrompt);
  freeTrace(&a);
  freeTrace(&b);
  freeTrace(&c);
  mnemo_generator_free(g);
  mnemo_model_free(model);
  if (!rc)
    printf("generator: ok\n");
  return rc;
}

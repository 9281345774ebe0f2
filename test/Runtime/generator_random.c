/*===- generator_random.c - random call sequences on a generator ----*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * mnemo-runtime-random-generator-test MODEL.mnemo CALLS SEED
 *
 * CALLS random calls on one generator of a model whose layers attend over
 * every token (pages of P tokens, none freed before a release), from a
 * small pool: adds of 1 to 3 prompts, steps and appends (when the model
 * has the step) of random live sequences, releases, and calls that must
 * fail (a released id, a token outside the vocabulary, more tokens than
 * the pool or the maximum length allow). After every call the pool's
 * accounting must hold: free pages = pool - sum over live sequences of
 * ceil(length / P), and each live sequence's length is the tokens it was
 * fed. At the end every live sequence is replayed alone in a fresh
 * generator (its prompt added whole, its later tokens stepped one by one)
 * and its last logits must match within 1e-4. Prints a summary line; exits
 * 1 on the first failure.
 */

#include "mnemo/runtime.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxLive = 6, kPool = 14 };

typedef struct {
  uint64_t id;
  size_t prompt; /* tokens added by mnemo_generator_add */
  size_t length; /* all tokens fed */
  int64_t *tokens;
} Live;

static Live live[kMaxLive];
static size_t numLive, vocab, page, maxLength;
static uint64_t state;

static uint64_t next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}
static size_t below(size_t n) { return (size_t)(next() % n); }

static int fail(const char *what, mnemo_status_t status) {
  fprintf(stderr, "error: %s: %s\n", what,
          status ? mnemo_status_message(status) : "unexpected result");
  mnemo_status_free(status);
  return 1;
}

/* A call that must fail: it must, with `code`. */
static int mustFail(mnemo_status_t status, mnemo_status_code_t code,
                    const char *what) {
  if (!status || mnemo_status_code(status) != code)
    return fail(what, status);
  mnemo_status_free(status);
  return 0;
}

static size_t pagesOf(size_t length) { return (length + page - 1) / page; }

static int checkAccounting(mnemo_generator_t *g, const char *after) {
  size_t held = 0;
  for (size_t i = 0; i < numLive; ++i) {
    size_t length = 0;
    mnemo_status_t status =
        mnemo_generator_sequence_length(g, live[i].id, &length);
    if (status || length != live[i].length)
      return fail(after, status);
    held += pagesOf(length);
  }
  if (mnemo_generator_free_pages(g) != kPool - held) {
    fprintf(stderr, "error: after %s: %zu free pages, expected %zu\n", after,
            mnemo_generator_free_pages(g), (size_t)kPool - held);
    return 1;
  }
  return 0;
}

static void feed(Live *q, const int64_t *tokens, size_t n) {
  q->tokens = realloc(q->tokens, (q->length + n) * sizeof(int64_t));
  memcpy(q->tokens + q->length, tokens, n * sizeof(int64_t));
  q->length += n;
}

static void randomTokens(int64_t *out, size_t n) {
  for (size_t i = 0; i < n; ++i)
    out[i] = (int64_t)below(vocab);
}

/* Sequence `q` replayed alone: its last logits against `g`'s. */
static int replay(mnemo_model_t *model, mnemo_generator_t *g, const Live *q) {
  mnemo_generator_t *alone = NULL;
  uint64_t id = 0;
  const int64_t *prompt = q->tokens;
  mnemo_status_t status = mnemo_generator_create(model, NULL, kPool, &alone);
  if (!status)
    status = mnemo_generator_add(alone, 1, &prompt, &q->prompt, &id);
  for (size_t t = q->prompt; !status && t < q->length; ++t)
    status = mnemo_generator_step(alone, 1, &id, &q->tokens[t]);
  const float *a = NULL, *b = NULL;
  if (!status)
    status = mnemo_generator_logits(alone, id, &a);
  if (!status)
    status = mnemo_generator_logits(g, q->id, &b);
  double worst = 0;
  for (size_t v = 0; !status && v < vocab; ++v) {
    double d = fabs((double)a[v] - b[v]);
    worst = d > worst || isnan(d) ? (isnan(d) ? INFINITY : d) : worst;
  }
  mnemo_generator_free(alone);
  if (status)
    return fail("replay", status);
  if (!(worst <= 1e-4)) {
    fprintf(stderr, "error: sequence %llu (%zu tokens): max |d| %.2e alone\n",
            (unsigned long long)q->id, q->length, worst);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s MODEL.mnemo CALLS SEED\n", argv[0]);
    return 2;
  }
  long calls = atol(argv[2]);
  state = (uint64_t)atoll(argv[3]) * 0x9e3779b97f4a7c15ull + 1;
  mnemo_model_t *model = NULL;
  mnemo_generator_t *g = NULL;
  mnemo_status_t status = mnemo_model_load_file(argv[1], &model);
  if (!status)
    status = mnemo_generator_create(model, NULL, kPool, &g);
  if (status)
    return fail(argv[1], status);
  vocab = mnemo_generator_vocab_size(g);
  page = mnemo_generator_page_size(g);
  maxLength = mnemo_generator_max_length(g);
  int canAppend = mnemo_generator_can_append(g);
  long counts[6] = {0}; /* add, step, append, release, refused, full */
  int64_t tokens[64];
  int rc = 0;
  for (long c = 0; !rc && c < calls; ++c) {
    /* 1 in 8 an add, 2 a step, 3 an append (a step without the append
     * step), 1 a release, 1 a call refused on purpose. */
    size_t kind = below(8);
    kind = kind == 0 ? 0 : kind < 3 ? 1 : kind < 6 ? (canAppend ? 2 : 1)
         : kind == 6 ? 3 : 4;
    if (kind == 0 && numLive < kMaxLive) { /* add */
      size_t n = 1 + below(kMaxLive - numLive < 3 ? kMaxLive - numLive : 3);
      const int64_t *prompts[3];
      size_t lengths[3];
      uint64_t ids[3];
      int64_t buffer[3][24];
      for (size_t i = 0; i < n; ++i) {
        lengths[i] = 1 + below(24);
        randomTokens(buffer[i], lengths[i]);
        prompts[i] = buffer[i];
      }
      status = mnemo_generator_add(g, n, prompts, lengths, ids);
      if (status && mnemo_status_code(status) == MNEMO_STATUS_RESOURCE_EXHAUSTED) {
        mnemo_status_free(status);
        ++counts[5];
      } else if (status) {
        rc = fail("add", status);
      } else {
        for (size_t i = 0; i < n; ++i) {
          Live *q = &live[numLive++];
          *q = (Live){ids[i], lengths[i], 0, NULL};
          feed(q, prompts[i], lengths[i]);
        }
        ++counts[0];
      }
    } else if ((kind == 1 || kind == 2) && numLive > 0) { /* step, append */
      int append = kind == 2 && canAppend;
      size_t n = 1 + below(numLive), first = below(numLive - n + 1);
      uint64_t ids[kMaxLive];
      const int64_t *parts[kMaxLive];
      size_t lengths[kMaxLive];
      int64_t buffer[kMaxLive][8];
      for (size_t i = 0; i < n; ++i) {
        ids[i] = live[first + i].id;
        lengths[i] = append ? 1 + below(8) : 1;
        randomTokens(buffer[i], lengths[i]);
        parts[i] = buffer[i];
        tokens[i] = buffer[i][0];
      }
      status = append ? mnemo_generator_append(g, n, ids, parts, lengths)
                      : mnemo_generator_step(g, n, ids, tokens);
      mnemo_status_code_t code =
          status ? mnemo_status_code(status) : MNEMO_STATUS_OK;
      if (code == MNEMO_STATUS_RESOURCE_EXHAUSTED ||
          code == MNEMO_STATUS_INVALID_ARGUMENT) {
        /* The pool, or a sequence past the maximum length: nothing ran. */
        int expected = 0;
        for (size_t i = 0; i < n; ++i)
          expected |= live[first + i].length + lengths[i] > maxLength;
        if (code == MNEMO_STATUS_INVALID_ARGUMENT && !expected)
          rc = fail(append ? "append" : "step", status);
        else
          mnemo_status_free(status);
        ++counts[5];
      } else if (status) {
        rc = fail(append ? "append" : "step", status);
      } else {
        for (size_t i = 0; i < n; ++i)
          feed(&live[first + i], parts[i], lengths[i]);
        ++counts[append ? 2 : 1];
      }
    } else if (kind == 3 && numLive > 0) { /* release */
      size_t i = below(numLive);
      status = mnemo_generator_release(g, live[i].id);
      if (status) {
        rc = fail("release", status);
      } else {
        uint64_t gone = live[i].id;
        free(live[i].tokens);
        live[i] = live[--numLive];
        int64_t token = 0;
        rc = mustFail(mnemo_generator_step(g, 1, &gone, &token),
                      MNEMO_STATUS_NOT_FOUND, "step of a released sequence");
        ++counts[3];
      }
    } else if (kind == 4 && numLive > 0) { /* a token outside the vocabulary */
      Live *q = &live[below(numLive)];
      int64_t bad = below(2) ? (int64_t)vocab : -1;
      const int64_t *part = &bad;
      size_t one = 1;
      rc = canAppend && below(2)
               ? mustFail(mnemo_generator_append(g, 1, &q->id, &part, &one),
                          MNEMO_STATUS_INVALID_ARGUMENT, "bad token appended")
               : mustFail(mnemo_generator_step(g, 1, &q->id, &bad),
                          MNEMO_STATUS_INVALID_ARGUMENT, "bad token stepped");
      ++counts[4];
    }
    rc = rc || checkAccounting(g, "a call");
  }
  for (size_t i = 0; !rc && i < numLive; ++i)
    rc = replay(model, g, &live[i]);
  printf("%ld calls: %ld adds, %ld steps, %ld appends, %ld releases, %ld "
         "refused on purpose, %ld over the pool or the length; %zu live "
         "sequences replayed alone: %s\n",
         calls, counts[0], counts[1], counts[2], counts[3], counts[4],
         counts[5], numLive, rc ? "FAILED" : "ok");
  for (size_t i = 0; i < numLive; ++i)
    free(live[i].tokens);
  mnemo_generator_free(g);
  mnemo_model_free(model);
  return rc;
}

/*===- generate.c - generating token ids with the Mnemo runtime ----*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * mnemo-generate-example MODEL.mnemo N PROMPT...
 *
 * Generates N token ids greedily after each prompt, a comma-separated list
 * of token ids ("1,5,9"), with a generator over a model compiled from a
 * checkpoint (mnemoc CKPT -o MODEL.mnemo): all prompts are prefilled in one
 * call, then every step feeds each sequence the token it chose, in one
 * decode call. A sequence that reaches N tokens is released at once (its
 * pages return to the pool) while the others go on, as a server does. Prints
 * each prompt's generated ids. Plain C11 against mnemo/runtime.h.
 */

#include "mnemo/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxPrompts = 16, kMaxTokens = 4096 };

static int failed(mnemo_status_t status) {
  if (!status)
    return 0;
  fprintf(stderr, "error: %s (%s)\n", mnemo_status_message(status),
          mnemo_status_code_name(mnemo_status_code(status)));
  mnemo_status_free(status);
  return 1;
}

/* Parses "1,5,9" into `ids`; returns the count, 0 on bad input. */
static size_t parse_ids(const char *text, int64_t *ids) {
  size_t n = 0;
  while (*text && n < kMaxTokens) {
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (end == text || (*end && *end != ','))
      return 0;
    ids[n++] = v;
    text = *end ? end + 1 : end;
  }
  return n;
}

/* The id of the first largest logit. */
static int64_t greedy(const float *logits, size_t vocab) {
  size_t best = 0;
  for (size_t v = 1; v < vocab; ++v)
    if (logits[v] > logits[best])
      best = v;
  return (int64_t)best;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc - 3 > kMaxPrompts || atoi(argv[2]) < 1) {
    fprintf(stderr, "usage: %s MODEL.mnemo N PROMPT... (up to %d prompts of "
                    "comma-separated token ids)\n",
            argv[0], kMaxPrompts);
    return 2;
  }
  size_t steps = (size_t)atoi(argv[2]), count = (size_t)(argc - 3);
  static int64_t prompts[kMaxPrompts][kMaxTokens];
  const int64_t *prompt_ptrs[kMaxPrompts];
  size_t lengths[kMaxPrompts], pages = 0;
  for (size_t i = 0; i < count; ++i) {
    lengths[i] = parse_ids(argv[3 + i], prompts[i]);
    prompt_ptrs[i] = prompts[i];
    if (!lengths[i]) {
      fprintf(stderr, "error: prompt %zu: expected token ids like 1,5,9\n", i);
      return 2;
    }
  }

  mnemo_model_t *model = NULL;
  if (failed(mnemo_model_load_file(argv[1], &model)))
    return 1;
  /* Enough pages of the model's size for every prompt and its tokens. */
  size_t page = 0;
  if (failed(mnemo_generator_page_size_of(model, &page))) {
    mnemo_model_free(model);
    return 1;
  }
  mnemo_generator_t *gen = NULL;
  for (size_t i = 0; i < count; ++i)
    pages += (lengths[i] + steps + page - 1) / page;
  int rc = failed(mnemo_generator_create(model, NULL, pages, &gen));
  mnemo_model_free(model); /* the generator keeps it */
  if (rc)
    return 1;
  size_t vocab = mnemo_generator_vocab_size(gen);
  printf("%zu prompts, %zu pages of %zu tokens, vocabulary %zu\n", count,
         pages, page, vocab);

  uint64_t ids[kMaxPrompts];
  static int64_t out[kMaxPrompts][kMaxTokens];
  rc = failed(mnemo_generator_add(gen, count, prompt_ptrs, lengths, ids));
  /* Sequence i generates steps - i tokens (at least 1), so that they leave
   * at different steps. */
  size_t live = count, wanted[kMaxPrompts], made[kMaxPrompts] = {0};
  for (size_t i = 0; i < count; ++i)
    wanted[i] = steps > i ? steps - i : 1;
  while (!rc && live > 0) {
    uint64_t step_ids[kMaxPrompts];
    int64_t step_tokens[kMaxPrompts];
    size_t n = 0;
    for (size_t i = 0; !rc && i < count; ++i) {
      if (made[i] == wanted[i])
        continue;
      const float *logits = NULL;
      rc = failed(mnemo_generator_logits(gen, ids[i], &logits));
      if (rc)
        break;
      out[i][made[i]++] = greedy(logits, vocab);
      if (made[i] == wanted[i]) {
        rc = failed(mnemo_generator_release(gen, ids[i]));
        --live;
        continue;
      }
      step_ids[n] = ids[i];
      step_tokens[n++] = out[i][made[i] - 1];
    }
    if (!rc && n > 0)
      rc = failed(mnemo_generator_step(gen, n, step_ids, step_tokens));
  }
  if (!rc)
    printf("free pages at the end: %zu of %zu\n",
           mnemo_generator_free_pages(gen), pages);
  for (size_t i = 0; !rc && i < count; ++i) {
    printf("prompt %zu (%zu tokens) ->", i, lengths[i]);
    for (size_t k = 0; k < made[i]; ++k)
      printf(" %lld", (long long)out[i][k]);
    printf("\n");
  }
  mnemo_generator_free(gen);
  return rc;
}

/*===- load_corrupt.c - loads artifacts, prints each status -------*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * mnemo-runtime-load-test FILE...
 *
 * Loads each file three ways (mnemo_model_load_file; mnemo_model_load_memory
 * from a 64-byte aligned buffer, used in place; and from a misaligned one,
 * which the runtime copies) and prints one line per attempt:
 *   FILE: file|memory|unaligned: OK
 *   FILE: file|memory|unaligned: CODE: message
 * Exits 0 when every attempt succeeded, 1 otherwise; it must never crash.
 */

#include "mnemo/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int report(const char *file, const char *how, mnemo_status_t status,
                  mnemo_model_t *model) {
  if (!status) {
    printf("%s: %s: OK (%zu functions)\n", file, how,
           mnemo_model_function_count(model));
    mnemo_model_free(model);
    return 0;
  }
  printf("%s: %s: %s: %s\n", file, how,
         mnemo_status_code_name(mnemo_status_code(status)),
         mnemo_status_message(status));
  mnemo_status_free(status);
  return 1;
}

/* Reads `path` into a 64-byte aligned buffer with one spare byte in front
 * of the data for the misaligned attempt. */
static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t capacity = 1 << 16, used = 0;
  unsigned char *data = malloc(capacity);
  size_t n;
  while (data && (n = fread(data + used, 1, capacity - used, f)) > 0) {
    used += n;
    if (used == capacity) {
      unsigned char *grown = realloc(data, capacity *= 2);
      if (!grown)
        free(data);
      data = grown;
    }
  }
  fclose(f);
  if (!data)
    return NULL;
  unsigned char *aligned = aligned_alloc(64, (used + 64) / 64 * 64 + 64);
  if (aligned)
    memcpy(aligned + 64, data, used);
  free(data);
  *size = used;
  return aligned;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE...\n", argv[0]);
    return 2;
  }
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    mnemo_model_t *model = NULL;
    failures +=
        report(argv[i], "file", mnemo_model_load_file(argv[i], &model), model);
    size_t size = 0;
    unsigned char *buffer = read_file(argv[i], &size);
    if (!buffer) {
      printf("%s: memory: cannot read the file\n", argv[i]);
      ++failures;
      continue;
    }
    /* The first copy starts 64-byte aligned; the second one byte later. */
    model = NULL;
    failures +=
        report(argv[i], "memory",
               mnemo_model_load_memory(buffer + 64, size, &model), model);
    memmove(buffer + 1, buffer + 64, size);
    model = NULL;
    failures +=
        report(argv[i], "unaligned",
               mnemo_model_load_memory(buffer + 1, size, &model), model);
    free(buffer);
  }
  return failures ? 1 : 0;
}

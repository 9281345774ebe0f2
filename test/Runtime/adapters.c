/*===- adapters.c - switching LoRA adapters on one loaded model ----*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * mnemo-runtime-adapters-test MODEL.mnemo DIR ADAPTER...
 *
 * MODEL was compiled with `mnemoc --lora-attach`. Loads it once, then for
 * each ADAPTER in order replaces its factors with DIR/ADAPTER's
 * (mnemo_model_set_weight; "-" keeps the compiled-in ones), creates a
 * session, runs `forward` on DIR/ids.bin and writes the logits to
 * DIR/logits-I.bin (I the argument's position from 0). At the end the
 * first session runs again, into DIR/logits-first.bin: a session keeps the
 * factors it was created with. Then the calls a caller can get wrong must
 * fail in one line: a weight that is not replaceable, a wrong shape, an
 * unknown name.
 *
 * Files (little-endian): ids.bin = int64 rows, cols, then rows x cols
 * int64 ids; DIR/ADAPTER/manifest.txt = one "NAME ROWS COLS" line per
 * factor, its f32 values in DIR/ADAPTER/K.bin (K from 0, in line order).
 */

#include "mnemo/runtime.h"
#include "status_checks.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = n > 0 ? malloc((size_t)n) : NULL;
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = data ? (size_t)n : 0;
  return data;
}

static int setAdapter(mnemo_model_t *model, const char *dir,
                      const char *adapter) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/manifest.txt", dir, adapter);
  FILE *manifest = fopen(path, "r");
  if (!manifest) {
    fprintf(stderr, "error: cannot read %s\n", path);
    return 1;
  }
  char name[512];
  long long rows, cols;
  int k = 0, failed = 0;
  while (!failed &&
         fscanf(manifest, "%511s %lld %lld", name, &rows, &cols) == 3) {
    snprintf(path, sizeof path, "%s/%s/%d.bin", dir, adapter, k++);
    size_t size = 0;
    float *values = readFile(path, &size);
    int64_t shape[2] = {rows, cols};
    if (!values || size != (size_t)(rows * cols) * sizeof(float)) {
      fprintf(stderr, "error: %s: expected %lld x %lld floats\n", path, rows,
              cols);
      failed = 1;
    } else {
      failed = check(mnemo_model_set_weight(model, name, MNEMO_DTYPE_F32,
                                            shape, 2, values),
                     name);
    }
    free(values);
  }
  fclose(manifest);
  return failed;
}

static int runForward(mnemo_session_t *session, const int64_t *ids,
                      const int64_t *idsShape, const char *path) {
  mnemo_tensor_t out;
  if (check(mnemo_session_set_input(session, "input_ids", MNEMO_DTYPE_I64,
                                    idsShape, 2,
                                    ids),
            "input_ids") ||
      check(mnemo_session_run(session), "run") ||
      check(mnemo_session_get_output(session, 0, &out), "logits"))
    return 1;
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(out.data, 1, out.size_bytes, f) != out.size_bytes) {
    fprintf(stderr, "error: cannot write %s\n", path);
    if (f)
      fclose(f);
    return 1;
  }
  fclose(f);
  return 0;
}


int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL.mnemo DIR ADAPTER...\n", argv[0]);
    return 2;
  }
  const char *dir = argv[2];
  char path[4096];
  snprintf(path, sizeof path, "%s/ids.bin", dir);
  size_t size = 0;
  int64_t *idsFile = readFile(path, &size);
  if (!idsFile || size < 2 * sizeof(int64_t) ||
      size != (size_t)(2 + idsFile[0] * idsFile[1]) * sizeof(int64_t)) {
    fprintf(stderr, "error: %s: expected rows, cols and the ids\n", path);
    return 1;
  }
  mnemo_model_t *model = NULL;
  if (check(mnemo_model_load_file(argv[1], &model), argv[1]))
    return 1;
  mnemo_session_t *first = NULL;
  int failed = 0;
  for (int i = 3; !failed && i < argc; ++i) {
    mnemo_session_t *session = NULL;
    if (strcmp(argv[i], "-") != 0)
      failed = setAdapter(model, dir, argv[i]);
    if (!failed)
      failed = check(mnemo_session_create(model, "forward", &session),
                     "session");
    snprintf(path, sizeof path, "%s/logits-%d.bin", dir, i - 3);
    if (!failed)
      failed = runForward(session, idsFile + 2, idsFile, path);
    if (!failed)
      printf("adapter %s: logits-%d.bin\n", argv[i], i - 3);
    if (!first)
      first = session;
    else
      mnemo_session_free(session);
  }
  snprintf(path, sizeof path, "%s/logits-first.bin", dir);
  if (!failed && first)
    failed = runForward(first, idsFile + 2, idsFile, path);
  mnemo_session_free(first);

  /* Misuse: one line each, nothing replaced. */
  float zeros[4] = {0};
  int64_t shape[2] = {2, 2};
  const char *base = "model.layers.0.mlp.up_proj.weight";
  if (!failed) {
    failed |= refused(mnemo_model_set_weight(model, "no.such.weight",
                                             MNEMO_DTYPE_F32, shape, 2, zeros),
                      MNEMO_STATUS_NOT_FOUND, "unknown weight");
    failed |= refused(mnemo_model_set_weight(
                          model, "lora.model.layers.0.self_attn.q_proj.A",
                          MNEMO_DTYPE_F32, shape, 2, zeros),
                      MNEMO_STATUS_INVALID_ARGUMENT, "wrong shape");
    failed |= refused(mnemo_model_set_weight(model, base, MNEMO_DTYPE_F32,
                                             shape, 2, zeros),
                      MNEMO_STATUS_INCOMPATIBLE, "base weight");
    failed |= refused(mnemo_model_set_weight(NULL, base, MNEMO_DTYPE_F32,
                                             shape, 2, zeros),
                      MNEMO_STATUS_INVALID_ARGUMENT, "null model");
  }
  mnemo_model_free(model);
  free(idsFile);
  printf("adapters: %s\n", failed ? "FAILED" : "ok");
  return failed;
}

/*===- shapes.c - one session run at several input shapes ----------*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * mnemo-runtime-shapes-test MODEL.mnemo INPUTS SHAPES...
 *
 * Creates one session on the device the model's code is for (CUDA for
 * PTX) and runs it once per SHAPES. INPUTS names the bound inputs, joined
 * by ',' (every input of the function); each SHAPES has one shape per
 * input, joined by ',', each of dims joined by 'x' (such as 1x9, or
 * 1x8x7x64,1x2x7x64 for two inputs). Integer inputs are bound to 0, 1,
 * 2, ... (mod 7), others to zero bytes. Prints "run K: SHAPES -> NAME
 * DIMS" per run and output, so that a test can check the outputs' shapes
 * follow the inputs' and, with the CUDA driver stand-in, which runs
 * capture a graph, which replay one and what each run encodes. Exits
 * non-zero with the error on the first failure.
 */

#include "mnemo/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed(mnemo_status_t status) {
  if (!status)
    return 0;
  fprintf(stderr, "error: %s\n", mnemo_status_message(status));
  mnemo_status_free(status);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL.mnemo INPUTS SHAPES...\n", argv[0]);
    return 2;
  }
  mnemo_model_t *model = NULL;
  if (failed(mnemo_model_load_file(argv[1], &model)))
    return 1;
  const char *where =
      strncmp(mnemo_model_target_triple(model), "nvptx", 5) == 0 ? "cuda"
                                                                 : "cpu";
  mnemo_device_t *device = NULL;
  mnemo_session_t *session = NULL;
  int rc = failed(mnemo_device_open(where, &device)) ||
           failed(mnemo_session_create_on(model, NULL, device, &session));
  mnemo_device_free(device);
  for (int k = 3; !rc && k < argc; ++k) {
    fprintf(stderr, "shapes-test: run %d: %s\n", k - 2, argv[k]);
    const char *names = argv[2];
    char *shapes = argv[k];
    /* Borrowed by the session until the run returns. */
    void *bound[16];
    size_t nbound = 0;
    while (!rc && *names && nbound < 16) {
      size_t nameLength = strcspn(names, ",");
      char name[256];
      snprintf(name, sizeof(name), "%.*s", (int)nameLength, names);
      names += nameLength + (names[nameLength] == ',');
      int64_t shape[8];
      size_t rank = 0, count = 1;
      char *p = shapes;
      for (; *p && *p != ',' && rank < 8; ++rank) {
        shape[rank] = strtoll(p, &p, 10);
        count *= (size_t)shape[rank];
        if (*p == 'x')
          ++p;
      }
      shapes = *p == ',' ? p + 1 : p;
      /* The input's dtype, from the signature. */
      mnemo_dtype_t dtype = MNEMO_DTYPE_I64;
      mnemo_tensor_info_t info;
      for (size_t i = 0;
           i < mnemo_model_input_count(model, mnemo_session_function(session));
           ++i)
        if (!mnemo_model_input_info(model, mnemo_session_function(session), i,
                                    &info) &&
            strcmp(info.name, name) == 0)
          dtype = info.dtype;
      size_t bytes = mnemo_dtype_size(dtype);
      int64_t *data = calloc(count ? count : 1, bytes < 8 ? 8 : bytes);
      for (size_t i = 0; data && dtype == MNEMO_DTYPE_I64 && i < count; ++i)
        data[i] = (int64_t)(i % 7);
      bound[nbound++] = data;
      rc = !data || failed(mnemo_session_set_input(session, name, dtype, shape,
                                                   rank, data));
    }
    rc = rc || failed(mnemo_session_run(session));
    while (nbound)
      free(bound[--nbound]);
    for (size_t o = 0; !rc && o < mnemo_session_output_count(session); ++o) {
      mnemo_tensor_t t;
      mnemo_tensor_info_t info;
      rc = failed(mnemo_session_get_output(session, o, &t)) ||
           failed(mnemo_model_output_info(model, mnemo_session_function(session),
                                          o, &info));
      if (rc)
        break;
      printf("run %d: %s -> %s", k - 2, argv[k], info.name);
      for (size_t d = 0; d < t.rank; ++d)
        printf("%s%lld", d ? "x" : " ", (long long)t.shape[d]);
      printf(" (%zu bytes)\n", t.size_bytes);
    }
  }
  mnemo_session_free(session);
  mnemo_model_free(model);
  return rc;
}

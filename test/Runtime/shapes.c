/*===- shapes.c - one session run at several input shapes ----------*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * mnemo-runtime-shapes-test MODEL.mnemo INPUT SHAPE...
 *
 * Creates one session on the device the model's code is for (CUDA for
 * PTX) and runs it once per SHAPE (dims joined by 'x', such as 1x9) of its
 * integer input INPUT, bound to 0, 1, 2, ... (other inputs are not
 * supported). Prints "run K: SHAPE -> NAME DIMS" per run and output, so
 * that a test can check the outputs' shapes follow the input's and, with
 * the CUDA driver stand-in, which runs capture a graph and which replay
 * one. Exits non-zero with the error on the first failure.
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
    fprintf(stderr, "usage: %s MODEL.mnemo INPUT SHAPE...\n", argv[0]);
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
    int64_t shape[8];
    size_t rank = 0, count = 1;
    for (char *p = argv[k]; *p && rank < 8; ++rank) {
      shape[rank] = strtoll(p, &p, 10);
      count *= (size_t)shape[rank];
      if (*p == 'x')
        ++p;
    }
    int64_t *ids = calloc(count ? count : 1, sizeof(int64_t));
    for (size_t i = 0; ids && i < count; ++i)
      ids[i] = (int64_t)(i % 7);
    fprintf(stderr, "shapes-test: run %d: %s\n", k - 2, argv[k]);
    rc = !ids ||
         failed(mnemo_session_set_input(session, argv[2], MNEMO_DTYPE_I64,
                                        shape, rank, ids)) ||
         failed(mnemo_session_run(session));
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
    free(ids);
  }
  mnemo_session_free(session);
  mnemo_model_free(model);
  return rc;
}

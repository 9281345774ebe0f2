/*===- main.c - embedding the Mnemo runtime in a C program --------*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * mnemo-embed-example MODEL.mnemo [FUNCTION]
 *
 * Loads a compiled model, prints its signature, binds every input to
 * generated data (integer inputs count 0, 1, 2, ..., the rest are zeros;
 * a dynamic dim takes min(4, its max)), runs it, and prints the shape and
 * the first values of every output. The session runs where the model's
 * code does: on the CPU, or for a model compiled for a GPU (mnemoc
 * --target=sm_90a) on CUDA device 0. Plain C11 against mnemo/runtime.h.
 */

#include "mnemo/runtime.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kDynamicDim = 4, kShownValues = 5 };

/* Prints the error, frees it, and says whether there was one. */
static int failed(mnemo_status_t status) {
  if (!status)
    return 0;
  fprintf(stderr, "error: %s (%s)\n", mnemo_status_message(status),
          mnemo_status_code_name(mnemo_status_code(status)));
  mnemo_status_free(status);
  return 1;
}

static void print_dims(const int64_t *dims, size_t rank) {
  printf("[");
  for (size_t i = 0; i < rank; ++i) {
    if (i)
      printf(", ");
    if (dims[i] < 0)
      printf("?");
    else
      printf("%" PRId64, dims[i]);
  }
  printf("]");
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { /* subnormal: normalize */
    exponent = 113;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* Element i of a tensor, as a double. */
static double value_at(const mnemo_tensor_t *t, size_t i) {
  const unsigned char *p = (const unsigned char *)t->data;
  switch (t->dtype) {
  case MNEMO_DTYPE_F32: {
    float v;
    memcpy(&v, p + 4 * i, 4);
    return v;
  }
  case MNEMO_DTYPE_F64: {
    double v;
    memcpy(&v, p + 8 * i, 8);
    return v;
  }
  case MNEMO_DTYPE_F16:
  case MNEMO_DTYPE_BF16: {
    uint16_t v;
    memcpy(&v, p + 2 * i, 2);
    if (t->dtype == MNEMO_DTYPE_F16)
      return half_to_float(v);
    uint32_t bits = (uint32_t)v << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
  }
  case MNEMO_DTYPE_I64: {
    int64_t v;
    memcpy(&v, p + 8 * i, 8);
    return (double)v;
  }
  case MNEMO_DTYPE_I32: {
    int32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v;
  }
  case MNEMO_DTYPE_I8:
    return (signed char)p[i];
  case MNEMO_DTYPE_U8:
  case MNEMO_DTYPE_BOOL:
    return p[i];
  default:
    return 0;
  }
}

/* Fills `count` elements: integers count up, everything else is zero. */
static void fill_input(void *data, mnemo_dtype_t dtype, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (dtype == MNEMO_DTYPE_I64)
      ((int64_t *)data)[i] = (int64_t)i;
    else if (dtype == MNEMO_DTYPE_I32)
      ((int32_t *)data)[i] = (int32_t)i;
  }
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s MODEL.mnemo [FUNCTION]\n", argv[0]);
    return 2;
  }
  mnemo_model_t *model = NULL;
  if (failed(mnemo_model_load_file(argv[1], &model)))
    return 1;
  printf("model: %s (target %s, %" PRIu64 " bytes of weights)\n",
         mnemo_model_provenance(model, MNEMO_PROVENANCE_SOURCE),
         mnemo_model_target_triple(model), mnemo_model_weights_size(model));
  printf("compiled by: %s\n",
         mnemo_model_provenance(model, MNEMO_PROVENANCE_COMPILER));

  /* PTX (triple nvptx64-nvidia-cuda) runs on a CUDA device. */
  const char *where =
      strncmp(mnemo_model_target_triple(model), "nvptx", 5) == 0 ? "cuda"
                                                                 : "cpu";
  mnemo_device_t *device = NULL;
  mnemo_session_t *session = NULL;
  if (failed(mnemo_device_open(where, &device)) ||
      failed(mnemo_session_create_on(model, argc == 3 ? argv[2] : NULL,
                                     device, &session))) {
    mnemo_device_free(device);
    mnemo_model_free(model);
    return 1;
  }
  printf("device: %s\n", mnemo_device_name(device));
  mnemo_device_free(device); /* the session does not need it */
  size_t function = mnemo_session_function(session);
  printf("function %s\n", mnemo_model_function_name(model, function));

  /* The inputs: one buffer each, kept until the run returns. */
  size_t num_inputs = mnemo_model_input_count(model, function);
  void **buffers = calloc(num_inputs ? num_inputs : 1, sizeof(void *));
  int status = buffers ? 0 : 1;
  for (size_t i = 0; i < num_inputs && !status; ++i) {
    mnemo_tensor_info_t info;
    if ((status = failed(mnemo_model_input_info(model, function, i, &info))))
      break;
    int64_t shape[32];
    size_t count = 1;
    for (size_t d = 0; d < info.rank && d < 32; ++d) {
      shape[d] = info.shape[d] >= 0                ? info.shape[d]
                 : info.max_shape[d] < kDynamicDim ? info.max_shape[d]
                                                   : kDynamicDim;
      count *= (size_t)shape[d];
    }
    printf("  input %s: %s ", info.name, mnemo_dtype_name(info.dtype));
    print_dims(info.shape, info.rank);
    printf(" max ");
    print_dims(info.max_shape, info.rank);
    printf(", bound to ");
    print_dims(shape, info.rank);
    printf("\n");
    buffers[i] = calloc(count ? count : 1, mnemo_dtype_size(info.dtype));
    if (!buffers[i]) {
      status = 1;
      break;
    }
    fill_input(buffers[i], info.dtype, count);
    status = failed(mnemo_session_set_input(session, info.name, info.dtype,
                                            shape, info.rank, buffers[i]));
  }
  size_t num_outputs = mnemo_model_output_count(model, function);
  for (size_t i = 0; i < num_outputs && !status; ++i) {
    mnemo_tensor_info_t info;
    if ((status = failed(mnemo_model_output_info(model, function, i, &info))))
      break;
    printf("  output %s: %s ", info.name, mnemo_dtype_name(info.dtype));
    print_dims(info.shape, info.rank);
    printf("\n");
  }

  if (!status)
    status = failed(mnemo_session_run(session));
  for (size_t i = 0; i < num_inputs && buffers; ++i)
    free(buffers[i]); /* the run is over: the session no longer reads them */
  free(buffers);

  for (size_t i = 0; i < num_outputs && !status; ++i) {
    mnemo_tensor_info_t info;
    mnemo_tensor_t t;
    if ((status = failed(mnemo_model_output_info(model, function, i, &info)) ||
                  failed(mnemo_session_get_output(session, i, &t))))
      break;
    size_t count = t.size_bytes / mnemo_dtype_size(t.dtype);
    printf("output %s: %s ", info.name, mnemo_dtype_name(t.dtype));
    print_dims(t.shape, t.rank);
    printf(" =");
    for (size_t k = 0; k < count && k < kShownValues; ++k)
      printf(" %.6g", value_at(&t, k));
    printf(count > kShownValues ? " ...\n" : "\n");
  }

  mnemo_session_free(session);
  mnemo_model_free(model);
  return status;
}

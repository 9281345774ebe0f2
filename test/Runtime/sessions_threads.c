/*===- sessions_threads.c - many sessions at once over one model --*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * mnemo-runtime-threads-test MODEL.mnemo [--function NAME] [--threads N]
 *                            [--runs R] [--session-threads T1,T2,...]
 *
 * Loads the artifact once. A reference session on the main thread runs the
 * function (default: the first) once on each of three input sets, on one
 * thread (mnemo_session_set_threads(1)), and keeps the outputs. Then N
 * threads (default 8) each create their own session over the same model,
 * fill their own input buffers with the same data, wait until all are
 * ready, and run R times (default 6), cycling through the input sets from a
 * different starting point each, comparing every output with the reference
 * bit for bit (dtype, shape, bytes). The main thread drops its reference to
 * the model while they run; their sessions keep it alive.
 *
 * Their sessions use the runtime's default thread count (one per core), or
 * with --session-threads session i uses T[i % count] threads (0: one per
 * core), so sessions with pools of different sizes run at once and must
 * all agree with the single-threaded reference.
 *
 * The inputs are deterministic. Input set c gives a dynamic dim with max M
 * the size 1 + (s - 1) % M, s = 5, 2, 11 for c = 0, 1, 2, so inputs that
 * share a dim of the same max agree; floating-point elements are multiples
 * of 1/8 in [-1, 1], integers count 0..7 and booleans alternate.
 *
 * Prints one summary line, and the first problem of each thread that had
 * one on stderr; exits 1 on any mismatch or error, 2 on bad usage. Plain C11
 * and POSIX threads against mnemo/runtime.h.
 */

#define _POSIX_C_SOURCE 200809L

#include "mnemo/runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  kCases = 3,
  kMaxInputs = 64,
  kMaxOutputs = 64,
  kMaxRank = 16,
  kMaxThreads = 256,
  kMaxSessionThreads = 16, /* entries of --session-threads */
};
static const int64_t kCaseSize[kCases] = {5, 2, 11};

/* An input of one input set, ready to bind. */
typedef struct {
  const char *name; /* owned by the model */
  mnemo_dtype_t dtype;
  size_t rank;
  int64_t shape[kMaxRank];
  void *data;
} Input;

/* An output of the reference run. */
typedef struct {
  mnemo_dtype_t dtype;
  size_t rank;
  int64_t shape[kMaxRank];
  void *data;
  size_t bytes;
} Tensor;

typedef struct {
  mnemo_model_t *model;
  const char *function; /* NULL: the first */
  size_t numInputs, numOutputs;
  long runs;
  size_t sessionThreads[kMaxSessionThreads];
  size_t numSessionThreads; /* 0: the default */
  Tensor reference[kMaxOutputs][kCases];
  char outputNames[kMaxOutputs][64];
  /* The start line: workers count themselves ready, then wait for `go`. */
  pthread_mutex_t lock;
  pthread_cond_t changed;
  long ready;
  int go;
} Shared;

typedef struct {
  Shared *shared;
  long index;
  long runs, mismatches, errors;
  char first[512]; /* the first problem, "" when none */
} Worker;

static void note(Worker *w, const char *what, const char *detail) {
  if (!w->first[0])
    snprintf(w->first, sizeof w->first, "%s%s", what, detail);
}

/* Records a failed status as an error of `w`; says whether there was one. */
static int failed(Worker *w, const char *what, mnemo_status_t status) {
  if (!status)
    return 0;
  ++w->errors;
  note(w, what, mnemo_status_message(status));
  mnemo_status_free(status);
  return 1;
}

/* Prints a failed status after `what` (none when NULL); 1, for main's exit
 * code. */
static int report(const char *what, mnemo_status_t status) {
  fprintf(stderr, "error: %s%s%s (%s)\n", what ? what : "", what ? ": " : "",
          mnemo_status_message(status),
          mnemo_status_code_name(mnemo_status_code(status)));
  mnemo_status_free(status);
  return 1;
}

/* The f16 bits of f, for the normal values fill_element makes. */
static uint16_t float_to_half(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  if ((bits & 0x7fffffffu) == 0)
    return sign;
  uint32_t exponent = ((bits >> 23) & 0xffu) - 127u + 15u;
  return (uint16_t)(sign | (exponent << 10) | ((bits >> 13) & 0x3ffu));
}

/* Writes element i of input `which` of input set c at p. */
static void fill_element(unsigned char *p, mnemo_dtype_t dtype, size_t i,
                         size_t which, int c) {
  size_t k = i * 37u + (size_t)c * 11u + which * 5u;
  float f = (float)((int)(k % 17u) - 8) / 8.0f;
  int64_t n = (int64_t)((i * 7u + (size_t)c + which) % 8u);
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  switch (dtype) {
  case MNEMO_DTYPE_F32:
    memcpy(p, &f, 4);
    break;
  case MNEMO_DTYPE_F64: {
    double d = f;
    memcpy(p, &d, 8);
    break;
  }
  case MNEMO_DTYPE_F16: {
    uint16_t h = float_to_half(f);
    memcpy(p, &h, 2);
    break;
  }
  case MNEMO_DTYPE_BF16: {
    uint16_t h = (uint16_t)(bits >> 16); /* exact: k / 8 has few bits */
    memcpy(p, &h, 2);
    break;
  }
  case MNEMO_DTYPE_I64:
    memcpy(p, &n, 8);
    break;
  case MNEMO_DTYPE_I32: {
    int32_t v = (int32_t)n;
    memcpy(p, &v, 4);
    break;
  }
  case MNEMO_DTYPE_I8:
  case MNEMO_DTYPE_U8:
    *p = (unsigned char)n;
    break;
  case MNEMO_DTYPE_BOOL:
    *p = (unsigned char)((i + (size_t)c) & 1u);
    break;
  default:
    break;
  }
}

static void free_inputs(Input *inputs, size_t count) {
  for (size_t j = 0; j < count; ++j) {
    free(inputs[j].data);
    inputs[j].data = NULL;
  }
}

/* Builds input set c of `function`; 0 when it cannot. */
static int make_inputs(mnemo_model_t *model, size_t function, size_t count,
                       int c, Input *inputs) {
  for (size_t j = 0; j < count; ++j) {
    mnemo_tensor_info_t info;
    mnemo_status_t status = mnemo_model_input_info(model, function, j, &info);
    if (status || info.rank > kMaxRank) {
      mnemo_status_free(status);
      return 0;
    }
    Input *in = &inputs[j];
    in->name = info.name;
    in->dtype = info.dtype;
    in->rank = info.rank;
    size_t elements = 1;
    for (size_t d = 0; d < info.rank; ++d) {
      in->shape[d] = info.shape[d] >= 0
                         ? info.shape[d]
                         : 1 + (kCaseSize[c] - 1) % info.max_shape[d];
      elements *= (size_t)in->shape[d];
    }
    size_t size = mnemo_dtype_size(info.dtype);
    in->data = malloc(elements * size + 1);
    if (!in->data)
      return 0;
    for (size_t i = 0; i < elements; ++i)
      fill_element((unsigned char *)in->data + i * size, info.dtype, i, j, c);
  }
  return 1;
}

/* Binds `inputs` and runs. */
static mnemo_status_t run_once(mnemo_session_t *s, const Input *inputs,
                               size_t count) {
  for (size_t j = 0; j < count; ++j) {
    const Input *in = &inputs[j];
    mnemo_status_t status = mnemo_session_set_input(
        s, in->name, in->dtype, in->shape, in->rank, in->data);
    if (status)
      return status;
  }
  return mnemo_session_run(s);
}

static int same(const mnemo_tensor_t *t, const Tensor *want) {
  if (t->dtype != want->dtype || t->rank != want->rank ||
      t->size_bytes != want->bytes)
    return 0;
  for (size_t d = 0; d < t->rank; ++d)
    if (t->shape[d] != want->shape[d])
      return 0;
  return want->bytes == 0 || memcmp(t->data, want->data, want->bytes) == 0;
}

static void *work(void *arg) {
  Worker *w = arg;
  Shared *sh = w->shared;
  Input inputs[kCases][kMaxInputs];
  memset(inputs, 0, sizeof inputs);
  mnemo_session_t *s = NULL;
  if (!failed(w,
              "session: ", mnemo_session_create(sh->model, sh->function, &s))) {
    if (sh->numSessionThreads) {
      size_t threads =
          sh->sessionThreads[(size_t)w->index % sh->numSessionThreads];
      if (!failed(w, "threads: ", mnemo_session_set_threads(s, threads)) &&
          (mnemo_session_threads(s) == 0 ||
           (threads && mnemo_session_threads(s) != threads))) {
        ++w->errors;
        note(w, "mnemo_session_threads does not give the count set", "");
      }
    }
    for (int c = 0; c < kCases; ++c)
      if (!make_inputs(sh->model, mnemo_session_function(s), sh->numInputs, c,
                       inputs[c])) {
        ++w->errors;
        note(w, "cannot build the inputs", "");
      }
  }
  /* Everyone reports ready, failed or not, and waits for the others. */
  pthread_mutex_lock(&sh->lock);
  ++sh->ready;
  pthread_cond_broadcast(&sh->changed);
  while (!sh->go)
    pthread_cond_wait(&sh->changed, &sh->lock);
  pthread_mutex_unlock(&sh->lock);
  for (long r = 0; s && !w->errors && r < sh->runs; ++r) {
    int c = (int)((w->index + r) % kCases);
    ++w->runs;
    if (failed(w, "run: ", run_once(s, inputs[c], sh->numInputs)))
      break;
    for (size_t o = 0; o < sh->numOutputs; ++o) {
      mnemo_tensor_t t;
      if (failed(w, "output: ", mnemo_session_get_output(s, o, &t)))
        break;
      if (!same(&t, &sh->reference[o][c])) {
        ++w->mismatches;
        char detail[128];
        snprintf(detail, sizeof detail, "%s' of input set %d",
                 sh->outputNames[o], c);
        note(w, "differs from the reference: output '", detail);
      }
    }
  }
  mnemo_session_free(s);
  for (int c = 0; c < kCases; ++c)
    free_inputs(inputs[c], sh->numInputs);
  return NULL;
}

/* The reference outputs: one session on this thread, each input set once. */
static int run_reference(Shared *sh) {
  mnemo_session_t *s = NULL;
  mnemo_status_t status = mnemo_session_create(sh->model, sh->function, &s);
  if (!status)
    status = mnemo_session_set_threads(s, 1);
  if (status) {
    report("session", status);
    mnemo_session_free(s);
    return 0;
  }
  size_t function = mnemo_session_function(s);
  sh->numInputs = mnemo_model_input_count(sh->model, function);
  sh->numOutputs = mnemo_session_output_count(s);
  int ok = sh->numInputs <= kMaxInputs && sh->numOutputs <= kMaxOutputs;
  if (!ok)
    fprintf(stderr, "error: more than %d inputs or outputs\n", kMaxInputs);
  for (size_t o = 0; ok && o < sh->numOutputs; ++o) {
    mnemo_tensor_info_t info;
    if ((status = mnemo_model_output_info(sh->model, function, o, &info)))
      ok = !report("output", status);
    else
      snprintf(sh->outputNames[o], sizeof sh->outputNames[o], "%s", info.name);
  }
  for (int c = 0; ok && c < kCases; ++c) {
    Input inputs[kMaxInputs];
    memset(inputs, 0, sizeof inputs);
    if (!make_inputs(sh->model, function, sh->numInputs, c, inputs)) {
      fprintf(stderr, "error: cannot build the inputs\n");
      ok = 0;
    } else if ((status = run_once(s, inputs, sh->numInputs))) {
      ok = !report("reference run", status);
    }
    for (size_t o = 0; ok && o < sh->numOutputs; ++o) {
      mnemo_tensor_t t;
      if ((status = mnemo_session_get_output(s, o, &t))) {
        ok = !report("reference output", status);
        break;
      }
      Tensor *want = &sh->reference[o][c];
      want->dtype = t.dtype;
      want->rank = t.rank;
      want->bytes = t.size_bytes;
      want->data = malloc(t.size_bytes + 1);
      if (t.rank > kMaxRank || !want->data) {
        fprintf(stderr, "error: output '%s' is too large\n",
                sh->outputNames[o]);
        ok = 0;
        break;
      }
      memcpy(want->shape, t.shape, t.rank * sizeof(int64_t));
      if (t.size_bytes)
        memcpy(want->data, t.data, t.size_bytes);
    }
    free_inputs(inputs, sh->numInputs);
  }
  mnemo_session_free(s);
  return ok;
}

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s MODEL.mnemo [--function NAME] [--threads N] [--runs R] "
          "[--session-threads T1,T2,...]\n",
          argv0);
  return 2;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  static Shared shared = {.lock = PTHREAD_MUTEX_INITIALIZER,
                          .changed = PTHREAD_COND_INITIALIZER};
  Shared *sh = &shared;
  long threads = 8;
  sh->runs = 6;
  for (int i = 1; i < argc; ++i) {
    char *end = NULL;
    if (!strcmp(argv[i], "--function") && i + 1 < argc) {
      sh->function = argv[++i];
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = strtol(argv[++i], &end, 10);
      if (*end || threads < 1 || threads > kMaxThreads)
        return usage(argv[0]);
    } else if (!strcmp(argv[i], "--session-threads") && i + 1 < argc) {
      const char *p = argv[++i];
      do {
        long t = strtol(p, &end, 10);
        if (end == p || t < 0 || t > 1024 ||
            sh->numSessionThreads == kMaxSessionThreads ||
            (*end && *end != ','))
          return usage(argv[0]);
        sh->sessionThreads[sh->numSessionThreads++] = (size_t)t;
        p = end + 1;
      } while (*end);
    } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
      sh->runs = strtol(argv[++i], &end, 10);
      if (*end || sh->runs < 1 || sh->runs > 1000000)
        return usage(argv[0]);
    } else if (argv[i][0] != '-' && !path) {
      path = argv[i];
    } else {
      return usage(argv[0]);
    }
  }
  if (!path)
    return usage(argv[0]);

  mnemo_status_t status = mnemo_model_load_file(path, &sh->model);
  if (status)
    return report(NULL, status);
  char function[128];
  snprintf(function, sizeof function, "%s",
           sh->function ? sh->function
                        : mnemo_model_function_name(sh->model, 0));
  if (!run_reference(sh)) {
    mnemo_model_free(sh->model);
    return 1;
  }

  Worker workers[kMaxThreads];
  pthread_t ids[kMaxThreads];
  memset(workers, 0, sizeof workers);
  long started = 0;
  for (long t = 0; t < threads; ++t) {
    workers[t].shared = sh;
    workers[t].index = t;
    if (pthread_create(&ids[t], NULL, work, &workers[t]) != 0)
      break;
    ++started;
  }
  /* Once every session exists, all start at once. */
  pthread_mutex_lock(&sh->lock);
  while (sh->ready < started)
    pthread_cond_wait(&sh->changed, &sh->lock);
  sh->go = 1;
  pthread_cond_broadcast(&sh->changed);
  pthread_mutex_unlock(&sh->lock);
  /* The sessions hold their own references to the model. */
  mnemo_model_free(sh->model);
  for (long t = 0; t < started; ++t)
    pthread_join(ids[t], NULL);

  long runs = 0, mismatches = 0, errors = 0;
  if (started < threads) {
    fprintf(stderr, "error: started %ld of %ld threads\n", started, threads);
    ++errors;
  }
  for (long t = 0; t < started; ++t) {
    runs += workers[t].runs;
    mismatches += workers[t].mismatches;
    errors += workers[t].errors;
    if (workers[t].first[0])
      fprintf(stderr, "thread %ld: %s\n", t, workers[t].first);
  }
  int ok = !mismatches && !errors && runs == threads * sh->runs;
  printf("%ld sessions x %ld runs of '%s' over one model", threads, sh->runs,
         function);
  if (sh->numSessionThreads) {
    printf(" (session threads");
    for (size_t k = 0; k < sh->numSessionThreads; ++k)
      printf("%s%zu", k ? "," : " ", sh->sessionThreads[k]);
    printf(")");
  }
  printf(": ");
  if (ok)
    printf("%zu outputs x %ld runs match the reference bit for bit\n",
           sh->numOutputs, runs);
  else
    printf("%ld runs, %ld mismatched outputs, %ld errors: FAIL\n", runs,
           mismatches, errors);

  for (size_t o = 0; o < sh->numOutputs; ++o)
    for (int c = 0; c < kCases; ++c)
      free(sh->reference[o][c].data);
  return ok ? 0 : 1;
}

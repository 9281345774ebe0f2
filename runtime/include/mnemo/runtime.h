/*===- mnemo/runtime.h - the Mnemo runtime C API ------------------*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * Loads compiled models (.mnemo artifacts written by mnemoc) and runs their
 * functions on the CPU.
 *
 * Objects:
 *   mnemo_model_t    a loaded artifact: its metadata, weights and code.
 *                    Immutable once loaded; any number of threads may use
 *                    one model at the same time (introspection, creating
 *                    sessions).
 *   mnemo_session_t  the state of one function's execution: bound inputs,
 *                    intermediate and output buffers. A session is used by
 *                    one thread at a time; run many sessions (one per
 *                    thread) at once over one shared model. A run may
 *                    spread parallel loops over worker threads the session
 *                    owns (see Threads).
 *   mnemo_status_t   the result of a fallible call: NULL means success;
 *                    anything else is an error object the caller owns and
 *                    releases with mnemo_status_free.
 *
 * Ownership: every object returned through an `out` parameter belongs to the
 * caller and is released with its _free function. Strings and arrays
 * returned by accessors are owned by the object they came from and stay
 * valid as long as it does (outputs: until the next run, see below).
 *
 * Loading verifies the whole artifact (its layout, the metadata and its
 * checksum, the weights table, the execution plan, the target) before using
 * any of it; a truncated, corrupted or foreign file gives an error status,
 * never a crash. An artifact is native code, though: load only artifacts
 * from a source you trust, as you would a shared library.
 */

#ifndef MNEMO_RUNTIME_H
#define MNEMO_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The artifact ABI version this runtime reads (Artifact.abi_version). */
#define MNEMO_ARTIFACT_ABI_VERSION 3

/*===------------------------------------------------------------------===*
 * Status
 *===------------------------------------------------------------------===*/

typedef enum mnemo_status_code_e {
  MNEMO_STATUS_OK = 0,
  /* The caller passed something wrong: a NULL pointer, an unknown name, a
   * tensor of the wrong dtype or shape, a call out of order. */
  MNEMO_STATUS_INVALID_ARGUMENT = 1,
  /* A file, function, input or output does not exist. */
  MNEMO_STATUS_NOT_FOUND = 2,
  /* A valid artifact this runtime cannot run: another ABI version, another
   * target architecture, a code object the system cannot load. */
  MNEMO_STATUS_INCOMPATIBLE = 3,
  /* Out of memory or out of file descriptors. */
  MNEMO_STATUS_RESOURCE_EXHAUSTED = 4,
  /* The operating system refused a request (read, map, memfd). */
  MNEMO_STATUS_UNAVAILABLE = 5,
  /* A bug: in the runtime, or a kernel that broke its contract. */
  MNEMO_STATUS_INTERNAL = 6,
  /* The artifact is truncated, corrupt or not an artifact at all. */
  MNEMO_STATUS_DATA_LOSS = 7,
  /* Not a code: makes every 32-bit value valid for the type. */
  MNEMO_STATUS_CODE_MAX_ENUM = 0x7fffffff,
} mnemo_status_code_t;

/* NULL is success. A non-NULL status is owned by the caller. */
typedef struct mnemo_status_s *mnemo_status_t;

/* The code of `status`; MNEMO_STATUS_OK for NULL. */
mnemo_status_code_t mnemo_status_code(mnemo_status_t status);

/* A one-line message naming the file, function, tensor or field concerned
 * and the reason, e.g. "model.mnemo: truncated: ...". "" for NULL. Owned by
 * the status. */
const char *mnemo_status_message(mnemo_status_t status);

/* Releases `status`; NULL is allowed. */
void mnemo_status_free(mnemo_status_t status);

/* "OK", "INVALID_ARGUMENT", ..., "DATA_LOSS"; "UNKNOWN" otherwise. */
const char *mnemo_status_code_name(mnemo_status_code_t code);

/*===------------------------------------------------------------------===*
 * Element types
 *===------------------------------------------------------------------===*/

/* Mirrors the artifact schema's DType (same values). Every type is stored in
 * its natural little-endian layout; BOOL is one byte, 0 or 1. */
typedef enum mnemo_dtype_e {
  MNEMO_DTYPE_F32 = 0,
  MNEMO_DTYPE_F16 = 1,
  MNEMO_DTYPE_BF16 = 2,
  MNEMO_DTYPE_F64 = 3,
  MNEMO_DTYPE_I64 = 4,
  MNEMO_DTYPE_I32 = 5,
  MNEMO_DTYPE_I8 = 6,
  MNEMO_DTYPE_U8 = 7,
  MNEMO_DTYPE_BOOL = 8,
  /* OCP FP8 E4M3 ("FN": bias 7, no infinities, largest 448), one byte: a
   * KV cache pool's storage. */
  MNEMO_DTYPE_F8_E4M3 = 9,
  MNEMO_DTYPE_MAX_ENUM = 0x7fffffff, /* not a dtype */
} mnemo_dtype_t;

/* Bytes per element; 0 for a value outside the enum. */
size_t mnemo_dtype_size(mnemo_dtype_t dtype);

/* "f32", "f16", "bf16", "f64", "i64", "i32", "i8", "u8", "bool", "f8e4m3";
 * "unknown" otherwise. */
const char *mnemo_dtype_name(mnemo_dtype_t dtype);

/*===------------------------------------------------------------------===*
 * Models
 *===------------------------------------------------------------------===*/

typedef struct mnemo_model_s mnemo_model_t;

/* Loads the artifact at `path`. The file is mapped read-only and the
 * weights are used in place, never copied; the file must not be modified or
 * truncated while the model lives. A side weights file named by the
 * artifact is resolved relative to the artifact's directory and mapped the
 * same way. On success stores a new model in `*out_model`. */
mnemo_status_t mnemo_model_load_file(const char *path,
                                     mnemo_model_t **out_model);

/* Loads an artifact from memory. The caller keeps `data` alive and
 * unchanged until the model is destroyed (that is, until mnemo_model_free
 * has been called and every session of the model has been freed); the
 * weights are used in place when `data` is 64-byte aligned, otherwise the
 * model keeps an aligned copy. An artifact with a side weights file cannot
 * be loaded from memory (INVALID_ARGUMENT). */
mnemo_status_t mnemo_model_load_memory(const void *data, size_t size,
                                       mnemo_model_t **out_model);

/* Releases the caller's reference; NULL is allowed. Sessions hold their own
 * reference, so the model is destroyed when the last of them is freed. */
void mnemo_model_free(mnemo_model_t *model);

/* The compile target: e.g. "x86_64-unknown-linux-gnu", the CPU name and the
 * feature string mnemoc used. Never NULL (may be ""). */
const char *mnemo_model_target_triple(const mnemo_model_t *model);
const char *mnemo_model_target_cpu(const mnemo_model_t *model);
const char *mnemo_model_target_features(const mnemo_model_t *model);

typedef enum mnemo_provenance_e {
  MNEMO_PROVENANCE_COMPILER = 0,          /* "mnemoc <version>" */
  MNEMO_PROVENANCE_SOURCE = 1,            /* the input file name */
  MNEMO_PROVENANCE_SOURCE_HASH = 2,       /* hex SHA-256 of the input */
  MNEMO_PROVENANCE_MAX_ENUM = 0x7fffffff, /* not a field */
} mnemo_provenance_t;

/* A provenance string; never NULL (may be ""). */
const char *mnemo_model_provenance(const mnemo_model_t *model,
                                   mnemo_provenance_t field);

/* Bytes of weights the model maps. */
uint64_t mnemo_model_weights_size(const mnemo_model_t *model);

/* Replaces the values of weight `name` with a copy of `data` (`dtype`, `shape`
 * of `rank` dims: the weight's own, or MNEMO_STATUS_INVALID_ARGUMENT). Only
 * weights the artifact marks replaceable can be (the factors of a LoRA
 * adapter compiled with `mnemoc --lora-attach`, named
 * "lora.MODULE.A" [r, in] and "lora.MODULE.B" [out, r], the adapter's scaling
 * folded into B); others give MNEMO_STATUS_INCOMPATIBLE, an unknown name
 * MNEMO_STATUS_NOT_FOUND. Sessions and generators created afterwards compute
 * with the new values; those created before keep the values they were
 * created with. Thread-safe with session creation on the same model. */
mnemo_status_t mnemo_model_set_weight(mnemo_model_t *model, const char *name,
                                      mnemo_dtype_t dtype,
                                      const int64_t *shape, size_t rank,
                                      const void *data);

/* Functions are numbered 0 .. count-1 in artifact order. */
size_t mnemo_model_function_count(const mnemo_model_t *model);

/* The name of function `function`; NULL when out of range. */
const char *mnemo_model_function_name(const mnemo_model_t *model,
                                      size_t function);

/* Finds a function by name (NOT_FOUND if absent). */
mnemo_status_t mnemo_model_find_function(const mnemo_model_t *model,
                                         const char *name,
                                         size_t *out_function);

/* Number of inputs / outputs of `function`; 0 when out of range. */
size_t mnemo_model_input_count(const mnemo_model_t *model, size_t function);
size_t mnemo_model_output_count(const mnemo_model_t *model, size_t function);

/* A tensor of a function's signature. `shape` has -1 for a dynamic dim;
 * `max_shape` has the largest value each dim may take (equal to `shape` for
 * a static dim). The arrays have `rank` entries and belong to the model. */
typedef struct mnemo_tensor_info_t {
  const char *name;
  mnemo_dtype_t dtype;
  size_t rank;
  const int64_t *shape;
  const int64_t *max_shape;
} mnemo_tensor_info_t;

/* Describes input / output `index` of `function` (NOT_FOUND when either is
 * out of range). */
mnemo_status_t mnemo_model_input_info(const mnemo_model_t *model,
                                      size_t function, size_t index,
                                      mnemo_tensor_info_t *out_info);
mnemo_status_t mnemo_model_output_info(const mnemo_model_t *model,
                                       size_t function, size_t index,
                                       mnemo_tensor_info_t *out_info);

/* 1 when input `index` of `function` is updated in place by the function
 * (a generation step's KV cache pool; bind it with mnemo_session_set_inout),
 * 0 otherwise or when either is out of range. */
int mnemo_model_input_is_inout(const mnemo_model_t *model, size_t function,
                               size_t index);

/*===------------------------------------------------------------------===*
 * Sessions
 *===------------------------------------------------------------------===*/

typedef struct mnemo_session_s mnemo_session_t;

/* Where a session runs. */
typedef enum mnemo_device_kind_e {
  MNEMO_DEVICE_CPU = 0,
  MNEMO_DEVICE_CUDA = 1,
} mnemo_device_kind_t;

typedef struct mnemo_device_s mnemo_device_t;

/* Opens "cpu", "cuda" or "cuda:0" (this runtime drives CUDA device 0).
 * Opening a CUDA device loads the CUDA driver: without one it fails with
 * MNEMO_STATUS_UNAVAILABLE and a message starting "no CUDA driver". */
mnemo_status_t mnemo_device_open(const char *name,
                                 mnemo_device_t **out_device);
/* NULL is allowed. Sessions do not keep the device. */
void mnemo_device_free(mnemo_device_t *device);
mnemo_device_kind_t mnemo_device_kind(const mnemo_device_t *device);
/* "cpu" or "cuda:0". */
const char *mnemo_device_name(const mnemo_device_t *device);

/* Creates a session that runs `function` (NULL: the model's first
 * function) of `model` on `device` (NULL: the CPU). A model holds code for
 * one kind of device: CPU code on a CUDA device, or PTX on the CPU, is
 * MNEMO_STATUS_INCOMPATIBLE. The session keeps the model alive. */
mnemo_status_t mnemo_session_create_on(mnemo_model_t *model,
                                       const char *function,
                                       const mnemo_device_t *device,
                                       mnemo_session_t **out_session);

/* mnemo_session_create_on the CPU. */
mnemo_status_t mnemo_session_create(mnemo_model_t *model, const char *function,
                                    mnemo_session_t **out_session);

/* Frees the session and the buffers it owns; NULL is allowed. */
void mnemo_session_free(mnemo_session_t *session);

/* The index of the function the session runs. */
size_t mnemo_session_function(const mnemo_session_t *session);

/* Binds input `name` to `rank` dims `shape` of dtype `dtype` at `data`,
 * dense row-major (C order) and aligned to the element size. The dtype and
 * rank must match the signature, static dims exactly, and each dynamic dim
 * d must satisfy 0 < d <= its max. `data` may be NULL only for a tensor
 * with no elements.
 *
 * The session borrows `data` (no copy): it must stay valid and unchanged
 * until the next mnemo_session_run returns. That run consumes the bindings:
 * every input must be set again before the following run. */
mnemo_status_t mnemo_session_set_input(mnemo_session_t *session,
                                       const char *name, mnemo_dtype_t dtype,
                                       const int64_t *shape, size_t rank,
                                       const void *data);

/* Binds an input the function updates in place (mnemo_model_input_is_inout;
 * set_input refuses it, and this refuses the others): as set_input, but the
 * run reads and writes `data`, which the caller keeps writable and does not
 * touch until the run returns. A CUDA session copies it to the device
 * before the run and back after it. */
mnemo_status_t mnemo_session_set_inout(mnemo_session_t *session,
                                       const char *name, mnemo_dtype_t dtype,
                                       const int64_t *shape, size_t rank,
                                       void *data);

/* Runs the function on the bound inputs. Frees the previous run's outputs
 * first. On success the outputs are available until the next run or
 * mnemo_session_free. */
mnemo_status_t mnemo_session_run(mnemo_session_t *session);

/* An output of the last successful run: dense row-major data of `rank` dims
 * `shape`, `size_bytes` bytes. Everything it points to is owned by the
 * session and valid until the next run or mnemo_session_free. `data` may be
 * NULL for a tensor with no elements. */
typedef struct mnemo_tensor_t {
  mnemo_dtype_t dtype;
  size_t rank;
  const int64_t *shape;
  const void *data;
  size_t size_bytes;
} mnemo_tensor_t;

/* Number of outputs of the session's function. */
size_t mnemo_session_output_count(const mnemo_session_t *session);

/* Output `index` (NOT_FOUND when out of range; INVALID_ARGUMENT before a
 * successful run). */
mnemo_status_t mnemo_session_get_output(mnemo_session_t *session, size_t index,
                                        mnemo_tensor_t *out_tensor);

/* Output `name` (NOT_FOUND when there is no such output). */
mnemo_status_t mnemo_session_get_output_by_name(mnemo_session_t *session,
                                                const char *name,
                                                mnemo_tensor_t *out_tensor);

/*===------------------------------------------------------------------===*
 * Threads
 *
 * A model compiled with parallel loops hands them to the runtime, which runs
 * each on the calling thread and its session's worker threads (the calling
 * thread works too). Small loops run inline. Results do not depend on the
 * thread count. A session's workers start at the first run that has a loop
 * worth splitting and are joined by mnemo_session_free; between loops they
 * spin briefly, then sleep. Models without parallel loops (older
 * artifacts among them) run on the calling thread only, whatever the
 * setting.
 *===------------------------------------------------------------------===*/

/* Sets how many threads the session's runs use, the calling thread
 * included: 1 runs everything on the calling thread, 0 (the default for a
 * new session) the number of cores the process may run on. More than 1024
 * is INVALID_ARGUMENT. A new count joins the current workers; not while
 * the session runs. */
mnemo_status_t mnemo_session_set_threads(mnemo_session_t *session,
                                         size_t threads);

/* The threads the session's runs use (0 resolved to the core count); 0 for
 * NULL. */
size_t mnemo_session_threads(const mnemo_session_t *session);

/*===------------------------------------------------------------------===*
 * Profiling
 *
 * A model compiled with profile points (one per region of its code, named
 * in the artifact) reports when each region begins and ends. A session
 * with profiling enabled accumulates, per point, the number of completed
 * regions and their total wall time on the calling thread; runs of the
 * session add up until profiling is enabled again. Time the whole run
 * around mnemo_session_run to compare.
 *===------------------------------------------------------------------===*/

/* Enables (non-zero; the counters restart from zero) or disables (they keep
 * their values) profiling for the session's next runs. */
mnemo_status_t mnemo_session_set_profiling(mnemo_session_t *session,
                                           int enabled);

/* The number of profile points of the model: 0 for a model without them
 * (an older artifact, or code compiled without profiling) and for NULL. */
size_t mnemo_session_profile_count(const mnemo_session_t *session);

/* Point `index`: its name (owned by the model), the regions completed
 * and their total time in milliseconds since profiling was last enabled
 * (0 when it never was). Any of `name`, `calls` and `total_ms` may be NULL.
 * NOT_FOUND when `index` is out of range. */
mnemo_status_t mnemo_session_profile_entry(const mnemo_session_t *session,
                                           size_t index, const char **name,
                                           uint64_t *calls, double *total_ms);

/*===------------------------------------------------------------------===*
 * CUDA
 *
 * A model compiled for a GPU (mnemoc --target=sm_80|sm_90a -o FILE.mnemo)
 * loads like any other; its sessions are created on a CUDA device and run
 * its launch plan there: the plan's buffers are allocated and the weights
 * uploaded when the session is created, and each run copies the inputs in,
 * launches the kernels on the session's own stream and copies the outputs
 * out (mnemo_session_get_output). The CUDA driver is opened at run time
 * (libcuda.so.1, or the library the environment variable MNEMO_CUDA_DRIVER
 * names). Static shapes only for now: a function compiled with dynamic
 * dims cannot run on a GPU yet (compile it with --input-shape).
 *===------------------------------------------------------------------===*/

/* Replays the plan as one CUDA graph (captured by the next run; only the
 * input and output copies stay outside it) or launches kernel by kernel.
 * A plan of more than one kernel starts with the graph where the driver
 * supports graphs. Enabling it without driver support is
 * MNEMO_STATUS_UNAVAILABLE; on a CPU session, INVALID_ARGUMENT. */
mnemo_status_t mnemo_session_set_cuda_graph(mnemo_session_t *session,
                                            int enabled);
/* 1 when the session's runs replay a CUDA graph, else 0. */
int mnemo_session_uses_cuda_graph(const mnemo_session_t *session);

/*===------------------------------------------------------------------===*
 * Generation
 * A generator runs a model's generation steps, the functions `prefill` and
 * `decode` that mnemoc emits for a checkpoint, over a paged KV cache it
 * owns: per layer a key and a value pool of pages of P tokens (mnemoc
 * --kv-page-size, --kv-dtype), made at creation, and the pools
 * a layer keeps besides (DeepSeek's indexer keys, compressor rows and
 * compressed entries; entries of one per R tokens on pages of P entries of
 * their own). Each sequence holds the pages its tokens fill, less those
 * behind the window its layers read when every layer declares one (a
 * sliding window, DeepSeek-V4's raw keys and compressor rows); a
 * sequence's logits are those of the
 * last token it was fed, and equal the logits a plain forward over all of
 * its tokens gives at that position. Sequences join (mnemo_generator_add,
 * one prefill over a ragged batch of prompts) and leave
 * (mnemo_generator_release, pages back to the pool) between steps; a step
 * feeds one token to each of any set of live sequences (one decode call,
 * whatever their lengths; more than the model's --max-batch run in several
 * calls). A call that fails (a token outside the vocabulary, more tokens
 * than the model's --max-seq-len, an exhausted pool, a sequence that is not
 * live) returns an error naming the sequence and leaves every sequence as
 * it was. One thread at a time uses a generator, as a session; it may use
 * several threads for each step (mnemo_generator_set_threads). The pools
 * live in host memory on the CPU, and in device memory on a CUDA device
 * (never copied to the host: the steps update them in place there).
 *===------------------------------------------------------------------===*/

typedef struct mnemo_generator_s mnemo_generator_t;

/* Creates a generator for `model` (which needs functions `prefill` and
 * `decode`: NOT_FOUND otherwise) on `device` (NULL: the CPU; a CUDA device
 * for a model compiled for a GPU target) with pools of `num_pages` pages
 * (each kind of page: of P tokens, of P entries of each rate). On the host
 * a page takes memory when a sequence first writes it; on a CUDA device
 * the pools start with 16 pages and grow as sequences take pages (by half
 * at least, up to `num_pages`, copied on the device before the step that
 * needs them). The generator keeps the model alive. */
mnemo_status_t mnemo_generator_create(mnemo_model_t *model,
                                      const mnemo_device_t *device,
                                      size_t num_pages,
                                      mnemo_generator_t **out_generator);
/* The page size (tokens per page) of `model`'s generation steps, read from
 * their signatures without creating a generator (to size its pool);
 * NOT_FOUND or INCOMPATIBLE as mnemo_generator_create. */
mnemo_status_t mnemo_generator_page_size_of(mnemo_model_t *model,
                                            size_t *out_page_size);
/* Frees the generator, its pools and sequences; NULL is allowed. */
void mnemo_generator_free(mnemo_generator_t *generator);
/* Threads for each step, as mnemo_session_set_threads. */
mnemo_status_t mnemo_generator_set_threads(mnemo_generator_t *generator,
                                           size_t threads);
/* Tokens per page; pages of P tokens not held by a sequence; the
 * vocabulary size (the length of a logits row); the most tokens a sequence
 * may hold. 0 for NULL. */
size_t mnemo_generator_page_size(const mnemo_generator_t *generator);
size_t mnemo_generator_free_pages(const mnemo_generator_t *generator);
size_t mnemo_generator_vocab_size(const mnemo_generator_t *generator);
size_t mnemo_generator_max_length(const mnemo_generator_t *generator);
/* The bytes of the pages the live sequences hold, over every pool (0 for
 * NULL). */
uint64_t mnemo_generator_cache_bytes(const mnemo_generator_t *generator);

/* Adds `count` sequences, sequence i with prompt `prompts[i]` of
 * `lengths[i]` (at least 1) token ids, and runs the prefill over them;
 * stores their ids in `out_ids`. On an error no sequence is added. */
mnemo_status_t mnemo_generator_add(mnemo_generator_t *generator, size_t count,
                                   const int64_t *const *prompts,
                                   const size_t *lengths, uint64_t *out_ids);
/* Feeds token `tokens[i]` to live sequence `ids[i]` for each i (each
 * sequence at most once) and runs one decode step over them. On an error
 * the sequences are as before the call (with more than --max-batch
 * sequences, the batches before the failing one have stepped). */
mnemo_status_t mnemo_generator_step(mnemo_generator_t *generator, size_t count,
                                    const uint64_t *ids,
                                    const int64_t *tokens);
/* Feeds `lengths[i]` (at least 1) tokens `tokens[i]` to live sequence
 * `ids[i]` for each i (each sequence at most once) in one run of the model's
 * `append` step, which mnemoc compiles with --append-step: a prompt
 * appended to a conversation, or a long prompt fed in chunks after
 * mnemo_generator_add of its first part. The sequences' logits are then
 * those of their last tokens. NOT_FOUND without an `append` step; on an
 * error the sequences are as mnemo_generator_step leaves them. */
mnemo_status_t mnemo_generator_append(mnemo_generator_t *generator,
                                      size_t count, const uint64_t *ids,
                                      const int64_t *const *tokens,
                                      const size_t *lengths);
/* 1 when the generator's model has an `append` step, else 0 (0 for NULL). */
int mnemo_generator_can_append(const mnemo_generator_t *generator);
/* The logits (vocab_size floats) of sequence `id`'s last token; owned by the
 * generator, valid until the next add, step or release. */
mnemo_status_t mnemo_generator_logits(const mnemo_generator_t *generator,
                                      uint64_t id, const float **out_logits);
/* The number of tokens sequence `id` holds (prompt and fed tokens). */
mnemo_status_t mnemo_generator_sequence_length(
    const mnemo_generator_t *generator, uint64_t id, size_t *out_length);
/* Ends sequence `id`: its pages return to the pool. NOT_FOUND if it is not
 * live. */
mnemo_status_t mnemo_generator_release(mnemo_generator_t *generator,
                                       uint64_t id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MNEMO_RUNTIME_H */

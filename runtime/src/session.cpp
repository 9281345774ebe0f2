//===- session.cpp - binding inputs, running plans, outputs -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A session lays out, once, a descriptor for every slot of its function:
// inputs and weights first, then one result block per call (the call's
// result descriptors back to back, as the kernel ABI wants), and the
// argument vector of every call pointing into them. A run fills the input
// descriptors and calls the kernels in plan order.
//
// Result buffers are allocated by the kernels and owned by the session,
// reference-counted by their `allocated` pointer (a kernel may return a
// view of an argument, which shares it). A pointer into an input, the
// artifact, the side weights or the loaded code is a view the session does
// not own and never frees; so is MLIR's 0xdeadbeef marker for globals.
// Code with the alloc and free hooks allocates them from the session's
// buffer cache (buffer_cache.h), and the session gives them back there, so
// the next run finds its buffers already faulted in; older code mallocs
// them, and they go back to free().
//
// Around its kernel calls a run installs the session's execution context
// (hooks.h): its thread pool, its buffer cache, and its profile state while
// profiling is on, which the code's hooks use.
//
// A session created on a CUDA device runs the function's GPU plan through
// its executor (cuda/executor.h) instead: the same bindings and outputs,
// the outputs copied into buffers the session owns.
//
//===----------------------------------------------------------------------===//

#include "buffer_cache.h"
#include "call_generated.h"
#include "cuda/executor.h"
#include "descriptor.h"
#include "device.h"
#include "hooks.h"
#include "model.h"
#include "session.h"
#include "status.h"
#include "support/Map.h"
#include "support/Memory.h"
#include "support/String.h"

#include <cstdlib>
#include <cstring>

using namespace mnemo::rt;

namespace {

/// The `allocated` pointer MLIR gives memref.get_global results.
const void *const kGlobalMarker = reinterpret_cast<const void *>(0xdeadbeef);

struct InputBinding {
  const uint8_t *data = nullptr;
  size_t bytes = 0;
  bool set = false;
};

struct OutputState {
  Vector<int64_t> shape; // a copy: an input slot's descriptor changes
                              // with the next set_input
  const void *data = nullptr;
  size_t bytes = 0;
  uint8_t *copy = nullptr; // session-owned dense copy, reused across runs
  size_t copyCapacity = 0;
};

/// "a, b, c" (bounded), for messages.
String inputNames(const FunctionPlan &plan) {
  String s;
  for (const TensorSig &sig : plan.inputs) {
    if (!s.empty())
      s += ", ";
    if (s.size() > 200) {
      s += "...";
      break;
    }
    s += sig.name;
  }
  return s.empty() ? String("none") : s;
}

} // namespace

struct mnemo_session_s {
  mnemo_model_t *model = nullptr;
  size_t functionIndex = 0;
  const FunctionPlan *plan = nullptr;

  Vector<int64_t> words;      // every descriptor
  Vector<size_t> slotOffset;  // word offset of each slot's descriptor
  Vector<size_t> blockOffset; // word offset of each call's result block
  Vector<size_t> blockWords;
  Vector<void *> argv; // every call's argument vector
  Vector<size_t> argvOffset;

  Vector<InputBinding> inputs;
  Vector<void *> slotBuffer; // owned buffer each slot references
  SortedMap<void *, uint32_t> owned; // buffer -> references
  Vector<OutputState> outputs;
  bool haveOutputs = false;

  // Declared before the pool, so that it is destroyed after the pool's
  // workers are joined.
  BufferCachePtr buffers;
  ThreadPool pool; // workers start at the first loop worth splitting
  bool profiling = false;
  ProfileState profile;
  Owned<cuda::Executor> gpu; // on a CUDA device
  Vector<Vector<int64_t>> gpuShapes; // the bound inputs' shapes

  int64_t *descriptor(uint32_t slot) { return &words[slotOffset[slot]]; }

  void layOut();
  mnemo_status_t validateInput(const TensorSig &sig, mnemo_dtype_t dtype,
                               const int64_t *shape, size_t rank,
                               const void *data, size_t *bytes,
                               bool resident = false);
  bool isView(const void *allocated) const;
  void acquire(uint32_t slot);
  void release(uint32_t slot);
  void freeKernelBuffer(void *buffer);
  void releaseAll();
  mnemo_status_t collectOutput(size_t index);
  mnemo_status_t run();
  mnemo_status_t runOnGpu();
};

void mnemo_session_s::layOut() {
  const FunctionPlan &p = *plan;
  slotOffset.assign(p.numSlots(), 0);
  size_t total = 0;
  for (uint32_t slot = 0; slot < p.firstResultSlot(); ++slot) {
    slotOffset[slot] = total;
    total += descriptorWords(p.slotRanks[slot]);
  }
  size_t argvTotal = 0;
  for (const CallPlan &call : p.calls) {
    blockOffset.push_back(total);
    for (uint32_t slot : call.results) {
      slotOffset[slot] = total;
      total += descriptorWords(p.slotRanks[slot]);
    }
    blockWords.push_back(total - blockOffset.back());
    argvOffset.push_back(argvTotal);
    argvTotal += 1 + call.args.size();
  }
  words.assign(total, 0);
  argv.assign(argvTotal, nullptr);
  for (size_t c = 0; c < p.calls.size(); ++c) {
    void **args = &argv[argvOffset[c]];
    args[0] = words.data() + blockOffset[c];
    for (size_t i = 0; i < p.calls[c].args.size(); ++i)
      args[1 + i] = descriptor(p.calls[c].args[i]);
  }
  for (size_t k = 0; k < p.weights.size(); ++k) {
    const WeightInfo &w = model->weights[p.weights[k]];
    auto slot = static_cast<uint32_t>(p.firstWeightSlot() + k);
    fillDescriptor(descriptor(slot), p.slotRanks[slot],
                   model->weightData(p.weights[k]), w.shape.data());
  }
  inputs.assign(p.inputs.size(), InputBinding());
  slotBuffer.assign(p.numSlots(), nullptr);
  outputs.assign(p.outputs.size(), OutputState());
}

mnemo_status_t mnemo_session_s::validateInput(const TensorSig &sig,
                                              mnemo_dtype_t dtype,
                                              const int64_t *shape, size_t rank,
                                              const void *data, size_t *bytes,
                                              bool resident) {
  if (dtype != sig.dtype)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "input '%s': dtype %s, expected %s", sig.name,
                      mnemo_dtype_name(dtype), mnemo_dtype_name(sig.dtype));
  if (rank != sig.shape.size())
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "input '%s': rank %zu, expected %zu", sig.name, rank,
                      sig.shape.size());
  if (rank > 0 && !shape)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT, "input '%s': NULL shape",
                      sig.name);
  uint64_t n = mnemo_dtype_size(dtype);
  for (size_t i = 0; i < rank; ++i) {
    long long d = shape[i];
    if (sig.shape[i] >= 0 && d != sig.shape[i])
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "input '%s': dim %zu is %lld, expected %lld", sig.name,
                        i, d, static_cast<long long>(sig.shape[i]));
    if (sig.shape[i] < 0 && (d < 1 || d > sig.maxShape[i]))
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "input '%s': dim %zu is %lld, expected 1..%lld "
                        "(dynamic)",
                        sig.name, i, d,
                        static_cast<long long>(sig.maxShape[i]));
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n) || n > SIZE_MAX)
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "input '%s': the shape is too large", sig.name);
  }
  if (n > 0 && !data && !resident)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT, "input '%s': NULL data",
                      sig.name);
  if (reinterpret_cast<uintptr_t>(data) % mnemo_dtype_size(dtype) != 0)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "input '%s': data is not aligned to %zu bytes", sig.name,
                      mnemo_dtype_size(dtype));
  *bytes = static_cast<size_t>(n);
  return nullptr;
}

bool mnemo_session_s::isView(const void *allocated) const {
  if (!allocated || allocated == kGlobalMarker || model->ownsAddress(allocated))
    return true;
  auto p = reinterpret_cast<uintptr_t>(allocated);
  for (const InputBinding &input : inputs) {
    auto begin = reinterpret_cast<uintptr_t>(input.data);
    if (input.data && p >= begin && p - begin < input.bytes)
      return true;
  }
  return false;
}

void mnemo_session_s::acquire(uint32_t slot) {
  void *allocated = descriptorAllocated(descriptor(slot));
  if (isView(allocated)) {
    slotBuffer[slot] = nullptr;
    return;
  }
  ++owned[allocated];
  slotBuffer[slot] = allocated;
}

void mnemo_session_s::release(uint32_t slot) {
  void *buffer = slotBuffer[slot];
  slotBuffer[slot] = nullptr;
  if (!buffer)
    return;
  auto it = owned.find(buffer);
  if (it == owned.end() || --it->second > 0)
    return;
  owned.erase(it);
  freeKernelBuffer(buffer);
}

void mnemo_session_s::freeKernelBuffer(void *buffer) {
  // The kernels never mix the hooks with malloc: with the hooks, every
  // buffer they return came from hookAlloc.
  if (model->code.hasAllocHooks)
    freeBuffer(buffer);
  else
    std::free(buffer);
}

void mnemo_session_s::releaseAll() {
  for (auto &entry : owned)
    freeKernelBuffer(entry.first);
  owned.clear();
  slotBuffer.assign(slotBuffer.size(), nullptr);
  haveOutputs = false;
}

mnemo_status_t mnemo_session_s::collectOutput(size_t index) {
  const TensorSig &sig = plan->outputs[index];
  uint32_t slot = plan->outputSlots[index];
  uint32_t rank = plan->slotRanks[slot];
  const int64_t *d = descriptor(slot);
  const int64_t *sizes = descriptorSizes(d);
  size_t elementSize = mnemo_dtype_size(sig.dtype);
  uint64_t n = elementSize;
  for (uint32_t i = 0; i < rank; ++i) {
    if (sizes[i] < 0 || (sig.shape[i] >= 0 && sizes[i] != sig.shape[i]))
      return makeStatus(MNEMO_STATUS_INTERNAL,
                        "function '%s': output '%s': dim %u is %lld, the "
                        "signature says %lld",
                        plan->name, sig.name, i,
                        static_cast<long long>(sizes[i]),
                        static_cast<long long>(sig.shape[i]));
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(sizes[i]), &n) ||
        n > SIZE_MAX / 2)
      return makeStatus(MNEMO_STATUS_INTERNAL,
                        "function '%s': output '%s': the shape is too large",
                        plan->name, sig.name);
  }
  OutputState &out = outputs[index];
  out.shape.assign(sizes, sizes + rank);
  out.bytes = static_cast<size_t>(n);
  out.data = nullptr;
  if (n == 0)
    return nullptr;
  if (!descriptorAligned(d))
    return makeStatus(MNEMO_STATUS_INTERNAL,
                      "function '%s': output '%s': the kernel returned no "
                      "buffer",
                      plan->name, sig.name);
  const int64_t *strides = descriptorStrides(d, rank);
  const auto *first = static_cast<const uint8_t *>(descriptorAligned(d)) +
                      descriptorOffset(d) * static_cast<int64_t>(elementSize);
  // Zero-copy when dense and the buffer outlives the caller's inputs: owned
  // by the session, or part of the model.
  void *allocated = descriptorAllocated(d);
  bool lives = slotBuffer[slot] != nullptr ||
               (allocated && model->ownsAddress(allocated));
  if (lives && isContiguous(sizes, strides, rank)) {
    out.data = first;
    return nullptr;
  }
  if (out.copyCapacity < out.bytes) {
    void *grown = std::realloc(out.copy, out.bytes);
    if (!grown)
      return outOfMemory();
    out.copy = static_cast<uint8_t *>(grown);
    out.copyCapacity = out.bytes;
  }
  copyStrided(first, sizes, strides, rank, elementSize, out.copy);
  out.data = out.copy;
  return nullptr;
}

mnemo_status_t mnemo_session_s::runOnGpu() {
  const FunctionPlan &p = *plan;
  haveOutputs = false;
  Vector<const void *> in(p.inputs.size());
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (!inputs[i].set)
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "input '%s': not set (function '%s')", p.inputs[i].name,
                        p.name);
    in[i] = inputs[i].data;
  }
  MNEMO_RETURN_IF_ERROR(gpu->prepare(gpuShapes));
  Vector<void *> out(p.outputs.size());
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    OutputState &o = outputs[i];
    o.shape = gpu->outputShape(i);
    o.bytes = static_cast<size_t>(gpu->outputBytes(i));
    if (o.copyCapacity < o.bytes) {
      void *grown = std::realloc(o.copy, o.bytes);
      if (!grown)
        return outOfMemory();
      o.copy = static_cast<uint8_t *>(grown);
      o.copyCapacity = o.bytes;
    }
    o.data = o.copy;
    out[i] = o.copy;
  }
  MNEMO_RETURN_IF_ERROR(gpu->run(in.data(), out.data()));
  haveOutputs = true;
  return nullptr;
}

mnemo_status_t mnemo_session_s::run() {
  if (gpu)
    return runOnGpu();
  releaseAll();
  const FunctionPlan &p = *plan;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (!inputs[i].set)
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "input '%s': not set (function '%s')", p.inputs[i].name,
                        p.name);
  // After releaseAll, so that the last run's outputs count as cached.
  buffers->beginRun();
  ExecutionContext context{&pool, profiling ? &profile : nullptr,
                           buffers.get()};
  ScopedExecutionContext scope(&context);
  for (size_t c = 0; c < p.calls.size(); ++c) {
    const CallPlan &call = p.calls[c];
    std::memset(words.data() + blockOffset[c], 0,
                blockWords[c] * sizeof(int64_t));
    callKernel(model->kernels[call.kernel].fn, &argv[argvOffset[c]]);
    for (uint32_t slot : call.results)
      acquire(slot);
    for (uint32_t slot : call.releaseAfter)
      release(slot);
  }
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    if (mnemo_status_t status = collectOutput(i)) {
      releaseAll();
      return status;
    }
  }
  haveOutputs = true;
  return nullptr;
}

extern "C" {

mnemo_status_t mnemo_session_create(mnemo_model_t *model, const char *function,
                                    mnemo_session_t **out_session) {
  return mnemo_session_create_on(model, function, nullptr, out_session);
}

mnemo_status_t mnemo_session_create_on(mnemo_model_t *model,
                                       const char *function,
                                       const mnemo_device_t *device,
                                       mnemo_session_t **out_session) {
  if (!model || !out_session)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_session_create: NULL %s",
                      model ? "out_session" : "model");
  *out_session = nullptr;
  size_t index = 0;
  if (function)
    MNEMO_RETURN_IF_ERROR(mnemo_model_find_function(model, function, &index));
  bool cuda = device && device->kind == MNEMO_DEVICE_CUDA;
  const char *what = model->name.c_str();
  const FunctionPlan &plan = model->functions[index];
  if (*plan.unsupported) // on no device
    return makeStatus(MNEMO_STATUS_UNAVAILABLE, "%s: %s", what,
                      plan.unsupported);
  if (model->ptx && !cuda)
    return makeStatus(MNEMO_STATUS_INCOMPATIBLE,
                      "%s: holds PTX for %s; create the session on a CUDA "
                      "device (mnemo_session_create_on, mnemo-run "
                      "--device=cuda)",
                      what, model->cpu);
  if (!model->ptx && cuda)
    return makeStatus(MNEMO_STATUS_INCOMPATIBLE,
                      "%s: holds code for '%s', not PTX; create the session "
                      "on the CPU (compile with mnemoc --target=sm_90a for "
                      "the GPU)",
                      what, model->triple);
  auto *session = make<mnemo_session_t>();
  if (!session)
    return outOfMemory();
  session->buffers.reset(BufferCache::create());
  if (!session->buffers) {
    destroy(session);
    return outOfMemory();
  }
  retainModel(model);
  session->model = model;
  session->functionIndex = index;
  session->plan = &plan;
  if (cuda) {
    session->inputs.assign(plan.inputs.size(), InputBinding());
    session->gpuShapes.resize(plan.inputs.size());
    session->outputs.assign(plan.outputs.size(), OutputState());
    if (mnemo_status_t status =
            cuda::Executor::create(*model, plan, session->gpu)) {
      mnemo_session_free(session);
      return status;
    }
    session->pool.setThreads(1);
  } else {
    session->layOut();
    session->pool.setThreads(availableCores());
  }
  *out_session = session;
  return nullptr;
}

void mnemo_session_free(mnemo_session_t *session) {
  if (!session)
    return;
  session->releaseAll();
  for (OutputState &out : session->outputs)
    std::free(out.copy);
  mnemo_model_t *model = session->model;
  destroy(session); // joins the workers, then releases the cached buffers
  releaseModel(model);
}

size_t mnemo_session_function(const mnemo_session_t *session) {
  return session ? session->functionIndex : 0;
}

mnemo_status_t mnemo_session_set_threads(mnemo_session_t *session,
                                         size_t threads) {
  if (!session)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_session_set_threads: NULL session");
  if (session->gpu)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_session_set_threads: the session runs on a "
                      "CUDA device; threads are for sessions on the CPU");
  if (threads > kMaxThreads)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_session_set_threads: %zu threads, at most %zu "
                      "(0 = one per core)",
                      threads, kMaxThreads);
  session->pool.setThreads(threads == 0 ? availableCores() : threads);
  return nullptr;
}

size_t mnemo_session_threads(const mnemo_session_t *session) {
  return session ? session->pool.threads() : 0;
}

mnemo_status_t mnemo_session_set_profiling(mnemo_session_t *session,
                                           int enabled) {
  if (!session)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_session_set_profiling: NULL session");
  session->profiling = enabled != 0;
  if (session->profiling)
    session->profile.reset(session->model->profilePoints.size());
  return nullptr;
}

size_t mnemo_session_profile_count(const mnemo_session_t *session) {
  return session ? session->model->profilePoints.size() : 0;
}

mnemo_status_t mnemo_session_profile_entry(const mnemo_session_t *session,
                                           size_t index, const char **name,
                                           uint64_t *calls, double *total_ms) {
  if (!session)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_session_profile_entry: NULL session");
  const Vector<const char *> &points = session->model->profilePoints;
  if (index >= points.size())
    return makeStatus(MNEMO_STATUS_NOT_FOUND,
                      "mnemo_session_profile_entry: the model has %zu "
                      "profile points, no point %zu",
                      points.size(), index);
  // Before profiling was first enabled the state is empty.
  const ProfileState &profile = session->profile;
  bool counted = index < profile.size();
  if (name)
    *name = points[index];
  if (calls)
    *calls = counted ? profile.calls(index) : 0;
  if (total_ms)
    *total_ms = counted ? static_cast<double>(profile.totalNs(index)) / 1e6 : 0;
  return nullptr;
}

/// Binds input `name`; `inPlace` says which of set_input and set_inout
/// the caller used, which must match the input's kind. With `resident`,
/// the input lives in that device memory instead of at `data`.
static mnemo_status_t bindInput(mnemo_session_t *session, const char *name,
                                mnemo_dtype_t dtype, const int64_t *shape,
                                size_t rank, const void *data, bool inPlace,
                                const cuda::DeviceMemory *resident = nullptr) {
  const char *api =
      inPlace ? "mnemo_session_set_inout" : "mnemo_session_set_input";
  if (!session || !name)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT, "%s: NULL %s", api,
                      session ? "name" : "session");
  const FunctionPlan &p = *session->plan;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const TensorSig &sig = p.inputs[i];
    if (std::strcmp(sig.name, name) != 0)
      continue;
    if (sig.inPlace != inPlace)
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        sig.inPlace
                            ? "input '%s': function '%s' updates it in place; "
                              "bind writable memory with "
                              "mnemo_session_set_inout"
                            : "input '%s': function '%s' only reads it; bind "
                              "it with mnemo_session_set_input",
                        sig.name, p.name);
    size_t bytes = 0;
    MNEMO_RETURN_IF_ERROR(session->validateInput(sig, dtype, shape, rank, data,
                                                 &bytes, resident != nullptr));
    if (resident && !session->gpu)
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "input '%s': device memory bound to a session that "
                        "does not run on a CUDA device",
                        sig.name);
    if (resident)
      MNEMO_RETURN_IF_ERROR(session->gpu->bindResident(
          i, resident->address(), resident->size()));
    else if (session->gpu && session->gpu->isResident(i))
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "input '%s': resident on the device; it cannot be "
                        "bound to host memory",
                        sig.name);
    auto slot = static_cast<uint32_t>(i);
    if (session->gpu)
      session->gpuShapes[i].assign(shape, shape + rank);
    else
      fillDescriptor(session->descriptor(slot), static_cast<uint32_t>(rank),
                     data, shape);
    session->inputs[i] = {static_cast<const uint8_t *>(data), bytes, true};
    return nullptr;
  }
  return makeStatus(MNEMO_STATUS_NOT_FOUND,
                    "input '%s': function '%s' has no such input (inputs: %s)",
                    name, p.name, inputNames(p).c_str());
}

mnemo_status_t mnemo_session_set_input(mnemo_session_t *session,
                                       const char *name, mnemo_dtype_t dtype,
                                       const int64_t *shape, size_t rank,
                                       const void *data) {
  return bindInput(session, name, dtype, shape, rank, data, false);
}

mnemo_status_t mnemo_session_set_inout(mnemo_session_t *session,
                                       const char *name, mnemo_dtype_t dtype,
                                       const int64_t *shape, size_t rank,
                                       void *data) {
  return bindInput(session, name, dtype, shape, rank, data, true);
}

mnemo_status_t mnemo_session_run(mnemo_session_t *session) {
  if (!session)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_session_run: NULL session");
  mnemo_status_t status = session->run();
  // The run consumed the bindings, whatever its outcome.
  session->inputs.assign(session->inputs.size(), InputBinding());
  return status;
}

size_t mnemo_session_output_count(const mnemo_session_t *session) {
  return session ? session->plan->outputs.size() : 0;
}

mnemo_status_t mnemo_session_get_output(mnemo_session_t *session, size_t index,
                                        mnemo_tensor_t *out_tensor) {
  if (!session || !out_tensor)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_session_get_output: NULL %s",
                      session ? "out_tensor" : "session");
  const FunctionPlan &p = *session->plan;
  if (index >= p.outputs.size())
    return makeStatus(MNEMO_STATUS_NOT_FOUND,
                      "function '%s' has %zu outputs, no output %zu", p.name,
                      p.outputs.size(), index);
  if (!session->haveOutputs)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "output '%s': the session has not run successfully",
                      p.outputs[index].name);
  const OutputState &out = session->outputs[index];
  out_tensor->dtype = p.outputs[index].dtype;
  out_tensor->rank = out.shape.size();
  out_tensor->shape = out.shape.data();
  out_tensor->data = out.data;
  out_tensor->size_bytes = out.bytes;
  return nullptr;
}

mnemo_status_t mnemo_session_get_output_by_name(mnemo_session_t *session,
                                                const char *name,
                                                mnemo_tensor_t *out_tensor) {
  if (!session || !name)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_session_get_output_by_name: NULL %s",
                      session ? "name" : "session");
  const FunctionPlan &p = *session->plan;
  for (size_t i = 0; i < p.outputs.size(); ++i)
    if (std::strcmp(p.outputs[i].name, name) == 0)
      return mnemo_session_get_output(session, i, out_tensor);
  return makeStatus(MNEMO_STATUS_NOT_FOUND,
                    "output '%s': function '%s' has no such output", name,
                    p.name);
}

} // extern "C"

bool mnemo::rt::runsOnCuda(const mnemo_session_t *session) {
  return session && session->gpu;
}

mnemo_status_t mnemo::rt::bindResidentInput(mnemo_session_t *session,
                                            const char *name,
                                            mnemo_dtype_t dtype,
                                            const int64_t *shape, size_t rank,
                                            const cuda::DeviceMemory &memory) {
  return bindInput(session, name, dtype, shape, rank, nullptr, true, &memory);
}

extern "C" {

mnemo_status_t mnemo_session_set_cuda_graph(mnemo_session_t *session,
                                            int enabled) {
  if (!session || !session->gpu)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_session_set_cuda_graph: %s",
                      session ? "the session runs on the CPU"
                              : "NULL session");
  return session->gpu->setGraph(enabled != 0);
}

int mnemo_session_uses_cuda_graph(const mnemo_session_t *session) {
  return session && session->gpu && session->gpu->usesGraph() ? 1 : 0;
}

} // extern "C"

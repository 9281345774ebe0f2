//===- executor.cpp - runs a GPU plan on a CUDA device ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A session on a CUDA device: loads the model's PTX with cuModuleLoadData,
// allocates the plan's buffers once, and per run copies the inputs in,
// launches every kernel of the plan in order with its recorded grid, block
// and arguments, and copies the outputs out, all on the executor's own
// stream. A plan of several kernels is captured once as a CUDA graph, which
// each run replays. The runtime does no arithmetic of its own: every kernel
// comes from the compiler.
//
//===----------------------------------------------------------------------===//

#include "cuda/executor.h"

#include "status.h"

#include <cstdio>
#include <cstring>
#include <new>

using namespace mnemo::rt;
using namespace mnemo::rt::cuda;

namespace {

/// Checks every launch of `plan` against its kernel's `.entry` declaration
/// in the PTX `text`: one argument per parameter, 8 bytes for buffers and
/// i64 (.u64/.b64/.s64 parameters), 4 for i32 and f32. cuLaunchKernel trusts
/// the argument array, so a plan that does not match its kernels is refused.
mnemo_status_t checkKernelParameters(const mnemo_model_t &model,
                                     const std::string &text,
                                     const GpuPlan &plan) {
  const char *path = model.name.c_str();
  for (const GpuLaunch &l : plan.launches) {
    const char *kernel = model.kernels[l.kernel].symbol;
    std::string head = std::string(".entry ") + kernel + "(";
    size_t at = text.find(head);
    size_t end = at == std::string::npos ? at : text.find(')', at);
    if (end == std::string::npos)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: the plan launches '%s', which the PTX does not "
                        "define",
                        path, kernel);
    std::vector<unsigned> sizes;
    for (size_t p = text.find(".param", at); p != std::string::npos && p < end;
         p = text.find(".param", p + 6)) {
      std::string type = text.substr(p + 7, 4);
      sizes.push_back(type == ".u64" || type == ".b64" || type == ".s64" ? 8
                      : type == ".u32" || type == ".b32" || type == ".s32" ||
                              type == ".f32"
                          ? 4
                          : 0);
    }
    bool match = sizes.size() == l.args.size();
    for (size_t i = 0; match && i < sizes.size(); ++i) {
      GpuArgument::Kind k = l.args[i].kind;
      unsigned want = k == GpuArgument::Kind::Buffer ||
                              k == GpuArgument::Kind::I64
                          ? 8
                          : 4;
      match = sizes[i] == want;
    }
    if (!match)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: kernel '%s': the plan's %zu arguments do not "
                        "match the %zu parameters its PTX declares (count "
                        "or size)",
                        path, kernel, l.args.size(), sizes.size());
  }
  return nullptr;
}

/// Dynamic shared memory above 48 KiB needs the kernel's opt-in, up to the
/// device's limit.
mnemo_status_t allowSharedMemory(const Driver &d, const char *path,
                                 const char *kernel, const GpuLaunch &l,
                                 CUfunction fn) {
  constexpr unsigned kDefaultLimit = 48 * 1024;
  constexpr int kMaxDynamicShared = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_...
  constexpr int kMaxSharedOptin = 97;   // CU_DEVICE_ATTRIBUTE_MAX_SHARED_...
  if (l.sharedBytes <= kDefaultLimit)
    return nullptr;
  int limit = 0;
  CUresult r = d.deviceGetAttribute(&limit, kMaxSharedOptin, d.device);
  if (r != 0)
    return driverError(d, r, path, "cuDeviceGetAttribute");
  if (l.sharedBytes > static_cast<unsigned>(limit))
    return makeStatus(MNEMO_STATUS_UNAVAILABLE,
                      "%s: kernel '%s' needs %u bytes of shared memory; this "
                      "GPU allows %d",
                      path, kernel, l.sharedBytes, limit);
  if ((r = d.funcSetAttribute(fn, kMaxDynamicShared,
                              static_cast<int>(l.sharedBytes))) != 0)
    return driverError(d, r, (std::string(path) + ": " + kernel).c_str(),
                       "cuFuncSetAttribute");
  return nullptr;
}

/// Encodes tensor map `m` of the already allocated `source` into the
/// device buffer `ptr` (the verifier checked that it stays inside its
/// source).
mnemo_status_t encodeTensorMap(const Driver &d, const char *path,
                               const GpuTensorMap &m, CUdeviceptr source,
                               CUdeviceptr ptr) {
  if (!d.tensorMapEncodeTiled)
    return makeStatus(MNEMO_STATUS_UNAVAILABLE,
                      "%s: the plan uses TMA tensor maps, which this CUDA "
                      "driver cannot encode (cuTensorMapEncodeTiled needs "
                      "CUDA 12)",
                      path);
  // CUtensorMapDataType and CUtensorMapSwizzle values.
  int dtype = m.dtype == MNEMO_DTYPE_BF16 ? 9 : m.dtype == MNEMO_DTYPE_F16 ? 6
                                                                           : 7;
  int swizzle = m.swizzle == 128 ? 3 : m.swizzle == 64 ? 2
                                   : m.swizzle == 32  ? 1
                                                      : 0;
  std::vector<unsigned> ones(m.dims.size(), 1);
  alignas(64) unsigned char map[128];
  CUresult r = d.tensorMapEncodeTiled(
      map, dtype, static_cast<unsigned>(m.dims.size()),
      reinterpret_cast<void *>(source), m.dims.data(), m.strides.data(),
      m.box.data(), ones.data(), /*interleave=*/0, swizzle,
      /*l2Promotion: 128 bytes*/ 2, /*oobFill: zeros*/ 0);
  if (r != 0)
    return driverError(d, r, path, "cuTensorMapEncodeTiled");
  if ((r = d.memcpyHtoD(ptr, map, sizeof(map))) != 0)
    return driverError(d, r, path, "cuMemcpyHtoD");
  return nullptr;
}

} // namespace

Executor::~Executor() {
  if (!driver)
    return;
  dropGraph();
  if (stream)
    driver->streamDestroy(stream);
  for (CUdeviceptr b : buffers)
    if (b)
      driver->memFree(b);
  if (module)
    driver->moduleUnload(module);
}

void Executor::dropGraph() {
  if (graphExec)
    driver->graphs.execDestroy(graphExec);
  if (graph)
    driver->graphs.destroy(graph);
  graphExec = nullptr;
  graph = nullptr;
}

/// Puts the plan's device work on the executor's stream: the temporaries
/// poisoned (NaN bytes, so that nothing can depend on a previous run), then
/// every kernel in plan order.
mnemo_status_t Executor::enqueuePlan() {
  const Driver &d = *driver;
  CUresult r = 0;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const GpuBuffer &b = plan.buffers[i];
    if (b.kind != GpuBuffer::Kind::Temporary)
      continue;
    if ((r = d.memsetD8Async(buffers[i], 0xff, b.bytes, stream)) != 0)
      return driverError(d, r, path.c_str(), "cuMemsetD8Async");
  }
  for (size_t k = 0; k < plan.launches.size(); ++k) {
    const GpuLaunch &l = plan.launches[k];
    r = d.launchKernel(kernels[k], l.grid[0], l.grid[1], l.grid[2],
                       l.block[0], l.block[1], l.block[2], l.sharedBytes,
                       stream, argPointers[k].data(), nullptr);
    if (r != 0)
      return driverError(
          d, r, (path + ": " + model.kernels[l.kernel].symbol).c_str(),
          "cuLaunchKernel");
  }
  return nullptr;
}

/// Records enqueuePlan into a CUDA graph and instantiates it. A launch the
/// driver refuses is reported as it would be without a graph.
mnemo_status_t Executor::captureGraph() {
  const Driver &d = *driver;
  const Driver::Graphs &g = d.graphs;
  constexpr int kThreadLocal = 1; // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
  CUresult r = g.beginCapture(stream, kThreadLocal);
  if (r != 0)
    return driverError(d, r, path.c_str(), "cuStreamBeginCapture");
  mnemo_status_t status = enqueuePlan();
  // Capture always ends, so that the stream is usable whatever happened.
  r = g.endCapture(stream, &graph);
  if (!status && r != 0)
    status = driverError(d, r, path.c_str(), "cuStreamEndCapture");
  if (!status && (r = g.instantiate(&graphExec, graph, 0)) != 0)
    status = driverError(d, r, path.c_str(), "cuGraphInstantiateWithFlags");
  if (status)
    dropGraph();
  return status;
}

mnemo_status_t Executor::load(const FunctionPlan &function) {
  const char *what = path.c_str();
  // NUL-terminated for cuModuleLoadData.
  std::string text(model.ptxCode, model.ptxSize);
  MNEMO_RETURN_IF_ERROR(checkKernelParameters(model, text, plan));
  MNEMO_RETURN_IF_ERROR(getDriver(&driver));
  const Driver &d = *driver;
  CUresult r = d.moduleLoadData(&module, text.c_str());
  if (r != 0)
    return driverError(d, r, what, "cuModuleLoadData");
  for (const GpuLaunch &l : plan.launches) {
    const char *name = model.kernels[l.kernel].symbol;
    CUfunction fn = nullptr;
    if ((r = d.moduleGetFunction(&fn, module, name)) != 0)
      return driverError(d, r, (path + ": " + name).c_str(),
                         "cuModuleGetFunction");
    MNEMO_RETURN_IF_ERROR(allowSharedMemory(d, what, name, l, fn));
    kernels.push_back(fn);
  }
  for (const GpuBuffer &b : plan.buffers) {
    CUdeviceptr ptr = 0;
    if ((r = d.memAlloc(&ptr, b.bytes ? b.bytes : 1)) != 0)
      return driverError(d, r, what, "cuMemAlloc");
    buffers.push_back(ptr);
    if (b.kind == GpuBuffer::Kind::Weight &&
        (r = d.memcpyHtoD(ptr, model.weights[b.index].data, b.bytes)) != 0)
      return driverError(d, r, what, "cuMemcpyHtoD");
  }
  // Buffers keep their addresses for the executor's life (inputs are copied
  // into them at each run), so each map is encoded once.
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].kind == GpuBuffer::Kind::TensorMap)
      MNEMO_RETURN_IF_ERROR(encodeTensorMap(d, what, plan.buffers[i].map,
                                            buffers[plan.buffers[i].map.source],
                                            buffers[i]));
  for (const GpuLaunch &l : plan.launches) {
    std::vector<uint64_t> &values = argValues.emplace_back(l.args.size());
    std::vector<void *> &pointers = argPointers.emplace_back();
    for (size_t i = 0; i < l.args.size(); ++i) {
      const GpuArgument &a = l.args[i];
      if (a.kind == GpuArgument::Kind::Buffer)
        values[i] = buffers[a.value];
      else if (a.kind == GpuArgument::Kind::I64)
        values[i] = a.value;
      else { // 4-byte scalars: the low bytes of the slot
        uint32_t v = static_cast<uint32_t>(a.value);
        std::memcpy(&values[i], &v, sizeof(v));
      }
      pointers.push_back(&values[i]);
    }
  }
  for (const TensorSig &sig : function.outputs) {
    uint64_t n = mnemo_dtype_size(sig.dtype);
    for (int64_t dim : sig.shape)
      n *= static_cast<uint64_t>(dim); // static: checked by the verifier
    outputBytes.push_back(n);
  }
  constexpr unsigned kNonBlocking = 1; // CU_STREAM_NON_BLOCKING
  if ((r = d.streamCreate(&stream, kNonBlocking)) != 0)
    return driverError(d, r, what, "cuStreamCreate");
  // A graph pays where launches are many and short (decode): one replay
  // instead of a driver call per kernel. Captured at the first run.
  useGraph = d.hasGraphs() && plan.launches.size() > 1;
  return nullptr;
}

mnemo_status_t Executor::create(const mnemo_model_t &model,
                                const FunctionPlan &plan,
                                std::unique_ptr<Executor> &out) {
  std::unique_ptr<Executor> e(new (std::nothrow) Executor(model, plan));
  if (!e)
    return outOfMemory();
  MNEMO_RETURN_IF_ERROR(e->load(plan));
  out = std::move(e);
  return nullptr;
}

mnemo_status_t Executor::setGraph(bool enabled) {
  if (enabled && !driver->hasGraphs())
    return makeStatus(MNEMO_STATUS_UNAVAILABLE,
                      "%s: this CUDA driver has no graph API (CUDA 11.4 "
                      "and later)",
                      path.c_str());
  if (!enabled)
    dropGraph();
  useGraph = enabled;
  return nullptr;
}

mnemo_status_t Executor::run(const void *const *inputs,
                             void *const *outputs) {
  // Makes the context current on this thread.
  MNEMO_RETURN_IF_ERROR(getDriver(&driver));
  const Driver &d = *driver;
  const char *what = path.c_str();
  CUresult r = 0;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const GpuBuffer &b = plan.buffers[i];
    if (b.kind == GpuBuffer::Kind::Input &&
        (r = d.memcpyHtoDAsync(buffers[i], inputs[b.index], b.bytes,
                               stream)) != 0)
      return driverError(d, r, what, "cuMemcpyHtoDAsync");
  }
  if (useGraph && !graphExec)
    MNEMO_RETURN_IF_ERROR(captureGraph());
  if (useGraph) {
    if ((r = d.graphs.launch(graphExec, stream)) != 0)
      return driverError(d, r, what, "cuGraphLaunch");
  } else {
    MNEMO_RETURN_IF_ERROR(enqueuePlan());
  }
  for (size_t i = 0; i < plan.outputBuffers.size(); ++i) {
    r = d.memcpyDtoHAsync(outputs[i], buffers[plan.outputBuffers[i]],
                          outputBytes[i], stream);
    if (r != 0)
      return driverError(d, r, what, "cuMemcpyDtoHAsync");
  }
  // A kernel's fault shows here.
  if ((r = d.streamSynchronize(stream)) != 0)
    return driverError(d, r, what, "cuStreamSynchronize");
  return nullptr;
}

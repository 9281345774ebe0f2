//===- program.cpp - runs a PTX module's launch plan ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The C API's mnemo_cuda_program_*: loads the PTX with cuModuleLoadData,
// allocates the plan's buffers once, and per run copies the inputs in,
// launches every kernel of the plan in order with its recorded grid, block
// and arguments, and copies the outputs out, all on the program's own
// stream. A plan of several kernels is captured once as a CUDA graph, which
// each run replays. The runtime does no arithmetic
// of its own: every kernel comes from the compiler.
//
//===----------------------------------------------------------------------===//

#include "cuda/driver.h"
#include "cuda/ptx_plan.h"

#include "region.h"
#include "status.h"
#include "verify.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

using namespace mnemo::rt;
using namespace mnemo::rt::cuda;

struct mnemo_cuda_program_s {
  const Driver *driver = nullptr;
  std::string path;
  PlanFunction plan;
  CUmodule module = nullptr;
  std::vector<CUfunction> kernels;   // per launch
  std::vector<CUdeviceptr> buffers;  // per plan buffer (inputs too)
  // Per launch: the argument values and the pointers cuLaunchKernel reads.
  // Buffers keep their addresses for the program's life, so both are built
  // once.
  std::vector<std::vector<uint64_t>> argValues;
  std::vector<std::vector<void *>> argPointers;
  CUstream stream = nullptr;       // every copy and launch of this program
  CUgraph graph = nullptr;         // the plan captured from `stream`
  CUgraphExec graphExec = nullptr; // ... and instantiated: runs replay it
  bool useGraph = false; // capture at the next run unless graphExec is set

  void dropGraph() {
    if (graphExec)
      driver->graphs.execDestroy(graphExec);
    if (graph)
      driver->graphs.destroy(graph);
    graphExec = nullptr;
    graph = nullptr;
  }

  ~mnemo_cuda_program_s() {
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
};

namespace {

/// A mapped file, released with its owner.
struct MappedFile {
  Region region;
  ~MappedFile() { releaseRegion(region); }
};

/// A verified artifact holding PTX, and its weights segment.
struct Artifact {
  const ::mnemo::artifact::Artifact *root = nullptr;
  MappedFile side;                 // the side weights file, when there is one
  const uint8_t *segment = nullptr; // the weights segment
  uint64_t segmentSize = 0;
};

mnemo_status_t openArtifact(const char *path, const Region &file,
                            Artifact &out) {
  const uint8_t *data = file.data;
  uint64_t metadataEnd = 0;
  MNEMO_RETURN_IF_ERROR(verifyHeader(path, data, file.size, &out.root,
                                     &metadataEnd, /*ptx=*/true));
  const ::mnemo::artifact::Artifact &a = *out.root;
  if (!a.code() || a.code()->size() == 0)
    return makeStatus(MNEMO_STATUS_DATA_LOSS, "%s: the artifact has no code",
                      path);
  const uint8_t *region = data;
  uint64_t regionSize = file.size, minOffset = metadataEnd;
  if (a.weights_file() && a.weights_file()->size() > 0) {
    // A file name beside the artifact: no absolute path, no directories
    // above it, no embedded NUL.
    const std::string side = a.weights_file()->str();
    if (side.find('\0') != std::string::npos || side[0] == '/' ||
        side == ".." || side.rfind("../", 0) == 0 ||
        side.find("/../") != std::string::npos ||
        (side.size() >= 3 && side.compare(side.size() - 3, 3, "/..") == 0))
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weights_file '%s' is not a path beside the "
                        "artifact",
                        path, side.c_str());
    std::string dir = path;
    size_t slash = dir.find_last_of('/');
    dir = slash == std::string::npos ? "" : dir.substr(0, slash + 1);
    std::string sidePath = dir + side;
    MNEMO_RETURN_IF_ERROR(
        mapFile(sidePath.c_str(), "weights file", out.side.region));
    region = out.side.region.data;
    regionSize = out.side.region.size;
    minOffset = 0;
  }
  MNEMO_RETURN_IF_ERROR(verifyWeightsSegment(path, a.weights_offset(),
                                             a.weights_size(), regionSize,
                                             minOffset));
  out.segment = region + a.weights_offset();
  out.segmentSize = a.weights_size();
  return nullptr;
}

/// The bytes of weight buffer `b`, checked against the artifact's table.
mnemo_status_t weightBytes(const char *path, const Artifact &artifact,
                           const PlanBuffer &b, const uint8_t **out) {
  const auto *weights = artifact.root ? artifact.root->weights() : nullptr;
  if (!weights)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: the plan reads weight %llu, which only an "
                      "artifact holds",
                      path, static_cast<unsigned long long>(b.index));
  if (b.index >= weights->size())
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: the plan reads weight %llu of %u", path,
                      static_cast<unsigned long long>(b.index),
                      weights->size());
  const auto *w = weights->Get(static_cast<flatbuffers::uoffset_t>(b.index));
  if (!w || w->size() != b.bytes || w->offset() > artifact.segmentSize ||
      w->size() > artifact.segmentSize - w->offset())
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: weight %llu: its bytes do not match the plan's "
                      "buffer or lie outside the weights segment",
                      path, static_cast<unsigned long long>(b.index));
  *out = artifact.segment + w->offset();
  return nullptr;
}

/// Checks every launch of `plan` against its kernel's `.entry` declaration
/// in the PTX `text`: one argument per parameter, 8 bytes for buffers and
/// i64 (.u64/.b64/.s64 parameters), 4 for i32 and f32. cuLaunchKernel trusts
/// the argument array, so a plan that does not match its kernels is refused.
mnemo_status_t checkKernelParameters(const char *path, const std::string &text,
                                     const PlanFunction &plan) {
  for (const PlanLaunch &l : plan.launches) {
    std::string head = ".entry " + l.kernel + "(";
    size_t at = text.find(head);
    size_t end = at == std::string::npos ? at : text.find(')', at);
    if (end == std::string::npos)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: the plan launches '%s', which the PTX does not "
                        "define",
                        path, l.kernel.c_str());
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
      PlanArgument::Kind k = l.args[i].kind;
      unsigned want = k == PlanArgument::Kind::Buffer ||
                              k == PlanArgument::Kind::I64
                          ? 8
                          : 4;
      match = sizes[i] == want;
    }
    if (!match)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: the plan's arguments of '%s' (%zu) do not match "
                        "its parameters (%zu)",
                        path, l.kernel.c_str(), l.args.size(), sizes.size());
  }
  return nullptr;
}

/// Dynamic shared memory above 48 KiB needs the kernel's opt-in, up to the
/// device's limit.
mnemo_status_t allowSharedMemory(const Driver &d, const char *path,
                                 const PlanLaunch &l, CUfunction fn) {
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
                      path, l.kernel.c_str(), l.sharedBytes, limit);
  if ((r = d.funcSetAttribute(fn, kMaxDynamicShared,
                              static_cast<int>(l.sharedBytes))) != 0)
    return driverError(d, r, (std::string(path) + ": " + l.kernel).c_str(),
                       "cuFuncSetAttribute");
  return nullptr;
}

/// Encodes the tensor map `b` of the already allocated `source` into the
/// device buffer `ptr`.
mnemo_status_t encodeTensorMap(const Driver &d, const char *path,
                               const PlanBuffer &b, CUdeviceptr source,
                               uint64_t sourceBytes, CUdeviceptr ptr) {
  if (!d.tensorMapEncodeTiled)
    return makeStatus(MNEMO_STATUS_UNAVAILABLE,
                      "%s: the plan uses TMA tensor maps, which this CUDA "
                      "driver cannot encode (cuTensorMapEncodeTiled needs "
                      "CUDA 12)",
                      path);
  const PlanTensorMap &m = b.map;
  // The map must stay inside its source buffer (dims >= 1, checked when
  // the plan was read).
  uint64_t span = 0, term = 0;
  bool overflow =
      __builtin_mul_overflow(m.dims[0], mnemo_dtype_size(m.dtype), &span);
  for (size_t i = 1; i < m.dims.size() && !overflow; ++i)
    overflow = __builtin_mul_overflow(m.dims[i] - 1, m.strides[i - 1], &term) ||
               __builtin_add_overflow(span, term, &span);
  if (overflow || span > sourceBytes)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: a tensor map spans %llu bytes of a %llu-byte "
                      "buffer",
                      path, static_cast<unsigned long long>(span),
                      static_cast<unsigned long long>(sourceBytes));
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

/// Fills each launch's argument array from the plan and the buffers.
void buildArguments(mnemo_cuda_program_s &p) {
  for (const PlanLaunch &l : p.plan.launches) {
    std::vector<uint64_t> &values = p.argValues.emplace_back(l.args.size());
    std::vector<void *> &pointers = p.argPointers.emplace_back();
    for (size_t i = 0; i < l.args.size(); ++i) {
      const PlanArgument &a = l.args[i];
      if (a.kind == PlanArgument::Kind::Buffer)
        values[i] = p.buffers[a.buffer];
      else if (a.kind == PlanArgument::Kind::I64)
        values[i] = a.bits;
      else { // 4-byte scalars: the low bytes of the slot
        uint32_t v = static_cast<uint32_t>(a.bits);
        std::memcpy(&values[i], &v, sizeof(v));
      }
      pointers.push_back(&values[i]);
    }
  }
}

/// Puts the plan's device work on the program's stream: the temporaries
/// poisoned (NaN bytes, so that nothing can depend on a previous run), then
/// every kernel in plan order.
mnemo_status_t enqueuePlan(mnemo_cuda_program_s &p) {
  const Driver &d = *p.driver;
  CUresult r = 0;
  for (size_t i = 0; i < p.plan.buffers.size(); ++i) {
    const PlanBuffer &b = p.plan.buffers[i];
    if (b.weight || b.tensorMap || b.input)
      continue;
    if ((r = d.memsetD8Async(p.buffers[i], 0xff, b.bytes, p.stream)) != 0)
      return driverError(d, r, p.path.c_str(), "cuMemsetD8Async");
  }
  for (size_t k = 0; k < p.plan.launches.size(); ++k) {
    const PlanLaunch &l = p.plan.launches[k];
    r = d.launchKernel(p.kernels[k], l.grid[0], l.grid[1], l.grid[2],
                       l.block[0], l.block[1], l.block[2], l.sharedBytes,
                       p.stream, p.argPointers[k].data(), nullptr);
    if (r != 0)
      return driverError(d, r, (p.path + ": " + l.kernel).c_str(),
                         "cuLaunchKernel");
  }
  return nullptr;
}

/// Records enqueuePlan into a CUDA graph and instantiates it. A launch the
/// driver refuses is reported as it would be without a graph.
mnemo_status_t captureGraph(mnemo_cuda_program_s &p) {
  const Driver &d = *p.driver;
  const Driver::Graphs &g = d.graphs;
  const char *path = p.path.c_str();
  constexpr int kThreadLocal = 1; // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
  CUresult r = g.beginCapture(p.stream, kThreadLocal);
  if (r != 0)
    return driverError(d, r, path, "cuStreamBeginCapture");
  mnemo_status_t status = enqueuePlan(p);
  // Capture always ends, so that the stream is usable whatever happened.
  r = g.endCapture(p.stream, &p.graph);
  if (!status && r != 0)
    status = driverError(d, r, path, "cuStreamEndCapture");
  if (!status && (r = g.instantiate(&p.graphExec, p.graph, 0)) != 0)
    status = driverError(d, r, path, "cuGraphInstantiateWithFlags");
  if (status)
    p.dropGraph();
  return status;
}

mnemo_status_t load(const char *path, const char *function,
                    mnemo_cuda_program_s &p) {
  // Mapped, not read: an artifact's weights are uploaded from the mapping.
  MappedFile file;
  MNEMO_RETURN_IF_ERROR(mapFile(path, "model", file.region));
  // A .mnemo artifact (identifier at bytes 8..12) holding PTX: verified
  // (checksum, ABI, code format) like any artifact; its code is the PTX.
  Artifact artifact;
  std::string text; // NUL-terminated for cuModuleLoadData
  const Region &f = file.region;
  if (f.size >= 12 && std::memcmp(f.data + 8, "MNA1", 4) == 0) {
    MNEMO_RETURN_IF_ERROR(openArtifact(path, f, artifact));
    text.assign(reinterpret_cast<const char *>(artifact.root->code()->data()),
                artifact.root->code()->size());
  } else {
    text.assign(reinterpret_cast<const char *>(f.data), f.size);
  }
  std::vector<PlanFunction> plans;
  MNEMO_RETURN_IF_ERROR(parsePtxPlans(path, text, plans));
  size_t chosen = 0;
  if (function) {
    chosen = plans.size();
    for (size_t i = 0; i < plans.size(); ++i)
      if (plans[i].name == function)
        chosen = i;
    if (chosen == plans.size())
      return makeStatus(MNEMO_STATUS_NOT_FOUND, "%s: no function '%s'", path,
                        function);
  }
  p.plan = std::move(plans[chosen]);
  p.path = path;
  if (!p.plan.unsupported.empty())
    return makeStatus(MNEMO_STATUS_UNAVAILABLE, "%s",
                      p.plan.unsupported.c_str());
  MNEMO_RETURN_IF_ERROR(checkKernelParameters(path, text, p.plan));
  // The weights, checked against the artifact before the driver is needed.
  std::vector<const uint8_t *> weights(p.plan.buffers.size(), nullptr);
  for (size_t i = 0; i < weights.size(); ++i)
    if (p.plan.buffers[i].weight)
      MNEMO_RETURN_IF_ERROR(
          weightBytes(path, artifact, p.plan.buffers[i], &weights[i]));
  MNEMO_RETURN_IF_ERROR(getDriver(&p.driver));
  const Driver &d = *p.driver;
  CUresult r = d.moduleLoadData(&p.module, text.c_str());
  if (r != 0)
    return driverError(d, r, path, "cuModuleLoadData");
  for (const PlanLaunch &l : p.plan.launches) {
    CUfunction fn = nullptr;
    if ((r = d.moduleGetFunction(&fn, p.module, l.kernel.c_str())) != 0)
      return driverError(d, r, (p.path + ": " + l.kernel).c_str(),
                         "cuModuleGetFunction");
    MNEMO_RETURN_IF_ERROR(allowSharedMemory(d, path, l, fn));
    p.kernels.push_back(fn);
  }
  for (const PlanBuffer &b : p.plan.buffers) {
    CUdeviceptr ptr = 0;
    if ((r = d.memAlloc(&ptr, b.bytes ? b.bytes : 1)) != 0)
      return driverError(d, r, path, "cuMemAlloc");
    p.buffers.push_back(ptr);
    const uint8_t *bytes = weights[p.buffers.size() - 1];
    if (bytes && (r = d.memcpyHtoD(ptr, bytes, b.bytes)) != 0)
      return driverError(d, r, path, "cuMemcpyHtoD");
  }
  // Buffers keep their addresses for the program's life (inputs are copied
  // into them at each run), so each map is encoded once.
  for (size_t i = 0; i < p.plan.buffers.size(); ++i)
    if (p.plan.buffers[i].tensorMap)
      MNEMO_RETURN_IF_ERROR(
          encodeTensorMap(d, path, p.plan.buffers[i],
                          p.buffers[p.plan.buffers[i].map.source],
                          p.plan.buffers[p.plan.buffers[i].map.source].bytes,
                          p.buffers[i]));
  buildArguments(p);
  constexpr unsigned kNonBlocking = 1; // CU_STREAM_NON_BLOCKING
  if ((r = d.streamCreate(&p.stream, kNonBlocking)) != 0)
    return driverError(d, r, path, "cuStreamCreate");
  // A graph pays where launches are many and short (decode): one replay
  // instead of a driver call per kernel. Captured at the first run.
  p.useGraph = d.hasGraphs() && p.plan.launches.size() > 1;
  return nullptr;
}

mnemo_status_t info(const mnemo_cuda_program_t *p, bool input, size_t index,
                    mnemo_tensor_info_t *out) {
  const auto &list = input ? p->plan.inputs : p->plan.outputs;
  if (index >= list.size())
    return makeStatus(MNEMO_STATUS_NOT_FOUND, "%s: no %s %zu", p->path.c_str(),
                      input ? "input" : "output", index);
  const PlanTensor &t = list[index];
  out->name = t.name.c_str();
  out->dtype = t.dtype;
  out->rank = t.shape.size();
  out->shape = t.shape.data();
  out->max_shape = t.shape.data();
  return nullptr;
}

} // namespace

extern "C" {

mnemo_status_t mnemo_cuda_program_load_file(const char *path,
                                            const char *function,
                                            mnemo_cuda_program_t **out) {
  if (!out || !path)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_cuda_program_load_file: null argument");
  *out = nullptr;
  std::unique_ptr<mnemo_cuda_program_s> p(new (std::nothrow)
                                              mnemo_cuda_program_s);
  if (!p)
    return outOfMemory();
  MNEMO_RETURN_IF_ERROR(load(path, function, *p));
  *out = p.release();
  return nullptr;
}

void mnemo_cuda_program_free(mnemo_cuda_program_t *program) {
  delete program;
}

size_t mnemo_cuda_program_input_count(const mnemo_cuda_program_t *p) {
  return p->plan.inputs.size();
}

size_t mnemo_cuda_program_output_count(const mnemo_cuda_program_t *p) {
  return p->plan.outputs.size();
}

mnemo_status_t mnemo_cuda_program_input_info(const mnemo_cuda_program_t *p,
                                             size_t index,
                                             mnemo_tensor_info_t *out) {
  return info(p, true, index, out);
}

mnemo_status_t mnemo_cuda_program_output_info(const mnemo_cuda_program_t *p,
                                              size_t index,
                                              mnemo_tensor_info_t *out) {
  return info(p, false, index, out);
}

mnemo_status_t mnemo_cuda_program_set_graph(mnemo_cuda_program_t *p,
                                            int enabled) {
  if (!p)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_cuda_program_set_graph: null program");
  if (enabled && !p->driver->hasGraphs())
    return makeStatus(MNEMO_STATUS_UNAVAILABLE,
                      "%s: this CUDA driver has no graph API (CUDA 11.4 "
                      "and later)",
                      p->path.c_str());
  if (!enabled)
    p->dropGraph();
  p->useGraph = enabled != 0;
  return nullptr;
}

int mnemo_cuda_program_uses_graph(const mnemo_cuda_program_t *p) {
  return p && p->useGraph ? 1 : 0;
}

mnemo_status_t mnemo_cuda_program_run(mnemo_cuda_program_t *p,
                                      const void *const *inputs,
                                      void *const *outputs) {
  // Makes the context current on this thread.
  MNEMO_RETURN_IF_ERROR(getDriver(&p->driver));
  const Driver &d = *p->driver;
  const char *what = p->path.c_str();
  CUresult r = 0;
  for (size_t i = 0; i < p->plan.buffers.size(); ++i) {
    const PlanBuffer &b = p->plan.buffers[i];
    if (b.input && (r = d.memcpyHtoDAsync(p->buffers[i], inputs[b.index],
                                          b.bytes, p->stream)) != 0)
      return driverError(d, r, what, "cuMemcpyHtoDAsync");
  }
  if (p->useGraph && !p->graphExec)
    MNEMO_RETURN_IF_ERROR(captureGraph(*p));
  if (p->useGraph) {
    if ((r = d.graphs.launch(p->graphExec, p->stream)) != 0)
      return driverError(d, r, what, "cuGraphLaunch");
  } else {
    MNEMO_RETURN_IF_ERROR(enqueuePlan(*p));
  }
  for (size_t i = 0; i < p->plan.outputs.size(); ++i) {
    r = d.memcpyDtoHAsync(outputs[i], p->buffers[p->plan.outputBuffers[i]],
                          p->plan.outputs[i].bytes, p->stream);
    if (r != 0)
      return driverError(d, r, what, "cuMemcpyDtoHAsync");
  }
  // A kernel's fault shows here.
  if ((r = d.streamSynchronize(p->stream)) != 0)
    return driverError(d, r, what, "cuStreamSynchronize");
  return nullptr;
}

} // extern "C"

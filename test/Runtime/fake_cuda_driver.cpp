//===- fake_cuda_driver.cpp - a CUDA driver stand-in for tests --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The driver API entry points the CUDA executor looks up, on host memory,
// so that the executor's own logic (buffers, the per-program stream, graph
// capture and replay, error paths) is tested where no GPU is. Kernels are
// not run: a launch only logs its kernel's name. Loaded through the
// environment variable MNEMO_CUDA_DRIVER.
//
//   stderr            one line per module load, stream, capture, launch,
//                     graph replay, asynchronous copy and synchronization
//   MNEMO_FAKE_CUDA_FAIL=NAME
//                     the entry point NAME (e.g. cuLaunchKernel) fails with
//                     CUDA_ERROR_INVALID_VALUE
//   MNEMO_FAKE_CUDA_VERSION=N
//                     cuDriverGetVersion's answer (default 13000, CUDA 13.0)
//   MNEMO_FAKE_CUDA_MEMORY=BYTES
//                     cuMemAlloc of more than BYTES fails with
//                     CUDA_ERROR_OUT_OF_MEMORY
//   MNEMO_FAKE_CUDA_CAPABILITY=MN
//                     the device's compute capability M.N (default 90)
//
// cuModuleLoadData logs what it is given: "elf" (a binary) or "ptx";
// MNEMO_FAKE_CUDA_FAIL=cuModuleLoadData.elf refuses binaries only
// (CUDA_ERROR_NO_BINARY_FOR_GPU).
//
// Built twice: with the graph entry points and cuLaunchKernelEx, and
// without them (MNEMO_FAKE_CUDA_NO_GRAPHS) as an older driver.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1; // CUDA_ERROR_INVALID_VALUE
constexpr CUresult kOutOfMemory = 2;  // CUDA_ERROR_OUT_OF_MEMORY
constexpr CUresult kNoBinaryForGpu = 209; // CUDA_ERROR_NO_BINARY_FOR_GPU

/// Whether the entry point `name` is asked to fail; logs the failure.
bool fails(const char *name) {
  const char *which = std::getenv("MNEMO_FAKE_CUDA_FAIL");
  if (!which || std::strcmp(which, name) != 0)
    return false;
  std::fprintf(stderr, "fake-cuda: %s fails\n", name);
  return true;
}

/// One stream; while capturing, its work goes into `captured`.
struct Stream {
  bool capturing = false;
  std::vector<std::string> captured;
};

struct Graph {
  std::vector<std::string> nodes;
};

/// Logs work put on `stream`, or records it while the stream captures.
void enqueue(void *stream, const std::string &what) {
  auto *s = static_cast<Stream *>(stream);
  if (s && s->capturing)
    s->captured.push_back(what);
  else
    std::fprintf(stderr, "fake-cuda: %s%s\n", what.c_str(),
                 s ? "" : " (default stream)");
}

/// A loaded module: the names of the functions taken from it (a function
/// handle is its kernel's name, for the launch log), freed with it.
struct Module {
  std::vector<std::unique_ptr<std::string>> functions;
};

} // namespace

extern "C" {

CUresult cuInit(unsigned) { return fails("cuInit") ? kInvalidValue : kSuccess; }
CUresult cuDeviceGet(int *device, int) {
  *device = 0;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int) {
  static int context;
  *ctx = &context;
  return kSuccess;
}
CUresult cuCtxSetCurrent(void *) { return kSuccess; }
CUresult cuGetErrorString(CUresult result, const char **text) {
  *text = result == kInvalidValue  ? "invalid argument"
          : result == kOutOfMemory ? "out of memory"
                                   : "unknown error";
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  constexpr int kCapabilityMajor = 75, kCapabilityMinor = 76;
  if (attribute == kCapabilityMajor || attribute == kCapabilityMinor) {
    const char *env = std::getenv("MNEMO_FAKE_CUDA_CAPABILITY");
    int capability = env ? std::atoi(env) : 90;
    *value = attribute == kCapabilityMajor ? capability / 10 : capability % 10;
    return kSuccess;
  }
  *value = 232448; // the shared-memory opt-in limit of an H100/H200
  return kSuccess;
}

CUresult cuModuleLoadData(void **module, const void *image) {
  if (fails("cuModuleLoadData"))
    return kInvalidValue;
  bool elf = std::strncmp(static_cast<const char *>(image),
                          "\x7f"
                          "ELF",
                          4) == 0;
  if (elf && fails("cuModuleLoadData.elf"))
    return kNoBinaryForGpu;
  std::fprintf(stderr, "fake-cuda: cuModuleLoadData %s\n", elf ? "elf" : "ptx");
  *module = new Module;
  return kSuccess;
}
CUresult cuModuleUnload(void *module) {
  delete static_cast<Module *>(module);
  return kSuccess;
}
CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
  auto &functions = static_cast<Module *>(module)->functions;
  functions.push_back(std::make_unique<std::string>(name));
  *fn = functions.back()->data();
  return kSuccess;
}
CUresult cuFuncSetAttribute(void *, int, int) { return kSuccess; }

CUresult cuMemAlloc_v2(uint64_t *ptr, size_t bytes) {
  if (fails("cuMemAlloc_v2"))
    return kInvalidValue;
  // A device of MNEMO_FAKE_CUDA_MEMORY bytes refuses larger allocations.
  if (const char *limit = std::getenv("MNEMO_FAKE_CUDA_MEMORY");
      limit && bytes > std::strtoull(limit, nullptr, 10)) {
    std::fprintf(stderr, "fake-cuda: cuMemAlloc %zu: out of memory\n", bytes);
    return kOutOfMemory;
  }
  *ptr = reinterpret_cast<uint64_t>(std::malloc(bytes));
  return *ptr ? kSuccess : kOutOfMemory;
}
CUresult cuMemFree_v2(uint64_t ptr) {
  std::free(reinterpret_cast<void *>(ptr));
  return kSuccess;
}
CUresult cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return kSuccess;
}
CUresult cuMemcpyDtoD_v2(uint64_t dst, uint64_t src, size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(dst),
              reinterpret_cast<const void *>(src), bytes);
  std::fprintf(stderr, "fake-cuda: cuMemcpyDtoD %zu\n", bytes);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t bytes,
                              void *stream) {
  if (fails("cuMemcpyHtoDAsync_v2"))
    return kInvalidValue;
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  enqueue(stream, "cuMemcpyHtoDAsync " + std::to_string(bytes));
  return kSuccess;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t bytes,
                              void *stream) {
  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  enqueue(stream, "cuMemcpyDtoHAsync " + std::to_string(bytes));
  return kSuccess;
}
CUresult cuMemsetD8Async(uint64_t dst, unsigned char value, size_t bytes,
                         void *stream) {
  std::memset(reinterpret_cast<void *>(dst), value, bytes);
  enqueue(stream, "cuMemsetD8Async " + std::to_string(bytes));
  return kSuccess;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned, unsigned, unsigned, unsigned, void *stream,
                        void **, void **) {
  if (fails("cuLaunchKernel"))
    return kInvalidValue;
  enqueue(stream, std::string("launch ") + static_cast<const char *>(fn) +
                      " grid " + std::to_string(gx) + " " +
                      std::to_string(gy) + " " + std::to_string(gz));
  return kSuccess;
}

CUresult cuDriverGetVersion(int *version) {
  const char *env = std::getenv("MNEMO_FAKE_CUDA_VERSION");
  *version = env ? std::atoi(env) : 13000;
  return kSuccess;
}

#ifndef MNEMO_FAKE_CUDA_NO_GRAPHS
/// cuda.h's CUlaunchAttribute and CUlaunchConfig.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int value;
    void *align;
  } value;
};
struct LaunchConfig {
  unsigned gx, gy, gz, bx, by, bz, shared;
  void *stream;
  LaunchAttribute *attributes;
  unsigned numAttributes;
};

/// Logged as cuLaunchKernel, with " programmatic" for
/// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (6) set.
CUresult cuLaunchKernelEx(const LaunchConfig *c, void *fn, void **, void **) {
  if (fails("cuLaunchKernelEx"))
    return kInvalidValue;
  std::string attributes;
  for (unsigned i = 0; i < c->numAttributes; ++i)
    attributes += c->attributes[i].id == 6 && c->attributes[i].value.value
                      ? " programmatic"
                      : " attribute " + std::to_string(c->attributes[i].id);
  enqueue(c->stream, std::string("launch ") + static_cast<const char *>(fn) +
                         " grid " + std::to_string(c->gx) + " " +
                         std::to_string(c->gy) + " " + std::to_string(c->gz) +
                         attributes);
  return kSuccess;
}
#endif

CUresult cuTensorMapEncodeTiled(void *map, int, unsigned rank, void *,
                                const uint64_t *, const uint64_t *,
                                const unsigned *, const unsigned *, int, int,
                                int, int) {
  std::fprintf(stderr, "fake-cuda: cuTensorMapEncodeTiled rank %u\n", rank);
  std::memset(map, 0, 128);
  return kSuccess;
}

CUresult cuStreamCreate(void **stream, unsigned flags) {
  if (fails("cuStreamCreate"))
    return kInvalidValue;
  std::fprintf(stderr, "fake-cuda: cuStreamCreate flags %u\n", flags);
  *stream = new Stream;
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *stream) {
  std::fprintf(stderr, "fake-cuda: cuStreamDestroy\n");
  delete static_cast<Stream *>(stream);
  return kSuccess;
}
CUresult cuStreamSynchronize(void *) {
  if (fails("cuStreamSynchronize"))
    return kInvalidValue;
  std::fprintf(stderr, "fake-cuda: cuStreamSynchronize\n");
  return kSuccess;
}

#ifndef MNEMO_FAKE_CUDA_NO_GRAPHS
CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  if (fails("cuStreamBeginCapture_v2"))
    return kInvalidValue;
  std::fprintf(stderr, "fake-cuda: cuStreamBeginCapture mode %d\n", mode);
  auto *s = static_cast<Stream *>(stream);
  s->capturing = true;
  s->captured.clear();
  return kSuccess;
}
CUresult cuStreamEndCapture(void *stream, void **graph) {
  auto *s = static_cast<Stream *>(stream);
  s->capturing = false;
  std::fprintf(stderr, "fake-cuda: cuStreamEndCapture %zu nodes\n",
               s->captured.size());
  *graph = new Graph{std::move(s->captured)};
  return kSuccess;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long) {
  if (fails("cuGraphInstantiateWithFlags"))
    return kInvalidValue;
  *exec = new Graph(*static_cast<Graph *>(graph));
  return kSuccess;
}
CUresult cuGraphLaunch(void *exec, void *) {
  const auto &nodes = static_cast<Graph *>(exec)->nodes;
  std::fprintf(stderr, "fake-cuda: cuGraphLaunch %zu nodes\n", nodes.size());
  return kSuccess;
}
CUresult cuGraphExecDestroy(void *exec) {
  delete static_cast<Graph *>(exec);
  return kSuccess;
}
CUresult cuGraphDestroy(void *graph) {
  std::fprintf(stderr, "fake-cuda: cuGraphDestroy\n");
  delete static_cast<Graph *>(graph);
  return kSuccess;
}
#endif

} // extern "C"

//===- driver.h - the CUDA driver API, loaded at run time -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The runtime builds and runs without CUDA: the driver library is opened
// with dlopen on first use, and only the few entry points the executor
// needs are looked up. Declarations follow the driver API's C ABI (cuda.h);
// no CUDA header is needed to build.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_CUDA_DRIVER_H
#define MNEMO_RUNTIME_CUDA_DRIVER_H

#include "mnemo/runtime.h"

#include <cstddef>
#include <cstdint>

namespace mnemo::rt::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

/// cuLaunchKernelEx's configuration (cuda.h's CUlaunchAttribute and
/// CUlaunchConfig, 12.0 and later): one attribute, its 64-byte value union
/// 8-byte aligned.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
    void *align;
  } value;
};
static_assert(sizeof(LaunchAttribute) == 72, "cuda.h's CUlaunchAttribute");
/// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.
constexpr int kLaunchAttributeProgrammaticSerialization = 6;

struct LaunchConfig {
  unsigned gridX, gridY, gridZ, blockX, blockY, blockZ, sharedBytes;
  CUstream stream;
  LaunchAttribute *attributes;
  unsigned numAttributes;
};
static_assert(sizeof(LaunchConfig) == 56, "cuda.h's CUlaunchConfig");

struct Driver {
  CUresult (*init)(unsigned flags);
  CUresult (*deviceGet)(CUdevice *device, int ordinal);
  CUresult (*primaryCtxRetain)(CUcontext *ctx, CUdevice device);
  CUresult (*ctxSetCurrent)(CUcontext ctx);
  CUresult (*moduleLoadData)(CUmodule *module, const void *image);
  CUresult (*moduleUnload)(CUmodule module);
  CUresult (*moduleGetFunction)(CUfunction *fn, CUmodule module,
                                const char *name);
  CUresult (*memAlloc)(CUdeviceptr *ptr, size_t bytes);
  CUresult (*memFree)(CUdeviceptr ptr);
  CUresult (*memcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
  CUresult (*memcpyDtoD)(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
  CUresult (*launchKernel)(CUfunction fn, unsigned gridX, unsigned gridY,
                           unsigned gridZ, unsigned blockX, unsigned blockY,
                           unsigned blockZ, unsigned sharedBytes,
                           CUstream stream, void **params, void **extra);
  CUresult (*streamCreate)(CUstream *stream, unsigned flags);
  CUresult (*streamDestroy)(CUstream stream);
  CUresult (*streamSynchronize)(CUstream stream);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes,
                              CUstream stream);
  CUresult (*memcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes,
                              CUstream stream);
  CUresult (*memsetD8Async)(CUdeviceptr dst, unsigned char value,
                            size_t bytes, CUstream stream);
  CUresult (*getErrorString)(CUresult result, const char **text);
  CUresult (*funcSetAttribute)(CUfunction fn, int attribute, int value);
  CUresult (*deviceGetAttribute)(int *value, int attribute, CUdevice device);
  /// CUDA 12 and later; null with an older driver (only plans holding
  /// tensor maps need it).
  CUresult (*tensorMapEncodeTiled)(void *map, int dtype, unsigned rank,
                                   void *address, const uint64_t *dims,
                                   const uint64_t *strides,
                                   const unsigned *box,
                                   const unsigned *elementStrides,
                                   int interleave, int swizzle,
                                   int l2Promotion, int oobFill) = nullptr;
  /// Launches with attributes (CUDA 12.0 and later); null with an older
  /// driver.
  CUresult (*launchKernelEx)(const LaunchConfig *config, CUfunction fn,
                             void **params, void **extra) = nullptr;
  /// The driver's CUDA version (1000 x major + 10 x minor).
  int version = 0;
  /// Whether kernels marked programmatic are launched so (programmatic
  /// dependent launch): a driver of CUDA 12.3 or later, whose graph
  /// capture keeps the launches' programmatic edges, and
  /// MNEMO_CUDA_PROGRAMMATIC_LAUNCH not 0.
  bool programmaticLaunch = false;
  /// CUDA graphs (CUDA 11.4 and later); all null unless the driver has
  /// every one, and then programs launch kernel by kernel.
  struct Graphs {
    CUresult (*beginCapture)(CUstream stream, int mode) = nullptr;
    CUresult (*endCapture)(CUstream stream, CUgraph *graph) = nullptr;
    CUresult (*instantiate)(CUgraphExec *exec, CUgraph graph,
                            unsigned long long flags) = nullptr;
    CUresult (*launch)(CUgraphExec exec, CUstream stream) = nullptr;
    CUresult (*execDestroy)(CUgraphExec exec) = nullptr;
    CUresult (*destroy)(CUgraph graph) = nullptr;
  } graphs;
  bool hasGraphs() const { return graphs.launch != nullptr; }
  CUdevice device = 0;
  /// The primary context of device 0, current on the calling thread after
  /// getDriver.
  CUcontext context = nullptr;
};

/// The driver, loaded and initialized once per process (device 0's primary
/// context). The library is libcuda.so.1, or the path in the environment
/// variable MNEMO_CUDA_DRIVER. Without it: MNEMO_STATUS_UNAVAILABLE, "no
/// CUDA driver: ...".
mnemo_status_t getDriver(const Driver **out);

/// An error status for a failed driver call: "<what>: <call> failed: <text>".
mnemo_status_t driverError(const Driver &driver, CUresult result,
                           const char *what, const char *call);

} // namespace mnemo::rt::cuda

#endif // MNEMO_RUNTIME_CUDA_DRIVER_H

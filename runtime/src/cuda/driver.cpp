//===- driver.cpp - the CUDA driver API, loaded at run time -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "cuda/driver.h"

#include "status.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <pthread.h>

using namespace mnemo::rt;
using namespace mnemo::rt::cuda;

namespace {

struct Loaded {
  Driver driver;
  mnemo_status_t error = nullptr; // kept for every later caller
};

/// The driver, loaded once for the process's life (pthread_once rather than
/// a guarded static, which needs the C++ runtime).
Loaded loaded;
pthread_once_t loadOnce = PTHREAD_ONCE_INIT;

template <typename F>
bool lookup(void *library, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(library, name));
  return fn != nullptr;
}

mnemo_status_t load(Driver &d) {
  const char *path = std::getenv("MNEMO_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return makeStatus(MNEMO_STATUS_UNAVAILABLE, "no CUDA driver: %s",
                      why ? why : path);
  }
  // The _v2 names are the driver API's current 64-bit entry points.
  bool ok = lookup(library, "cuInit", d.init) &&
            lookup(library, "cuDeviceGet", d.deviceGet) &&
            lookup(library, "cuDevicePrimaryCtxRetain", d.primaryCtxRetain) &&
            lookup(library, "cuCtxSetCurrent", d.ctxSetCurrent) &&
            lookup(library, "cuModuleLoadData", d.moduleLoadData) &&
            lookup(library, "cuModuleUnload", d.moduleUnload) &&
            lookup(library, "cuModuleGetFunction", d.moduleGetFunction) &&
            lookup(library, "cuMemAlloc_v2", d.memAlloc) &&
            lookup(library, "cuMemFree_v2", d.memFree) &&
            lookup(library, "cuMemcpyHtoD_v2", d.memcpyHtoD) &&
            lookup(library, "cuMemcpyDtoD_v2", d.memcpyDtoD) &&
            lookup(library, "cuLaunchKernel", d.launchKernel) &&
            lookup(library, "cuStreamCreate", d.streamCreate) &&
            lookup(library, "cuStreamDestroy_v2", d.streamDestroy) &&
            lookup(library, "cuStreamSynchronize", d.streamSynchronize) &&
            lookup(library, "cuMemcpyHtoDAsync_v2", d.memcpyHtoDAsync) &&
            lookup(library, "cuMemcpyDtoHAsync_v2", d.memcpyDtoHAsync) &&
            lookup(library, "cuMemsetD8Async", d.memsetD8Async) &&
            lookup(library, "cuGetErrorString", d.getErrorString) &&
            lookup(library, "cuFuncSetAttribute", d.funcSetAttribute) &&
            lookup(library, "cuDeviceGetAttribute", d.deviceGetAttribute);
  // Optional (null when missing): only tensor-map plans (sm_90a) need it.
  if (ok)
    lookup(library, "cuTensorMapEncodeTiled", d.tensorMapEncodeTiled);
  // Optional: programmatic dependent launch (below).
  CUresult (*driverGetVersion)(int *version) = nullptr;
  if (ok && lookup(library, "cuLaunchKernelEx", d.launchKernelEx) &&
      lookup(library, "cuDriverGetVersion", driverGetVersion) &&
      driverGetVersion(&d.version) == 0) {
    const char *env = getenv("MNEMO_CUDA_PROGRAMMATIC_LAUNCH");
    d.programmaticLaunch = d.version >= 12030 && !(env && !strcmp(env, "0"));
  }
  // Optional as a set: without all of them programs launch one by one.
  Driver::Graphs g;
  if (ok && lookup(library, "cuStreamBeginCapture_v2", g.beginCapture) &&
      lookup(library, "cuStreamEndCapture", g.endCapture) &&
      lookup(library, "cuGraphInstantiateWithFlags", g.instantiate) &&
      lookup(library, "cuGraphLaunch", g.launch) &&
      lookup(library, "cuGraphExecDestroy", g.execDestroy) &&
      lookup(library, "cuGraphDestroy", g.destroy))
    d.graphs = g;
  if (!ok)
    return makeStatus(MNEMO_STATUS_UNAVAILABLE,
                      "no CUDA driver: %s lacks the driver API entry points",
                      path);
  CUdevice &device = d.device;
  CUresult r = d.init(0);
  if (r == 0)
    r = d.deviceGet(&device, 0);
  if (r != 0)
    return makeStatus(MNEMO_STATUS_UNAVAILABLE,
                      "no CUDA device: the driver's initialization failed "
                      "(error %d)",
                      r);
  if ((r = d.primaryCtxRetain(&d.context, device)) != 0)
    return driverError(d, r, "CUDA device 0", "cuDevicePrimaryCtxRetain");
  return nullptr;
}

} // namespace

mnemo_status_t mnemo::rt::cuda::getDriver(const Driver **out) {
  pthread_once(&loadOnce, [] { loaded.error = load(loaded.driver); });
  *out = nullptr;
  if (loaded.error)
    return makeStatus(mnemo_status_code(loaded.error), "%s",
                      mnemo_status_message(loaded.error));
  CUresult r = loaded.driver.ctxSetCurrent(loaded.driver.context);
  if (r != 0)
    return driverError(loaded.driver, r, "CUDA device 0", "cuCtxSetCurrent");
  *out = &loaded.driver;
  return nullptr;
}

mnemo_status_t mnemo::rt::cuda::driverError(const Driver &driver,
                                             CUresult result, const char *what,
                                             const char *call) {
  const char *text = nullptr;
  if (driver.getErrorString(result, &text) != 0 || !text)
    text = "unknown error";
  return makeStatus(MNEMO_STATUS_INTERNAL, "%s: %s failed: %s (error %d)",
                    what, call, text, result);
}

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

#include "artifact_generated.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

using namespace mnemo::rt;
using namespace mnemo::rt::cuda;

namespace {

/// Checks every launch of `plan` against its kernel's `.entry` declaration
/// in the PTX `text`: one argument per parameter, 8 bytes for buffers and
/// i64 (.u64/.b64/.s64 parameters), 4 for i32 and f32. cuLaunchKernel trusts
/// the argument array, so a plan that does not match its kernels is refused.
mnemo_status_t checkKernelParameters(const mnemo_model_t &model,
                                     const String &text,
                                     const GpuPlan &plan) {
  const char *path = model.name.c_str();
  for (const GpuLaunch &l : plan.launches) {
    const char *kernel = model.kernels[l.kernel].symbol;
    String head = String(".entry ") + kernel + "(";
    size_t at = text.find(head);
    size_t end = at == String::npos ? at : text.find(')', at);
    if (end == String::npos)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: the plan launches '%s', which the PTX does not "
                        "define",
                        path, kernel);
    Vector<unsigned> sizes;
    for (size_t p = text.find(".param", at); p != String::npos && p < end;
         p = text.find(".param", p + 6)) {
      String type = text.substr(p + 7, 4);
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
                              k == GpuArgument::Kind::I64 ||
                              k == GpuArgument::Kind::I64Expr
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
  constexpr int kPreferredCarveout = 9; // CU_FUNC_ATTRIBUTE_PREFERRED_...
  constexpr int kCarveoutMaxShared = 100; // CU_SHAREDMEM_CARVEOUT_MAX_SHARED
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
    return driverError(d, r, (String(path) + ": " + kernel).c_str(),
                       "cuFuncSetAttribute");
  // All of the unified L1 as shared memory: the blocks a multiprocessor
  // holds at once (which a decode kernel's split count assumes) are
  // bounded by it, and the driver's own choice can leave a block out.
  if ((r = d.funcSetAttribute(fn, kPreferredCarveout, kCarveoutMaxShared)) !=
      0)
    return driverError(d, r, (String(path) + ": " + kernel).c_str(),
                       "cuFuncSetAttribute");
  return nullptr;
}

/// Encodes tensor map `m` of the already allocated `source` into the
/// device buffer `ptr`, with `dims` and `strides` at the prepared shape
/// (checked to stay inside the source).
mnemo_status_t encodeTensorMap(const Driver &d, const char *path,
                               const GpuTensorMap &m,
                               const Vector<uint64_t> &dims,
                               const Vector<uint64_t> &strides,
                               CUdeviceptr source, CUdeviceptr ptr) {
  if (!d.tensorMapEncodeTiled)
    return makeStatus(MNEMO_STATUS_UNAVAILABLE,
                      "%s: the plan uses TMA tensor maps, which this CUDA "
                      "driver cannot encode (cuTensorMapEncodeTiled needs "
                      "CUDA 12)",
                      path);
  // CUtensorMapDataType (FP8 bytes as UINT8) and CUtensorMapSwizzle values.
  int dtype = m.dtype == MNEMO_DTYPE_BF16      ? 9
              : m.dtype == MNEMO_DTYPE_F16     ? 6
              : m.dtype == MNEMO_DTYPE_F8_E4M3 ? 0
                                               : 7;
  int swizzle = m.swizzle == 128 ? 3 : m.swizzle == 64 ? 2
                                   : m.swizzle == 32  ? 1
                                                      : 0;
  Vector<unsigned> ones(dims.size(), 1);
  alignas(64) unsigned char map[128];
  CUresult r = d.tensorMapEncodeTiled(
      map, dtype, static_cast<unsigned>(dims.size()),
      reinterpret_cast<void *>(source), dims.data(), strides.data(),
      m.box.data(), ones.data(), /*interleave=*/0, swizzle,
      /*l2Promotion: 128 bytes*/ 2, /*oobFill: zeros*/ 0);
  if (r != 0)
    return driverError(d, r, path, "cuTensorMapEncodeTiled");
  if ((r = d.memcpyHtoD(ptr, map, sizeof(map))) != 0)
    return driverError(d, r, path, "cuMemcpyHtoD");
  return nullptr;
}

/// Graphs kept per executor (one per input shape seen recently).
constexpr size_t kMaxGraphs = 8;
constexpr uint64_t kMaxBytes = uint64_t(1) << 40;

/// Expression `e` at the operands' values; false on a division by zero or
/// an overflow.
bool evaluateOne(const GpuExpr &e, const Vector<int64_t> &v,
                 const Vector<Vector<int64_t>> &shapes,
                 int64_t *out) {
  using Op = ::mnemo::artifact::ExprOp;
  auto op = static_cast<Op>(e.op);
  if (op == Op::CONST)
    return *out = e.value, true;
  if (op == Op::INPUT_DIM)
    return *out = shapes[e.a][e.b], true;
  int64_t a = v[e.a], b = v[e.b];
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
  case Op::ADD: return !__builtin_add_overflow(a, b, out);
  case Op::SUB: return !__builtin_sub_overflow(a, b, out);
  case Op::MUL: return !__builtin_mul_overflow(a, b, out);
  case Op::DIV_S:
  case Op::FLOOR_DIV_S:
  case Op::CEIL_DIV_S:
  case Op::REM_S: {
    if (b == 0 || (a == INT64_MIN && b == -1))
      return false;
    int64_t q = a / b, r = a % b;
    if (op == Op::REM_S)
      q = r;
    else if (op == Op::FLOOR_DIV_S && r != 0 && ((r < 0) != (b < 0)))
      --q;
    else if (op == Op::CEIL_DIV_S && r != 0 && ((r < 0) == (b < 0)))
      ++q;
    return *out = q, true;
  }
  case Op::MIN_S: return *out = std::min(a, b), true;
  case Op::MAX_S: return *out = std::max(a, b), true;
  case Op::DIV_U:
  case Op::REM_U:
    if (ub == 0)
      return false;
    return *out = static_cast<int64_t>(op == Op::DIV_U ? ua / ub : ua % ub),
           true;
  case Op::MIN_U: return *out = static_cast<int64_t>(std::min(ua, ub)), true;
  case Op::MAX_U: return *out = static_cast<int64_t>(std::max(ua, ub)), true;
  case Op::CMP_EQ: return *out = a == b, true;
  case Op::CMP_NE: return *out = a != b, true;
  case Op::CMP_SLT: return *out = a < b, true;
  case Op::CMP_SLE: return *out = a <= b, true;
  case Op::CMP_SGT: return *out = a > b, true;
  case Op::CMP_SGE: return *out = a >= b, true;
  case Op::CMP_ULT: return *out = ua < ub, true;
  case Op::CMP_ULE: return *out = ua <= ub, true;
  case Op::CMP_UGT: return *out = ua > ub, true;
  case Op::CMP_UGE: return *out = ua >= ub, true;
  case Op::SELECT: return *out = v[e.c] ? a : b, true;
  case Op::CONST:
  case Op::INPUT_DIM:
    break;
  }
  return false;
}

} // namespace

Executor::~Executor() {
  if (!driver)
    return;
  // The context current on this thread (which need not be the creator's).
  if (mnemo_status_t status = getDriver(&driver)) {
    mnemo_status_free(status); // (it was loaded: this does not happen)
    return;
  }
  dropGraphs();
  if (stream)
    driver->streamDestroy(stream);
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i] && !borrowed[i] &&
        plan.buffers[i].kind != GpuBuffer::Kind::Temporary)
      driver->memFree(buffers[i]);
  if (arenaBase)
    driver->memFree(arenaBase);
  if (module)
    driver->moduleUnload(module);
}

void Executor::dropGraphs() {
  for (CachedGraph &g : graphs) {
    if (g.exec)
      driver->graphs.execDestroy(g.exec);
    if (g.graph)
      driver->graphs.destroy(g.graph);
  }
  graphs.clear();
}

/// Puts the plan's device work on the executor's stream: the temporaries'
/// arena poisoned (NaN bytes, so that nothing can depend on a previous
/// run), then every kernel in plan order (one of an empty grid is skipped).
/// A kernel the plan marks programmatic that follows another kernel is
/// launched with programmatic stream serialization where the driver allows
/// it: it may start while that kernel finishes, and waits for it inside
/// (griddepcontrol.wait).
mnemo_status_t Executor::enqueuePlan() {
  const Driver &d = *driver;
  CUresult r = 0;
  if (arena.extent() &&
      (r = d.memsetD8Async(arenaBase, 0xff, arena.extent(), stream)) != 0)
    return driverError(d, r, path.c_str(), "cuMemsetD8Async");
  bool afterKernel = false;
  for (size_t k = 0; k < plan.launches.size(); ++k) {
    const GpuLaunch &l = plan.launches[k];
    const std::array<unsigned, 3> &g = gridNow[k];
    if (!g[0] || !g[1] || !g[2])
      continue;
    bool programmatic = l.programmatic && afterKernel && d.programmaticLaunch;
    if (programmatic) {
      LaunchAttribute attribute{};
      attribute.id = kLaunchAttributeProgrammaticSerialization;
      attribute.value.programmaticStreamSerializationAllowed = 1;
      LaunchConfig config{g[0],       g[1],       g[2],          l.block[0],
                          l.block[1], l.block[2], l.sharedBytes, stream,
                          &attribute, 1};
      r = d.launchKernelEx(&config, kernels[k], argPointers[k].data(), nullptr);
    } else {
      r = d.launchKernel(kernels[k], g[0], g[1], g[2], l.block[0], l.block[1],
                         l.block[2], l.sharedBytes, stream,
                         argPointers[k].data(), nullptr);
    }
    afterKernel = true;
    if (r != 0)
      return driverError(d, r,
                         (path + ": " + model.kernels[l.kernel].symbol).c_str(),
                         programmatic ? "cuLaunchKernelEx" : "cuLaunchKernel");
  }
  return nullptr;
}

/// Records enqueuePlan into a CUDA graph and instantiates it. A launch the
/// driver refuses is reported as it would be without a graph.
mnemo_status_t Executor::captureGraph(CUgraphExec *out) {
  const Driver &d = *driver;
  const Driver::Graphs &g = d.graphs;
  constexpr int kThreadLocal = 1; // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
  CUresult r = g.beginCapture(stream, kThreadLocal);
  if (r != 0)
    return driverError(d, r, path.c_str(), "cuStreamBeginCapture");
  mnemo_status_t status = enqueuePlan();
  // Capture always ends, so that the stream is usable whatever happened.
  CUgraph graph = nullptr;
  r = g.endCapture(stream, &graph);
  if (!status && r != 0)
    status = driverError(d, r, path.c_str(), "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  if (!status && (r = g.instantiate(&exec, graph, 0)) != 0)
    status = driverError(d, r, path.c_str(), "cuGraphInstantiateWithFlags");
  if (status) {
    if (graph)
      g.destroy(graph);
    return status;
  }
  if (graphs.size() == kMaxGraphs) {
    g.execDestroy(graphs.back().exec);
    g.destroy(graphs.back().graph);
    graphs.pop_back();
  }
  graphs.insert(graphs.begin(), CachedGraph{shapeKey, graph, exec});
  *out = exec;
  return nullptr;
}

mnemo_status_t Executor::allocate(size_t i, uint64_t bytes) {
  const Driver &d = *driver;
  if (buffers[i]) {
    dropGraphs(); // their launches hold the old address
    d.memFree(buffers[i]);
    buffers[i] = 0;
    capacity[i] = 0;
  }
  CUresult r = d.memAlloc(&buffers[i], bytes ? bytes : 1);
  if (r != 0) {
    buffers[i] = 0;
    return driverError(d, r, path.c_str(), "cuMemAlloc");
  }
  capacity[i] = bytes;
  return nullptr;
}

mnemo_status_t Executor::placeTemporaries(bool &moved) {
  bool relaid = arena.place(bytesNow);
  if (arena.extent() > arenaCapacity) {
    // Grown in steps of 2 MiB, so that prompts a little longer than the
    // last do not each allocate again.
    constexpr uint64_t kStep = uint64_t(2) << 20;
    uint64_t bytes = (arena.extent() + kStep - 1) / kStep * kStep;
    const Driver &d = *driver;
    dropGraphs(); // their launches hold the old addresses
    if (arenaBase)
      d.memFree(arenaBase);
    arenaBase = 0;
    arenaCapacity = 0;
    if (CUresult r = d.memAlloc(&arenaBase, bytes)) {
      arenaBase = 0;
      String what = formatString(
          "%s: the temporaries at this input shape (%llu MiB)", path.c_str(),
          static_cast<unsigned long long>(bytes >> 20));
      return driverError(d, r, what.c_str(), "cuMemAlloc");
    }
    arenaCapacity = bytes;
    relaid = true;
  }
  if (!relaid)
    return nullptr;
  for (uint32_t t : arena.temporaries())
    buffers[t] = arenaBase + arena.offset(t);
  moved = true;
  return nullptr;
}

void Executor::fillArguments() {
  for (size_t k = 0; k < plan.launches.size(); ++k) {
    const GpuLaunch &l = plan.launches[k];
    Vector<uint64_t> &out = argValues[k];
    for (size_t i = 0; i < l.args.size(); ++i) {
      const GpuArgument &a = l.args[i];
      uint64_t v = a.value;
      switch (a.kind) {
      case GpuArgument::Kind::Buffer: v = buffers[a.value]; break;
      case GpuArgument::Kind::I64Expr:
      case GpuArgument::Kind::I32Expr:
        v = static_cast<uint64_t>(values[a.value]);
        break;
      default: break;
      }
      if (a.kind == GpuArgument::Kind::I32 || a.kind == GpuArgument::Kind::F32 ||
          a.kind == GpuArgument::Kind::I32Expr) {
        // 4-byte scalars: the low bytes of the slot.
        uint32_t low = static_cast<uint32_t>(v);
        out[i] = 0;
        std::memcpy(&out[i], &low, sizeof(low));
      } else {
        out[i] = v;
      }
    }
  }
}

mnemo_status_t Executor::evaluate(
    const Vector<Vector<int64_t>> &shapes) {
  const char *what = path.c_str();
  values.resize(plan.exprs.size());
  for (size_t i = 0; i < plan.exprs.size(); ++i)
    if (!evaluateOne(plan.exprs[i], values, shapes, &values[i]))
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "%s: plan expression %zu divides by zero or "
                        "overflows at this input shape",
                        what, i);
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const GpuBuffer &b = plan.buffers[i];
    uint64_t bytes = b.bytes;
    if (b.kind == GpuBuffer::Kind::Input) {
      bytes = mnemo_dtype_size(function->inputs[b.index].dtype);
      for (int64_t d : shapes[b.index])
        bytes *= static_cast<uint64_t>(d); // validated by the session
    } else if (b.bytesExpr >= 0) {
      int64_t v = values[b.bytesExpr];
      if (v < 0 || static_cast<uint64_t>(v) > kMaxBytes)
        return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                          "%s: buffer %zu would take %lld bytes at this "
                          "input shape",
                          what, i, static_cast<long long>(v));
      bytes = static_cast<uint64_t>(v);
    }
    bytesNow[i] = bytes;
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].kind == GpuBuffer::Kind::TensorMap)
      MNEMO_RETURN_IF_ERROR(evaluateMap(i));
  for (size_t k = 0; k < plan.launches.size(); ++k) {
    const GpuLaunch &l = plan.launches[k];
    for (int d = 0; d < 3; ++d) {
      if (l.gridExpr[d] < 0) {
        gridNow[k][d] = l.grid[d];
        continue;
      }
      int64_t v = values[l.gridExpr[d]];
      if (v < 0 || v > (d ? 65535 : 0x7fffffff))
        return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                          "%s: launch %zu ('%s') would have grid size %lld "
                          "at this input shape",
                          what, k, model.kernels[l.kernel].symbol,
                          static_cast<long long>(v));
      gridNow[k][d] = static_cast<unsigned>(v);
    }
  }
  for (size_t i = 0; i < function->outputs.size(); ++i) {
    const TensorSig &sig = function->outputs[i];
    Vector<int64_t> &shape = outputShapes[i];
    shape = sig.shape;
    uint64_t bytes = mnemo_dtype_size(sig.dtype);
    for (size_t d = 0; d < shape.size(); ++d) {
      int32_t e = plan.outputDimExprs[i][d];
      if (e >= 0)
        shape[d] = values[e];
      if (shape[d] < 0 ||
          __builtin_mul_overflow(bytes, static_cast<uint64_t>(shape[d]),
                                 &bytes))
        return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                          "%s: output '%s' would have dim %zu = %lld at this "
                          "input shape",
                          what, sig.name, d, static_cast<long long>(shape[d]));
    }
    if (bytes > bytesNow[plan.outputBuffers[i]])
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: output '%s' (%llu bytes) is larger than its "
                        "buffer at this input shape",
                        what, sig.name,
                        static_cast<unsigned long long>(bytes));
    outputSizes[i] = bytes;
  }
  shapeKey.clear();
  for (const Vector<int64_t> &s : shapes)
    shapeKey.insert(shapeKey.end(), s.begin(), s.end());
  return nullptr;
}

mnemo_status_t Executor::evaluateMap(size_t i) {
  const GpuTensorMap &m = plan.buffers[i].map;
  MapShape &now = mapNow[i];
  now.dims = m.dims;
  now.strides = m.strides;
  if (!m.dynamic)
    return nullptr; // checked by the verifier
  auto pick = [&](Vector<uint64_t> &values,
                  const Vector<int32_t> &exprs, bool (*ok)(uint64_t)) {
    for (size_t j = 0; j < values.size(); ++j) {
      if (exprs[j] >= 0) {
        int64_t v = this->values[exprs[j]];
        values[j] = v < 0 ? 0 : static_cast<uint64_t>(v);
      }
      if (!ok(values[j]))
        return false;
    }
    return true;
  };
  uint64_t span = 0;
  if (!pick(now.dims, m.dimExprs, tensorMapDimOk) ||
      !pick(now.strides, m.strideExprs, tensorMapStrideOk) ||
      !tensorMapSpan(m.dtype, now.dims, now.strides, &span) ||
      span > bytesNow[m.source])
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "%s: tensor map (buffer %zu) of buffer %u does not fit "
                      "its source at this input shape",
                      path.c_str(), i, m.source);
  return nullptr;
}

mnemo_status_t Executor::prepare(
    const Vector<Vector<int64_t>> &shapes) {
  // Makes the context current on this thread: a session may run on
  // another thread than the one that created it.
  MNEMO_RETURN_IF_ERROR(getDriver(&driver));
  MNEMO_RETURN_IF_ERROR(evaluate(shapes));
  // Grow what this shape needs larger; nothing shrinks, and resident
  // memory does not move.
  bool moved = false;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    if (plan.buffers[i].kind == GpuBuffer::Kind::Temporary)
      continue; // in the arena
    if (borrowed[i] && bytesNow[i] > capacity[i])
      return makeStatus(
          MNEMO_STATUS_INVALID_ARGUMENT,
          "%s: input '%s' needs %llu bytes at this shape; its device-resident "
          "memory holds %llu",
          path.c_str(), function->inputs[plan.buffers[i].index].name,
          static_cast<unsigned long long>(bytesNow[i]),
          static_cast<unsigned long long>(capacity[i]));
    if (bytesNow[i] > capacity[i] || !buffers[i]) {
      MNEMO_RETURN_IF_ERROR(allocate(i, bytesNow[i]));
      moved = true;
    }
  }
  MNEMO_RETURN_IF_ERROR(placeTemporaries(moved));
  moved = moved || residentMoved;
  residentMoved = false;
  // A map is encoded again when it or its source moved or its dims or
  // strides changed with the shape. No run is in flight (run() waits for
  // the device), and a graph reads the map's buffer, not a copy of it.
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    if (plan.buffers[i].kind != GpuBuffer::Kind::TensorMap)
      continue;
    const GpuTensorMap &m = plan.buffers[i].map;
    MapShape &now = mapNow[i], &encoded = mapEncoded[i];
    now.source = buffers[m.source];
    if (encoded.valid && encoded.source == now.source &&
        encoded.dims == now.dims && encoded.strides == now.strides)
      continue;
    encoded.valid = false;
    MNEMO_RETURN_IF_ERROR(encodeTensorMap(*driver, path.c_str(), m, now.dims,
                                          now.strides, now.source, buffers[i]));
    encoded = now;
    encoded.valid = true;
  }
  // The argument arrays hold addresses and shape-dependent scalars: rebuilt
  // only when either changed.
  if (moved || shapeKey != argumentsKey) {
    fillArguments();
    argumentsKey = shapeKey;
  }
  return nullptr;
}

namespace {

/// The artifact's binary for `d`'s device, or null: one assembled for the
/// device's compute capability (sm_90a for 9.0: a binary runs on the
/// capability it was assembled for).
const GpuBinaryImage *binaryFor(const mnemo_model_t &model, const Driver &d) {
  constexpr int kCapabilityMajor = 75; // CU_DEVICE_ATTRIBUTE_COMPUTE_...
  constexpr int kCapabilityMinor = 76;
  int major = 0, minor = 0;
  if (model.gpuBinaries.empty() ||
      d.deviceGetAttribute(&major, kCapabilityMajor, d.device) != 0 ||
      d.deviceGetAttribute(&minor, kCapabilityMinor, d.device) != 0)
    return nullptr;
  char chip[32];
  std::snprintf(chip, sizeof chip, "sm_%d%d", major, minor);
  for (const GpuBinaryImage &g : model.gpuBinaries) {
    size_t n = std::strlen(g.chip);
    if (n && g.chip[n - 1] == 'a')
      --n;
    if (n == std::strlen(chip) && std::strncmp(g.chip, chip, n) == 0)
      return &g;
  }
  return nullptr;
}

} // namespace

mnemo_status_t Executor::load(const FunctionPlan &f) {
  function = &f;
  const char *what = path.c_str();
  // NUL-terminated for cuModuleLoadData.
  String text(model.ptxCode, model.ptxSize);
  MNEMO_RETURN_IF_ERROR(checkKernelParameters(model, text, plan));
  MNEMO_RETURN_IF_ERROR(getDriver(&driver));
  const Driver &d = *driver;
  // The binary assembled for this device when there is one (no PTX to
  // compile). A driver that refuses the image (CUDA_ERROR_INVALID_IMAGE,
  // _NO_BINARY_FOR_GPU, _UNSUPPORTED_PTX_VERSION: older than the
  // assembler) compiles the PTX instead; any other failure is reported.
  constexpr CUresult kImageRefused[] = {200, 209, 222};
  CUresult r = 0;
  bool loaded = false;
  if (const GpuBinaryImage *binary = binaryFor(model, d)) {
    r = d.moduleLoadData(&module, binary->data);
    loaded = r == 0;
    if (!loaded && std::find(std::begin(kImageRefused), std::end(kImageRefused),
                             r) == std::end(kImageRefused))
      return driverError(d, r, what, "cuModuleLoadData (the GPU binary)");
  }
  if (!loaded && (r = d.moduleLoadData(&module, text.c_str())) != 0)
    return driverError(d, r, what, "cuModuleLoadData");
  for (const GpuLaunch &l : plan.launches) {
    const char *name = model.kernels[l.kernel].symbol;
    CUfunction fn = nullptr;
    if ((r = d.moduleGetFunction(&fn, module, name)) != 0)
      return driverError(d, r, (path + ": " + name).c_str(),
                         "cuModuleGetFunction");
    MNEMO_RETURN_IF_ERROR(allowSharedMemory(d, what, name, l, fn));
    kernels.push_back(fn);
    argValues.emplace_back(l.args.size());
    Vector<void *> &pointers = argPointers.emplace_back();
    for (uint64_t &v : argValues.back())
      pointers.push_back(&v);
  }
  size_t n = plan.buffers.size();
  buffers.assign(n, 0);
  capacity.assign(n, 0);
  borrowed.assign(n, false);
  bytesNow.assign(n, 0);
  gridNow.assign(plan.launches.size(), {1, 1, 1});
  mapNow.assign(n, MapShape());
  mapEncoded.assign(n, MapShape());
  outputShapes.resize(f.outputs.size());
  outputSizes.assign(f.outputs.size(), 0);
  // What does not depend on the input shapes is allocated now, the weights
  // uploaded once; the rest at the first call that knows its size.
  for (size_t i = 0; i < n; ++i) {
    const GpuBuffer &b = plan.buffers[i];
    bool sized = b.bytesExpr < 0 && b.kind != GpuBuffer::Kind::Temporary;
    if (b.kind == GpuBuffer::Kind::Input)
      for (int64_t dim : f.inputs[b.index].shape)
        sized = sized && dim >= 0;
    if (!sized)
      continue;
    MNEMO_RETURN_IF_ERROR(allocate(i, b.bytes));
    if (b.kind == GpuBuffer::Kind::Weight &&
        (r = d.memcpyHtoD(buffers[i], model.weightData(b.index),
                          b.bytes)) != 0)
      return driverError(d, r, what, "cuMemcpyHtoD");
  }
  constexpr unsigned kNonBlocking = 1; // CU_STREAM_NON_BLOCKING
  if ((r = d.streamCreate(&stream, kNonBlocking)) != 0)
    return driverError(d, r, what, "cuStreamCreate");
  // A graph pays where launches are many and short (decode): one replay
  // instead of a driver call per kernel. Captured at the first run of
  // each input shape.
  useGraph = d.hasGraphs() && plan.launches.size() > 1;
  return nullptr;
}

mnemo_status_t Executor::create(const mnemo_model_t &model,
                                const FunctionPlan &plan,
                                Owned<Executor> &out) {
  void *p = std::malloc(sizeof(Executor));
  Owned<Executor> e(p ? ::new (p) Executor(model, plan) : nullptr);
  if (!e)
    return outOfMemory();
  MNEMO_RETURN_IF_ERROR(e->load(plan));
  out = std::move(e);
  return nullptr;
}

mnemo_status_t Executor::bindResident(size_t input, CUdeviceptr address,
                                      uint64_t bytes) {
  if (input >= function->inputs.size() || !function->inputs[input].inPlace)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "%s: only an input updated in place can be resident "
                      "on the device",
                      path.c_str());
  MNEMO_RETURN_IF_ERROR(getDriver(&driver));
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const GpuBuffer &b = plan.buffers[i];
    if (b.kind != GpuBuffer::Kind::Input || b.index != input)
      continue;
    if (buffers[i] == address && borrowed[i] && capacity[i] == bytes)
      continue;
    if (buffers[i] && !borrowed[i])
      driver->memFree(buffers[i]);
    buffers[i] = address;
    capacity[i] = bytes;
    borrowed[i] = true;
    // Launch arguments, tensor maps and graphs hold the old address.
    dropGraphs();
    residentMoved = true;
  }
  return nullptr;
}

bool Executor::isResident(size_t input) const {
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].kind == GpuBuffer::Kind::Input &&
        plan.buffers[i].index == input && borrowed[i])
      return true;
  return false;
}

mnemo_status_t Executor::setGraph(bool enabled) {
  MNEMO_RETURN_IF_ERROR(getDriver(&driver));
  if (enabled && !driver->hasGraphs())
    return makeStatus(MNEMO_STATUS_UNAVAILABLE,
                      "%s: this CUDA driver has no graph API (CUDA 11.4 "
                      "and later)",
                      path.c_str());
  if (!enabled)
    dropGraphs();
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
    if (b.kind == GpuBuffer::Kind::Input && bytesNow[i] && !borrowed[i] &&
        (r = d.memcpyHtoDAsync(buffers[i], inputs[b.index], bytesNow[i],
                               stream)) != 0)
      return driverError(d, r, what, "cuMemcpyHtoDAsync");
  }
  if (useGraph) {
    CUgraphExec exec = nullptr;
    for (auto it = graphs.begin(); it != graphs.end(); ++it)
      if (it->shape == shapeKey) {
        std::rotate(graphs.begin(), it, it + 1); // most recently used first
        exec = graphs.front().exec;
        break;
      }
    if (!exec)
      MNEMO_RETURN_IF_ERROR(captureGraph(&exec));
    if ((r = d.graphs.launch(exec, stream)) != 0)
      return driverError(d, r, what, "cuGraphLaunch");
  } else {
    MNEMO_RETURN_IF_ERROR(enqueuePlan());
  }
  for (size_t i = 0; i < plan.outputBuffers.size(); ++i) {
    if (!outputSizes[i])
      continue;
    r = d.memcpyDtoHAsync(outputs[i], buffers[plan.outputBuffers[i]],
                          outputSizes[i], stream);
    if (r != 0)
      return driverError(d, r, what, "cuMemcpyDtoHAsync");
  }
  // An input updated in place (a KV cache pool) goes back to the caller's
  // memory, which mnemo_session_set_inout bound writable, unless it is
  // resident on the device.
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const GpuBuffer &b = plan.buffers[i];
    if (b.kind != GpuBuffer::Kind::Input || !bytesNow[i] || borrowed[i] ||
        !function->inputs[b.index].inPlace)
      continue;
    r = d.memcpyDtoHAsync(const_cast<void *>(inputs[b.index]), buffers[i],
                          bytesNow[i], stream);
    if (r != 0)
      return driverError(d, r, what, "cuMemcpyDtoHAsync");
  }
  // A kernel's fault shows here.
  if ((r = d.streamSynchronize(stream)) != 0)
    return driverError(d, r, what, "cuStreamSynchronize");
  return nullptr;
}

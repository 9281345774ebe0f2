//===- model.h - the loaded model -------------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What loading an artifact produces: the mapped bytes, the loaded code, and
// the verified metadata copied into plain structures that sessions use
// without touching the FlatBuffer again.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_MODEL_H
#define MNEMO_RUNTIME_MODEL_H

#include "code_object.h"
#include "region.h"

#include "mnemo/runtime.h"

#include "support/Memory.h"
#include "support/String.h"
#include "support/Sync.h"
#include "support/Vector.h"

#include <atomic>
#include <cstdint>

namespace mnemo::rt {

/// Largest tensor rank an artifact may use.
constexpr uint32_t kMaxRank = 32;

/// A tensor of a function's signature.
struct TensorSig {
  const char *name = "";
  mnemo_dtype_t dtype = MNEMO_DTYPE_F32;
  Vector<int64_t> shape;    // -1 = dynamic
  Vector<int64_t> maxShape; // equal to `shape` on static dims
  bool inPlace = false;          // an input the function updates
  int64_t kvWindow = 0;          // a KV cache pool's attention window
  int64_t kvEvery = 0;           // a pool of one row per kvEvery tokens
  int64_t kvLast = 0;            // a pool whose last kvLast rows are read
};

/// A constant tensor in the weights segment.
struct WeightInfo {
  const char *name = "";
  mnemo_dtype_t dtype = MNEMO_DTYPE_F32;
  Vector<int64_t> shape;
  const uint8_t *data = nullptr;
  uint64_t size = 0;
  bool replaceable = false; // mnemo_model_set_weight may replace it
};

/// An entry point of the code object.
struct KernelInfo {
  const char *symbol = "";
  uint32_t numArgs = 0;
  uint32_t numResults = 0;
  KernelFn fn = nullptr;
};

/// One step of a function's plan.
struct CallPlan {
  uint32_t kernel = 0;
  Vector<uint32_t> args;
  Vector<uint32_t> results;
  /// Slots whose last use is this call (not outputs): their buffers are
  /// released once it returns.
  Vector<uint32_t> releaseAfter;
};

/// A TMA tensor map (128 bytes) of buffer `source`, encoded by the
/// executor: sizes innermost first, byte strides of dims 1.., element
/// strides 1, zeros out of bounds, L2 promotion 128 bytes.
struct GpuTensorMap {
  uint32_t source = 0;
  mnemo_dtype_t dtype = MNEMO_DTYPE_BF16;
  Vector<uint64_t> dims, strides;
  Vector<uint32_t> box;
  unsigned swizzle = 0; // bytes: 0, 32, 64, 128
  /// Per dim / stride: -1, or the expression giving it at a call.
  Vector<int32_t> dimExprs, strideExprs;
  /// Whether a dim, a stride or the source's size is known at calls only
  /// (the executor then checks the map's span at each call).
  bool dynamic = false;
};

/// cuTensorMapEncodeTiled's limits: dims in [1, 2^32], strides multiples of
/// 16 below 2^40.
inline bool tensorMapDimOk(uint64_t d) {
  return d != 0 && d <= (uint64_t(1) << 32);
}
inline bool tensorMapStrideOk(uint64_t s) {
  return s % 16 == 0 && s < (uint64_t(1) << 40);
}
/// The bytes a map of `dims` and `strides` reaches from its source's start;
/// false on an overflow.
inline bool tensorMapSpan(mnemo_dtype_t dtype,
                          const Vector<uint64_t> &dims,
                          const Vector<uint64_t> &strides,
                          uint64_t *span) {
  uint64_t term = 0;
  if (dims.empty() || __builtin_mul_overflow(dims[0], mnemo_dtype_size(dtype),
                                             span))
    return false;
  for (size_t d = 1; d < dims.size(); ++d)
    if (__builtin_mul_overflow(dims[d] - 1, strides[d - 1], &term) ||
        __builtin_add_overflow(*span, term, span))
      return false;
  return true;
}

/// An integer expression of the input dims (artifact.fbs, Expr): `op` is
/// the schema's ExprOp; operands are earlier expressions.
struct GpuExpr {
  uint8_t op = 0;
  uint32_t a = 0, b = 0, c = 0;
  int64_t value = 0;
};

/// A buffer of a GPU plan (Function.buffers).
struct GpuBuffer {
  enum class Kind { Input, Weight, Temporary, TensorMap } kind = Kind::Temporary;
  uint32_t index = 0; // Input: the input; Weight: the model's weight
  uint64_t bytes = 0;
  int32_t bytesExpr = -1; // >= 0: the bytes at a call are this expression
  GpuTensorMap map;   // Kind::TensorMap
};

/// A kernel parameter of a launch.
struct GpuArgument {
  enum class Kind { Buffer, I64, I32, F32, I64Expr, I32Expr } kind =
      Kind::Buffer;
  uint64_t value = 0; // the buffer, the scalar's bits, or the expression
};

struct GpuLaunch {
  uint32_t kernel = 0; // into mnemo_model_s::kernels
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  int32_t gridExpr[3] = {-1, -1, -1}; // >= 0: grid[d] at a call
  unsigned sharedBytes = 0;
  Vector<GpuArgument> args;
  /// The kernel waits for the grid before it first (griddepcontrol.wait):
  /// it may be launched while that grid finishes.
  bool programmatic = false;
};

/// A GPU binary of the artifact's PTX, for one chip ("sm_90a").
struct GpuBinaryImage {
  const char *chip = "";
  const uint8_t *data = nullptr;
  size_t size = 0;
};

/// What a function runs on a GPU: every index in it is verified.
struct GpuPlan {
  Vector<GpuBuffer> buffers;
  Vector<GpuLaunch> launches;
  Vector<uint32_t> outputBuffers;
  Vector<GpuExpr> exprs;
  /// Per output, per dim: the expression of a dynamic dim, else -1.
  Vector<Vector<int32_t>> outputDimExprs;
  bool dynamic() const { return !exprs.empty(); }
};

/// A function: signature, slots and plan. Slots are numbered inputs first,
/// then weights, then call results in plan order. A PTX model's functions
/// have a GPU plan instead of calls and slots.
struct FunctionPlan {
  const char *name = "";
  Vector<TensorSig> inputs;
  Vector<TensorSig> outputs;
  Vector<uint32_t> weights; // model weight index of each weight slot
  Vector<CallPlan> calls;
  Vector<uint32_t> outputSlots;
  Vector<uint32_t> slotRanks; // rank of every slot
  GpuPlan gpu;
  /// Why no runtime can run the function yet (from the artifact), or "".
  const char *unsupported = "";

  uint32_t numSlots() const { return static_cast<uint32_t>(slotRanks.size()); }
  uint32_t firstWeightSlot() const {
    return static_cast<uint32_t>(inputs.size());
  }
  uint32_t firstResultSlot() const {
    return static_cast<uint32_t>(inputs.size() + weights.size());
  }
};

} // namespace mnemo::rt

struct mnemo_model_s {
  std::atomic<int> refs{1};
  mnemo::rt::String name; // the artifact's path, or "<memory>", for messages

  mnemo::rt::Region file;        // the artifact
  mnemo::rt::Region sideWeights; // the side weights file, when there is one
  /// The files weights are read from in place (Artifact.weight_sources).
  mnemo::rt::Vector<mnemo::rt::Region> weightSources;
  const uint8_t *weightsBase = nullptr;
  uint64_t weightsSize = 0;
  /// Values given by mnemo_model_set_weight, kept for the model's life
  /// (sessions made before a replacement keep reading the values they were
  /// made with), and the lock that orders replacements with the reads of
  /// session creation (weightData).
  mnemo::rt::Vector<std::pair<mnemo::rt::OwnedBytes, uint64_t>> replaced;
  mutable mnemo::rt::Mutex weightsMutex;
  /// Whether `replaced` has an entry: models without replaced weights take
  /// no lock on the run's path (ownsAddress).
  std::atomic<bool> hasReplaced{false};
  /// Weight `k`'s values now.
  const uint8_t *weightData(size_t k) const {
    mnemo::rt::LockGuard lock(weightsMutex);
    return weights[k].data;
  }
  mnemo::rt::CodeObject code;     // CPU code (code format ELF)
  /// PTX code (code format PTX): the artifact's bytes, not NUL-terminated.
  bool ptx = false;
  const char *ptxCode = nullptr;
  size_t ptxSize = 0;
  /// The PTX assembled ahead of time, by chip (the artifact's bytes).
  mnemo::rt::Vector<mnemo::rt::GpuBinaryImage> gpuBinaries;

  const char *triple = "";
  const char *cpu = "";
  const char *features = "";
  const char *compiler = "";
  const char *source = "";
  const char *sourceHash = "";

  mnemo::rt::Vector<mnemo::rt::KernelInfo> kernels;
  mnemo::rt::Vector<mnemo::rt::WeightInfo> weights;
  mnemo::rt::Vector<mnemo::rt::FunctionPlan> functions;
  /// The name of each profile point (Artifact.profile_points), the ids the
  /// code's profile hook reports.
  mnemo::rt::Vector<const char *> profilePoints;

  /// Whether `p` points into memory the model owns for its whole life (the
  /// mapped artifact, the side weights, the loaded code): a kernel result
  /// there is a view, never a buffer to free.
  bool ownsAddress(const void *p) const {
    for (const mnemo::rt::Region &source : weightSources)
      if (source.contains(p))
        return true;
    if (hasReplaced.load(std::memory_order_acquire)) {
      mnemo::rt::LockGuard lock(weightsMutex);
      auto *q = static_cast<const uint8_t *>(p);
      for (const auto &[data, size] : replaced)
        if (q >= data.get() && q < data.get() + size)
          return true;
    }
    return file.contains(p) || sideWeights.contains(p) || code.contains(p);
  }
};

namespace mnemo::rt {

/// Takes one more reference to `model`.
void retainModel(mnemo_model_t *model);
/// Drops a reference; the last one destroys the model.
void releaseModel(mnemo_model_t *model);

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_MODEL_H

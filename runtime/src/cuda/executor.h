//===- executor.h - runs a GPU plan on a CUDA device ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a session on a CUDA device runs: a function's verified GPU plan
// (model.h's GpuPlan) over the model's PTX.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_CUDA_EXECUTOR_H
#define MNEMO_RUNTIME_CUDA_EXECUTOR_H

#include "cuda/driver.h"
#include "cuda/temporary_arena.h"
#include "model.h"

#include "support/Memory.h"
#include "support/String.h"
#include "support/Vector.h"

#include <array>

namespace mnemo::rt::cuda {

class Executor {
public:
  /// Loads the model's PTX on the device, allocates the plan's buffers once
  /// (uploading the weights and encoding the tensor maps) and creates the
  /// executor's stream. `model` must outlive the executor.
  static mnemo_status_t create(const mnemo_model_t &model,
                               const FunctionPlan &plan,
                               Owned<Executor> &out);
  ~Executor();

  /// Evaluates the plan at the bound inputs' shapes (`shapes[i]` those of
  /// input i): buffer sizes, grids, scalar arguments and the outputs'
  /// shapes. Grows a buffer a call needs larger (dropping the graphs, whose
  /// launches hold the old addresses).
  mnemo_status_t prepare(const Vector<Vector<int64_t>> &shapes);
  /// After prepare: output i's shape and bytes.
  const Vector<int64_t> &outputShape(size_t i) const {
    return outputShapes[i];
  }
  uint64_t outputBytes(size_t i) const { return outputSizes[i]; }

  /// After prepare: copies inputs[i] (input i's bytes) in, runs the plan,
  /// copies output i into outputs[i] and each input updated in place back
  /// into inputs[i] (writable memory, bound by mnemo_session_set_inout);
  /// returns once the device has finished.
  mnemo_status_t run(const void *const *inputs, void *const *outputs);

  /// Binds device memory the caller keeps (`bytes` at `address`) as input
  /// `input`'s buffer, an input the function updates in place: runs neither
  /// copy it in nor back, so its contents stay on the device from run to
  /// run (a generator's KV cache pools, shared by its prefill and decode
  /// executors). The memory must outlive the executor; a shape that needs
  /// more than `bytes` is an error.
  mnemo_status_t bindResident(size_t input, CUdeviceptr address,
                              uint64_t bytes);
  /// Whether input `input` is bound to resident device memory.
  bool isResident(size_t input) const;

  /// Whether runs replay the plan as one CUDA graph (captured by the next
  /// run) or launch kernel by kernel.
  mnemo_status_t setGraph(bool enabled);
  bool usesGraph() const { return useGraph; }

private:
  Executor(const mnemo_model_t &model, const FunctionPlan &plan)
      : model(model), plan(plan.gpu), path(model.name), arena(plan.gpu) {}
  mnemo_status_t load(const FunctionPlan &function);
  mnemo_status_t evaluate(const Vector<Vector<int64_t>> &shapes);
  /// Tensor map buffer `i`'s dims and strides at the evaluated shape.
  mnemo_status_t evaluateMap(size_t i);
  mnemo_status_t allocate(size_t buffer, uint64_t bytes);
  /// Lays the temporaries out at the evaluated shape, growing the arena
  /// when it is too small; sets `moved` when an address changed.
  mnemo_status_t placeTemporaries(bool &moved);
  void fillArguments();
  mnemo_status_t enqueuePlan();
  mnemo_status_t captureGraph(CUgraphExec *out);
  void dropGraphs();

  const mnemo_model_t &model;
  const GpuPlan &plan;
  const FunctionPlan *function = nullptr; // its signature
  String path; // for messages
  TemporaryArena arena; // where each temporary lives in arenaBase
  CUdeviceptr arenaBase = 0;
  uint64_t arenaCapacity = 0;
  const Driver *driver = nullptr;
  CUmodule module = nullptr;
  Vector<CUfunction> kernels;  // per launch
  Vector<CUdeviceptr> buffers; // per plan buffer (inputs too)
  Vector<uint64_t> capacity;   // bytes allocated per buffer
  Vector<bool> borrowed; // per buffer: resident memory, not owned
  bool residentMoved = false; // a resident binding changed since prepare
  // At the prepared shape: expression values, each buffer's bytes, each
  // launch's grid, the outputs' shapes and bytes.
  Vector<int64_t> values;
  Vector<uint64_t> bytesNow;
  Vector<std::array<unsigned, 3>> gridNow;
  Vector<Vector<int64_t>> outputShapes;
  Vector<uint64_t> outputSizes;
  Vector<int64_t> shapeKey; // every input dim, for the graph cache
  Vector<int64_t> argumentsKey; // the shape the arguments were filled at
  // Per launch: the argument values and the pointers cuLaunchKernel reads
  // (buffer addresses change only when a buffer grows).
  Vector<Vector<uint64_t>> argValues;
  Vector<Vector<void *>> argPointers;
  CUstream stream = nullptr; // every copy and launch of this executor
  /// The plan captured as a CUDA graph per input shape, most recently
  /// used first; at most kMaxGraphs.
  struct CachedGraph {
    Vector<int64_t> shape;
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
  };
  Vector<CachedGraph> graphs;
  bool useGraph = false; // replay (or capture) graphs
  /// Per tensor map buffer: its dims and strides at the prepared shape,
  /// and those (and the source address) it was last encoded with.
  struct MapShape {
    Vector<uint64_t> dims, strides;
    CUdeviceptr source = 0; // the source's address
    bool valid = false;
  };
  Vector<MapShape> mapNow, mapEncoded;
};

} // namespace mnemo::rt::cuda

#endif // MNEMO_RUNTIME_CUDA_EXECUTOR_H

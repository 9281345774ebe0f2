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
#include "model.h"

#include <memory>
#include <string>
#include <vector>

namespace mnemo::rt::cuda {

class Executor {
public:
  /// Loads the model's PTX on the device, allocates the plan's buffers once
  /// (uploading the weights and encoding the tensor maps) and creates the
  /// executor's stream. `model` must outlive the executor.
  static mnemo_status_t create(const mnemo_model_t &model,
                               const FunctionPlan &plan,
                               std::unique_ptr<Executor> &out);
  ~Executor();

  /// Copies inputs[i] (input i's bytes) in, runs the plan and copies output
  /// i into outputs[i]; returns once the device has finished.
  mnemo_status_t run(const void *const *inputs, void *const *outputs);

  /// Whether runs replay the plan as one CUDA graph (captured by the next
  /// run) or launch kernel by kernel.
  mnemo_status_t setGraph(bool enabled);
  bool usesGraph() const { return useGraph; }

private:
  Executor(const mnemo_model_t &model, const FunctionPlan &plan)
      : model(model), plan(plan.gpu), path(model.name) {}
  mnemo_status_t load(const FunctionPlan &function);
  mnemo_status_t enqueuePlan();
  mnemo_status_t captureGraph();
  void dropGraph();

  const mnemo_model_t &model;
  const GpuPlan &plan;
  std::string path; // for messages
  const Driver *driver = nullptr;
  CUmodule module = nullptr;
  std::vector<CUfunction> kernels;  // per launch
  std::vector<CUdeviceptr> buffers; // per plan buffer (inputs too)
  std::vector<uint64_t> outputBytes;
  // Per launch: the argument values and the pointers cuLaunchKernel reads.
  // Buffers keep their addresses for the executor's life, so both are
  // built once.
  std::vector<std::vector<uint64_t>> argValues;
  std::vector<std::vector<void *>> argPointers;
  CUstream stream = nullptr;       // every copy and launch of this executor
  CUgraph graph = nullptr;         // the plan captured from `stream`
  CUgraphExec graphExec = nullptr; // ... and instantiated: runs replay it
  bool useGraph = false; // capture at the next run unless graphExec is set
};

} // namespace mnemo::rt::cuda

#endif // MNEMO_RUNTIME_CUDA_EXECUTOR_H

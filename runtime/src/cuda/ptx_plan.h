//===- ptx_plan.h - the launch plan in a PTX module's header ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `mnemoc --emit=ptx` heads the PTX module with `// mnemo.*` lines: per
// public function its signature, its buffers and its kernel launches in
// order (docs/GPU.md). This reads and checks them; everything an executor
// indexes with is verified here.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_CUDA_PTX_PLAN_H
#define MNEMO_RUNTIME_CUDA_PTX_PLAN_H

#include "mnemo/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mnemo::rt::cuda {

struct PlanTensor {
  std::string name;
  mnemo_dtype_t dtype = MNEMO_DTYPE_F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

/// A TMA tensor map (128 bytes) of buffer `source`, encoded at load: sizes
/// innermost first, byte strides of dims 1.., element strides 1, zeros out
/// of bounds, L2 promotion 128 bytes.
struct PlanTensorMap {
  uint64_t source = 0;
  mnemo_dtype_t dtype = MNEMO_DTYPE_BF16;
  std::vector<uint64_t> dims, strides;
  std::vector<unsigned> box;
  unsigned swizzle = 0; // bytes: 0, 32, 64, 128
};

struct PlanBuffer {
  bool input = false;     // an input the caller gives at each run
  bool weight = false;    // a weight of the artifact, uploaded once
  bool tensorMap = false; // a tensor map of another buffer, encoded at load
  // (else a temporary the executor allocates)
  uint64_t index = 0;  // input: the argument; weight: the artifact's weight
  uint64_t bytes = 0;
  PlanTensorMap map;
};

struct PlanArgument {
  enum class Kind { Buffer, I64, I32, F32 } kind = Kind::Buffer;
  uint64_t buffer = 0; // Kind::Buffer
  uint64_t bits = 0;   // scalars: the value's bits
};

struct PlanLaunch {
  std::string kernel;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned sharedBytes = 0;
  std::vector<PlanArgument> args;
};

struct PlanFunction {
  std::string name;
  std::vector<PlanTensor> inputs, outputs;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanLaunch> launches;
  std::vector<uint64_t> outputBuffers;
  /// Why the executor cannot run this function yet (the rest of its plan
  /// is then not read), or empty.
  std::string unsupported;
};

/// Reads the plans of `text` (the PTX of `what`). Fails with a message
/// naming `what` and the line on anything malformed or out of range. What
/// the executor cannot run yet (dynamic shapes) marks the function as
/// unsupported instead.
mnemo_status_t parsePtxPlans(const char *what, const std::string &text,
                             std::vector<PlanFunction> &out);

} // namespace mnemo::rt::cuda

#endif // MNEMO_RUNTIME_CUDA_PTX_PLAN_H

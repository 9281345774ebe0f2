//===- GpuPlan.h - the launch plan of a GPU function ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a GPU function does between its inputs and outputs: its buffers and
// kernel launches, as the NVPTX target derives them from the IR and the
// artifact's Function.buffers / launches tables record them
// (runtime/schema/artifact.fbs).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_ARTIFACT_GPUPLAN_H
#define MNEMO_ARTIFACT_GPUPLAN_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mnemo {

/// A dim or value not known when compiling.
inline constexpr int64_t kDynamicValue = -1;

/// An integer expression of the input dims (artifact.fbs, ExprOp), whose
/// operands are earlier expressions of the same plan.
struct GpuExpr {
  enum class Op {
    Const, InputDim, Add, Sub, Mul, DivS, FloorDivS, CeilDivS, RemS, MinS,
    MaxS, DivU, RemU, MinU, MaxU, CmpEq, CmpNe, CmpSlt, CmpSle, CmpSgt,
    CmpSge, CmpUlt, CmpUle, CmpUgt, CmpUge, Select
  };
  Op op = Op::Const;
  /// Operands (expression indices); InputDim: the input and its dim;
  /// Select: c ? a : b.
  uint32_t a = 0, b = 0, c = 0;
  int64_t value = 0; // Const
};

/// A size or scalar: `value` when known when compiling, else expression
/// `expr` of the plan.
struct GpuSize {
  int64_t value = 0;
  int32_t expr = -1;
  bool isStatic() const { return expr < 0; }
};

/// A TMA tensor map of another buffer (sm_90a): 128 bytes that the executor
/// encodes (cuTensorMapEncodeTiled) once the buffers exist, and again when
/// a dim or stride of the input shape changes. Sizes are innermost first;
/// the element strides are 1, out-of-bounds elements read as zeros, L2
/// promotion is 128 bytes, no interleave.
struct GpuTensorMap {
  int64_t source = -1;
  std::string dtype;
  std::vector<GpuSize> dims;
  std::vector<int64_t> box;
  /// Byte strides of dims 1 to rank - 1.
  std::vector<GpuSize> strides;
  /// 0, 32, 64 or 128 bytes.
  int64_t swizzle = 0;
};

struct GpuBuffer {
  enum class Kind { Input, Temporary, Weight, TensorMap };
  Kind kind = Kind::Temporary;
  /// Input: argument index. Weight: the index of the artifact weight that
  /// an argument tagged `mnemo.weight` carries.
  int64_t input = -1;
  int64_t weight = -1;
  /// Size in bytes (inputs: their bound tensor's).
  GpuSize bytes;
  GpuTensorMap map;
};

struct GpuArgument {
  enum class Kind { Buffer, Scalar };
  Kind kind = Kind::Buffer;
  /// Buffer: index into GpuFunctionPlan::buffers; the kernel gets the
  /// buffer's base address (offsets are compiled into the kernel).
  int64_t buffer = -1;
  /// Scalar: its type ("i64", "i32", "f32") and value (an f32: its bits).
  std::string type;
  GpuSize value;
};

struct GpuLaunch {
  std::string kernel;
  std::array<GpuSize, 3> grid{GpuSize{1}, GpuSize{1}, GpuSize{1}};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t sharedBytes = 0;
  std::vector<GpuArgument> args;
  /// The kernel waits (griddepcontrol.wait) before anything else, so the
  /// runtime may launch it while the kernel before it finishes.
  bool programmatic = false;
};

/// A tensor of the function's signature; dynamic dims are kDynamicValue.
struct GpuTensor {
  std::string name;
  /// The runtime's dtype name ("f32", "i64", ...).
  std::string dtype;
  std::vector<int64_t> shape;
  /// Outputs: the expression of each dynamic dim (-1 for static ones).
  std::vector<int32_t> dimExprs;
};

struct GpuFunctionPlan {
  std::string name;
  std::vector<GpuTensor> inputs, outputs;
  std::vector<GpuBuffer> buffers;
  std::vector<GpuLaunch> launches;
  /// Buffer index of each result.
  std::vector<int64_t> outputBuffers;
  std::vector<GpuExpr> exprs;
  /// Non-empty: why the plan cannot be recorded (a size the expressions
  /// cannot describe); the artifact marks the function unsupported.
  std::string unsupported;
};

} // namespace mlir::mnemo

#endif // MNEMO_ARTIFACT_GPUPLAN_H

//===- TargetBackend.h - code generation targets ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A target lowers tiled tensor IR to its native form and serializes it. The
// driver picks one from --target= and never branches on the target itself.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TARGET_TARGETBACKEND_H
#define MNEMO_TARGET_TARGETBACKEND_H

#include "mnemo/Artifact/GpuPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <string>
#include <vector>

namespace mlir::mnemo {

/// Facts about a target that shared lowering code may ask for.
struct TargetInfo {
  /// Preferred SIMD width in bits for f32 vectors (128 for NEON).
  unsigned vectorBits = 128;
  /// Vector registers of the ISA (16 for AVX2, 32 for AVX-512 and NEON),
  /// which size the register tiles of generated GEMMs.
  unsigned vectorRegisters = 32;
  /// Whether the generated kernels' vectors are scalable (SVE: lanes x
  /// vscale, the vector length known at run time).
  bool scalableVectors = false;
  /// Default FlashAttention tile sizes (query rows, key/value rows).
  int64_t attentionBlockQ = 32;
  int64_t attentionBlockKV = 64;
  /// Whether linear layers are cache-tiled (mnemo-tile-linear).
  bool tileLinear = true;
  /// Whether the code is PTX text (the GPU targets): no object files, and
  /// artifacts hold the PTX with its launch plans.
  bool ptx = false;
};

/// What the serializer produces. SharedObject is an artifact's code object:
/// an ELF shared object on CPUs, the bare PTX on GPUs (whose plans the
/// artifact holds as tables); PTX is the text of --emit=ptx, headed by a
/// readable dump of the plans.
enum class OutputKind { LLVMIR, Assembly, Object, SharedObject, PTX };

/// A code generation target (one per ISA family).
class TargetBackend {
public:
  virtual ~TargetBackend() = default;

  /// Name used on the command line ("host", "aarch64", "sm_90a").
  virtual llvm::StringRef getName() const = 0;
  /// Target triple, CPU and features the code is generated for.
  virtual std::string getTriple() const = 0;
  virtual std::string getCPU() const = 0;
  virtual std::string getFeatures() const = 0;
  virtual const TargetInfo &getInfo() const = 0;

  /// Appends the passes lowering tiled, tensor-level IR to the LLVM dialect,
  /// with one `void mnemo_entry_<func>(void **)` entry point per public
  /// function (the artifact's kernel ABI).
  virtual void buildCodegenPipeline(OpPassManager &pm) const = 0;

  /// What the kernel selection of a compilation is told.
  struct KernelSelection {
    /// The largest batch the artifact runs (--max-batch).
    int64_t maxBatch = 16;
    /// A GPU target's paged decode steps may take its decode kernel
    /// (--gpu-decode-kernel).
    bool decodeKernel = true;
    /// ... copying FP8 pages by TMA boxes (--gpu-decode-tma).
    bool decodeTma = false;
    /// How a GPU target's f32 linear layers and attention run
    /// (--precision: 3xtf32, the default, or tf32 on the tensor cores, or
    /// f32 on the CUDA cores).
    std::string f32Precision = "3xtf32";
  };
  /// Appends passes that replace ops with the target's own kernels before
  /// the target-independent tiling (which takes what they leave).
  virtual void buildKernelSelectionPipeline(OpPassManager &pm,
                                            const KernelSelection &) const {}

  /// Appends passes that give the target's kernels the products inside
  /// attention tiles, after tiling (the CPU's GEMM takes QK^T and PV).
  virtual void buildTileKernelPipeline(OpPassManager &pm) const {}

  /// The launch plan of each public function of a lowered module (GPU
  /// targets; CPU functions run one call of their entry point). Taken
  /// before `serialize`.
  virtual FailureOr<std::vector<GpuFunctionPlan>>
  launchPlans(ModuleOp module) const {
    return std::vector<GpuFunctionPlan>();
  }

  /// Translates an LLVM-dialect module to the requested form.
  virtual FailureOr<std::string> serialize(ModuleOp module,
                                           OutputKind kind) const = 0;

  /// GPU targets: an artifact's `code` (serialize's PTX) assembled for the
  /// target's chip by the CUDA toolkit installed at `toolkit` (its
  /// bin/ptxas); failures are reported at `loc`.
  virtual FailureOr<std::string> assemble(Location loc, llvm::StringRef code,
                                          llvm::StringRef toolkit) const {
    return emitError(loc, "target ") << getName() << " has no device binary";
  }
};

/// The backend for `name` ("host", "aarch64", "x86_64", "sm_80",
/// "sm_90a"), or null.
std::unique_ptr<TargetBackend> createTargetBackend(llvm::StringRef name);

/// Names accepted by createTargetBackend, for help and diagnostics.
std::vector<std::string> getTargetBackendNames();

} // namespace mlir::mnemo

#endif // MNEMO_TARGET_TARGETBACKEND_H

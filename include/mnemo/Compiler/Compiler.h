//===- Compiler.h - the mnemoc driver library -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_COMPILER_COMPILER_H
#define MNEMO_COMPILER_COMPILER_H

#include "mnemo/Artifact/ArtifactWriter.h"
#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/MLAFormChoice.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <functional>
#include <string>

namespace mlir::mnemo {

/// The stages `--emit=` can stop after, in pipeline order.
enum class EmitStage { Mnemo, Fused, Tiled, LLVM, Asm, PTX, Obj, Artifact };

/// A static shape for the input called `name` (its `mnemo.name`).
struct InputShape {
  std::string name;
  SmallVector<int64_t> shape;
};

/// Gives the named inputs of every public function the static `shapes`
/// (each must fit the declared type); an error when a name matches no
/// input.
LogicalResult specializeInputShapes(ModuleOp module,
                                    ArrayRef<InputShape> shapes);
/// Public functions returning a tensor.cast of a more static tensor return
/// that tensor instead, with the refined result type.
void refineEntryResultTypes(ModuleOp module);

struct CompileOptions {
  std::string target = "host";
  EmitStage emit = EmitStage::Artifact;
  /// Largest batch and sequence length a dynamic dim may take at run time:
  /// dim 0 of a rank >= 2 tensor is a batch dim, any other a sequence dim.
  int64_t maxBatch = 16;
  int64_t maxSeqLen = 4096;
  /// FlashAttention tiling; 0 picks the target's default.
  bool tileAttention = true;
  int64_t blockQ = 0;
  int64_t blockKV = 0;
  /// A GPU target's paged decode steps over FP8 pools take the decode
  /// kernel (docs/GPU.md, "Paged decode attention").
  bool gpuDecodeKernel = true;
  /// ... copying FP8 pages by TMA boxes (off: not yet validated on a GPU).
  bool gpuDecodeTma = false;
  /// How a GPU target's f32 linear layers and attention run: on the
  /// tensor cores as 3xtf32 (the default) or tf32, or on the CUDA cores
  /// (f32).
  std::string f32Precision = "3xtf32";
  /// Cache tiling of linear layers.
  bool tileLinear = true;
  /// The form every mnemo.mla_attention is decomposed in (auto: expanded
  /// for prefill, absorbed for decode, or the op's own form).
  MLAFormChoice mlaForm = MLAFormChoice::Auto;
  /// The tie order of every mnemo.top_k, or each op's own.
  std::optional<TopKTies> topKTies;
  /// Constants of at least this many bytes go to the weights segment.
  int64_t minWeightBytes = 1024;
  /// PTX text (`--emit=ptx`) names such constants as plan weights, as the
  /// artifact does, instead of making them module data (a checkpoint's:
  /// a tensor-core GEMM's TMA descriptor needs a weight's address, and the
  /// text would hold every weight).
  bool outlineWeightsInPtx = false;
  /// Inputs compiled for one static shape (specializeInputShapes).
  SmallVector<InputShape> inputShapes;
  /// Files whose tensors an artifact reads in place instead of storing
  /// the equal weights (`--weights=reference`).
  std::vector<WeightSourceFile> weightSources;
  /// When set, receives how many weights were stored and read in place.
  WeightPlacement *placement = nullptr;
  /// Verify the IR after every pass (a pass that breaks it is named);
  /// otherwise once after each stage, which takes a fifth less time.
  bool verifyEachPass = false;
  /// A GPU artifact's module is also assembled for its chip by the ptxas of
  /// the CUDA toolkit installed here (its bin/ptxas), so that a device of
  /// that chip loads the binary instead of compiling the PTX at each
  /// session's start; empty: the PTX only.
  std::string cudaToolkit;
  /// Whether the assembler's failure fails the compile (--gpu-binary=on);
  /// else it is a warning and the artifact holds the PTX only.
  bool cudaToolkitRequired = false;
  /// Provenance recorded in the artifact.
  std::string sourceName;
  std::string sourceHash;
};

/// Reports a stage starting (for progress display).
using ProgressFn = std::function<void(llvm::StringRef stage)>;

/// Compiles `module` in place up to `options.emit` and writes that stage to
/// `os` (IR text, LLVM IR, assembly, an object, or the artifact). Errors are
/// reported as diagnostics on the module.
/// With `sideWeights`, an artifact's weights segment goes there instead of
/// into `os`.
LogicalResult compileModule(ModuleOp module, const CompileOptions &options,
                            llvm::raw_ostream &os,
                            const ProgressFn &progress = {},
                            const SideWeights *sideWeights = nullptr);

} // namespace mlir::mnemo

#endif // MNEMO_COMPILER_COMPILER_H

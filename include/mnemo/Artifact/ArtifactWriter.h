//===- ArtifactWriter.h - writes .mnemo artifacts ---------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The compiler's side of runtime/schema/artifact.fbs.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_ARTIFACT_ARTIFACTWRITER_H
#define MNEMO_ARTIFACT_ARTIFACTWRITER_H

#include "mnemo/Artifact/GpuPlan.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <vector>

namespace mlir::mnemo {

/// A tensor of a function signature; -1 marks a dynamic dim.
struct ArtifactTensor {
  std::string name;
  Type elementType;
  SmallVector<int64_t> shape;
  SmallVector<int64_t> maxShape;
  /// An input the function updates in place (a KV cache pool).
  bool inPlace = false;
  /// A KV cache pool: its layer's attention window (0: none).
  int64_t kvWindow = 0;
  /// A KV cache pool of one row per `kvEvery` tokens (0: one per token).
  int64_t kvEvery = 0;
  /// A KV cache pool whose steps read the last `kvLast` tokens' rows only
  /// (0: all).
  int64_t kvLast = 0;
};

/// A constant operand, stored in the weights segment.
struct ArtifactWeight {
  std::string name;
  DenseElementsAttr value;
  /// The runtime may replace it by name (an attached adapter's factor);
  /// never shared with an equal constant.
  bool replaceable = false;
};

/// One exported function: a single kernel call over its inputs and weights.
struct ArtifactFunction {
  std::string name;
  std::string kernelSymbol;
  SmallVector<ArtifactTensor> inputs;
  SmallVector<ArtifactTensor> outputs;
  SmallVector<unsigned> weights; // indices into ArtifactContents::weights
};

struct ArtifactContents {
  std::string triple, cpu, features;
  /// ELF shared object (CPU), or PTX text: then `gpuPlans` run the
  /// functions (one per function, by name), not their kernel symbols.
  bool ptx = false;
  std::string code;
  /// PTX: the module assembled for its chip (GpuBinary), or none.
  struct GpuBinary {
    std::string chip, image;
  };
  std::vector<GpuBinary> gpuBinaries;
  std::vector<GpuFunctionPlan> gpuPlans;
  std::vector<ArtifactFunction> functions;
  std::vector<ArtifactWeight> weights;
  std::string compiler, source, sourceHash;
  /// Names of the code's profile points, by point index.
  std::vector<std::string> profilePoints;
};

/// A side file for the weights segment: `name` (relative to the artifact's
/// directory) is recorded in the artifact, the segment goes to `os`.
struct SideWeights {
  std::string name;
  llvm::raw_ostream &os;
};

/// A file whose bytes weights may be read from in place (a checkpoint's
/// safetensors file): a weight equal to one of its tensors, at an offset
/// aligned for its element type, is recorded as that tensor instead of
/// being stored in the artifact.
struct WeightSourceFile {
  /// The path the artifact records (relative to the artifact's directory,
  /// or absolute) and the one the compiler reads.
  std::string recordedPath, path;
  /// The byte ranges (offset, size) of its tensors.
  std::vector<std::pair<uint64_t, uint64_t>> tensors;
};

/// What writeArtifact stored and what it left in the weight sources.
struct WeightPlacement {
  uint64_t embeddedBytes = 0, referencedBytes = 0;
  unsigned embedded = 0, referenced = 0;
};

/// Serializes `contents`: the size-prefixed FlatBuffer, then the 64-byte
/// aligned weights segment, or, with `side`, the segment into the side
/// file. Weights equal to a tensor of one of `sources` are read from there
/// in place (the file's path, size and CRC-32 recorded). Fails (with a
/// diagnostic at `loc`) on element types the format cannot describe and on
/// unreadable sources; `placement`, when given, receives the counts.
LogicalResult writeArtifact(Location loc, const ArtifactContents &contents,
                            llvm::raw_ostream &os,
                            const SideWeights *side = nullptr,
                            ArrayRef<WeightSourceFile> sources = {},
                            WeightPlacement *placement = nullptr);

} // namespace mlir::mnemo

#endif // MNEMO_ARTIFACT_ARTIFACTWRITER_H

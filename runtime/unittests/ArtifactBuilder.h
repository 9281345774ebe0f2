//===- ArtifactBuilder.h - artifacts built in memory for tests --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Builds .mnemo files with the FlatBuffers object API, so that loading,
// verification and sessions are tested without mnemoc. The layout follows
// runtime/schema/artifact.fbs: size-prefixed FlatBuffer, zero padding, the
// 64-byte aligned weights segment.
//
// The code object is a minimal ELF shared object built here: it defines
// the names kSymbolA and kSymbolB as data, so that kernels declared under
// those names resolve when the artifact loads (and, on request, a hooks
// table), and holds no code at all.
// Plans built here therefore never call a kernel: a function's outputs are
// its inputs and weights. Running compiled kernels is tested on mnemoc's
// artifacts in test/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_UNITTESTS_ARTIFACTBUILDER_H
#define MNEMO_RUNTIME_UNITTESTS_ARTIFACTBUILDER_H

#include "artifact_generated.h"

#include "mnemo/runtime.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mnemo::test {

namespace fb = ::mnemo::artifact;

/// The names the code object defines.
constexpr const char *kSymbolA = "symbol_a";
constexpr const char *kSymbolB = "symbol_b";

/// The code object: an ELF shared object for this host that defines
/// kSymbolA and kSymbolB (as data: nothing in it can be called).
const std::string &codeObject();

/// The code's hooks table (runtime/src/hooks.h): 32 bytes in mnemoc's
/// code, 16 in older code (no alloc and free slots).
constexpr const char *kHooks = "mnemo_hooks";

/// codeObject() that also defines a zeroed kHooks of `hooksSize` bytes.
std::string codeObjectWithHooks(uint64_t hooksSize = 32);

/// "x86_64-unknown-linux-gnu" or "aarch64-unknown-linux-gnu".
const char *hostTriple();

/// A signature tensor; `maxShape` empty means "same as shape".
std::unique_ptr<fb::TensorSigT> sig(const std::string &name, fb::DType dtype,
                                    std::vector<int64_t> shape,
                                    std::vector<int64_t> maxShape = {});

/// A call of `kernel` over `args` defining `results`.
std::unique_ptr<fb::CallT> call(uint32_t kernel, std::vector<uint32_t> args,
                                std::vector<uint32_t> results);

/// Recomputes metadata_crc32 of an artifact file in place, as a forger
/// would; false when the FlatBuffer does not verify or has no checksum.
bool resign(std::string &bytes);

struct ArtifactBuilder {
  fb::ArtifactT artifact;
  std::vector<std::string> weightBytes;
  bool checksum = true; // false: leave metadata_crc32 out
  /// When set, replaces the computed weights_offset (before the checksum).
  std::optional<uint64_t> forceWeightsOffset;
  /// When set, the weights go to a side file of this name: build() leaves
  /// them out of the artifact and stores them in `sideSegment`.
  std::string sideFile;
  std::string sideSegment;

  /// An artifact for this host carrying codeObject(), with no kernel,
  /// weight or function yet.
  ArtifactBuilder();

  /// Declares a kernel; ranks empty = not declared.
  uint32_t addKernel(const std::string &symbol, uint32_t numArgs,
                     uint32_t numResults, std::vector<uint32_t> argRanks = {},
                     std::vector<uint32_t> resultRanks = {});

  /// Adds an f32 weight holding `values`; offsets are laid out by build().
  uint32_t addWeight(const std::string &name, std::vector<int64_t> shape,
                     const std::vector<float> &values);

  fb::FunctionT &addFunction(const std::string &name);

  /// The file: FlatBuffer, padding, weights segment.
  std::string build();
};

} // namespace mnemo::test

#endif // MNEMO_RUNTIME_UNITTESTS_ARTIFACTBUILDER_H

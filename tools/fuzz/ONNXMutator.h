//===- ONNXMutator.h - structure-aware mutation of ONNX models --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// libFuzzer's byte mutations rarely keep a protobuf parseable, and never
// keep a model consistent enough to reach the importer's op handlers, shape
// folding and raising. These mutate the parsed `ModelProto` instead: dims,
// element types, attributes, op types and domains, opset versions,
// initializers (sizes, raw data, external data) and graph edges, plus any
// field through protobuf's reflection, and serialize it again.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_FUZZ_ONNXMUTATOR_H
#define MNEMO_TOOLS_FUZZ_ONNXMUTATOR_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mnemo::fuzz {

/// The external data file that the fuzz target writes beside each model;
/// mutations point initializers into it.
inline constexpr const char *kExternalDataFile = "weights.bin";
inline constexpr size_t kExternalDataSize = 4096;

/// An operator the importer handles, from `since` on.
struct Operator {
  std::string domain, opType;
  int64_t since;
};

/// The operators that mutations name (the importer's registry).
void setOperatorVocabulary(std::vector<Operator> ops);

/// Mutates the model serialized in `data[0, size)` in place, keeping it at
/// most `maxSize` bytes; returns its new size. Inputs that do not parse as
/// a model get libFuzzer's byte mutations.
size_t mutateModel(uint8_t *data, size_t size, size_t maxSize,
                   unsigned seed);

/// A model made of `a` with nodes, initializers and value infos of `b`
/// spliced in; 0 when either does not parse or the result is too large.
size_t crossOverModels(const uint8_t *a, size_t sizeA, const uint8_t *b,
                       size_t sizeB, uint8_t *out, size_t maxSize,
                       unsigned seed);

} // namespace mnemo::fuzz

#endif // MNEMO_TOOLS_FUZZ_ONNXMUTATOR_H

//===- IntegerSteps.h - the mutators' steps from an integer -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The steps the structure-aware mutators take from an integer they found in
// an input: a neighbour, the negation, the double. They wrap, as a stored
// int64 does: the input may hold INT64_MAX, and `v + 1` on it was undefined
// behaviour in the mutator itself (UBSan, the checkpoint mutator,
// 2026-12-04).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_FUZZ_INTEGERSTEPS_H
#define MNEMO_TOOLS_FUZZ_INTEGERSTEPS_H

#include <cstdint>

namespace mnemo::fuzz {

enum class IntegerStep { Next, Previous, Negate, Double };

/// `v` after `step`, modulo 2^64.
inline int64_t applyStep(int64_t v, IntegerStep step) {
  uint64_t bits = static_cast<uint64_t>(v);
  switch (step) {
  case IntegerStep::Next:
    bits += 1;
    break;
  case IntegerStep::Previous:
    bits -= 1;
    break;
  case IntegerStep::Negate:
    bits = 0 - bits;
    break;
  case IntegerStep::Double:
    bits *= 2;
    break;
  }
  return static_cast<int64_t>(bits);
}

} // namespace mnemo::fuzz

#endif // MNEMO_TOOLS_FUZZ_INTEGERSTEPS_H

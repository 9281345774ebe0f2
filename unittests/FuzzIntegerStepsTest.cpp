//===- FuzzIntegerStepsTest.cpp - the mutators' integer steps -------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The structure-aware mutators step from integers found in their inputs,
// which may be the int64 extremes. The steps wrap; under the sanitized suite
// (scripts/test.sh --sanitize=address,undefined) an overflowing step is a
// report, as `v + 1` on INT64_MAX was in the checkpoint mutator.
//
//===----------------------------------------------------------------------===//

#include "IntegerSteps.h"

#include <gtest/gtest.h>

#include <limits>

using mnemo::fuzz::applyStep;
using mnemo::fuzz::IntegerStep;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(FuzzIntegerSteps, WrapAtTheExtremes) {
  EXPECT_EQ(applyStep(kMax, IntegerStep::Next), kMin);
  EXPECT_EQ(applyStep(kMin, IntegerStep::Previous), kMax);
  EXPECT_EQ(applyStep(kMin, IntegerStep::Negate), kMin);
  EXPECT_EQ(applyStep(kMax, IntegerStep::Double), -2);
  EXPECT_EQ(applyStep(kMin, IntegerStep::Double), 0);
}

TEST(FuzzIntegerSteps, OrdinaryValues) {
  EXPECT_EQ(applyStep(41, IntegerStep::Next), 42);
  EXPECT_EQ(applyStep(0, IntegerStep::Previous), -1);
  EXPECT_EQ(applyStep(7, IntegerStep::Negate), -7);
  EXPECT_EQ(applyStep(-3, IntegerStep::Double), -6);
}

} // namespace

//===- RopeFrequenciesTest.cpp - rotary frequency tables --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoDialect.h"
#include "dialects/Mnemo/IR/RopeFrequencies.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;

namespace {

class RopeFrequenciesTest : public ::testing::Test {
protected:
  RopeFrequenciesTest() { ctx.loadDialect<MnemoDialect>(); }

  RopeScalingAttr scaling(RopeScalingKind kind, double factor,
                          int64_t originalMax = 0, double low = 1.0,
                          double high = 4.0) {
    return RopeScalingAttr::get(&ctx, kind, factor, originalMax, low, high);
  }

  MLIRContext ctx;
};

TEST_F(RopeFrequenciesTest, DefaultIsGeometric) {
  SmallVector<double> f = computeRopeInverseFrequencies(10000.0, 8, {});
  ASSERT_EQ(f.size(), 4u);
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_DOUBLE_EQ(f[1], 0.1);   // 10000^(-2/8)
  EXPECT_DOUBLE_EQ(f[2], 0.01);  // 10000^(-4/8)
  EXPECT_NEAR(f[3], 0.001, 1e-15);
}

TEST_F(RopeFrequenciesTest, LinearDividesByFactor) {
  SmallVector<double> f = computeRopeInverseFrequencies(
      10000.0, 8, scaling(RopeScalingKind::Linear, 4.0));
  EXPECT_DOUBLE_EQ(f[0], 0.25);
  EXPECT_DOUBLE_EQ(f[1], 0.025);
}

TEST_F(RopeFrequenciesTest, Llama3KeepsHighAndScalesLowFrequencies) {
  // theta 500000, d 128, factor 8, original 8192, low 1, high 4 (Llama 3.1).
  RopeScalingAttr s = scaling(RopeScalingKind::Llama3, 8.0, 8192, 1.0, 4.0);
  SmallVector<double> base = computeRopeInverseFrequencies(500000.0, 128, {});
  SmallVector<double> f = computeRopeInverseFrequencies(500000.0, 128, s);
  const double pi = 3.14159265358979323846;
  int high = 0, low = 0, medium = 0;
  for (size_t k = 0; k < f.size(); ++k) {
    double wavelen = 2 * pi / base[k];
    if (wavelen < 8192.0 / 4.0) {
      EXPECT_DOUBLE_EQ(f[k], base[k]) << k;
      ++high;
    } else if (wavelen > 8192.0) {
      EXPECT_DOUBLE_EQ(f[k], base[k] / 8.0) << k;
      ++low;
    } else {
      double smooth = (8192.0 / wavelen - 1.0) / 3.0;
      EXPECT_NEAR(f[k], (1 - smooth) * base[k] / 8.0 + smooth * base[k],
                  1e-18)
          << k;
      ++medium;
    }
  }
  EXPECT_GT(high, 0);
  EXPECT_GT(low, 0);
  EXPECT_GT(medium, 0);
}

TEST_F(RopeFrequenciesTest, YarnBlendsExtrapolationAndInterpolation) {
  RopeScalingAttr s =
      RopeScalingAttr::get(&ctx, RopeScalingKind::Yarn, 4.0, 4096);
  SmallVector<double> base = computeRopeInverseFrequencies(10000.0, 64, {});
  SmallVector<double> f = computeRopeInverseFrequencies(10000.0, 64, s);
  // The fastest dimensions extrapolate (unchanged), the slowest interpolate.
  EXPECT_DOUBLE_EQ(f.front(), base.front());
  EXPECT_DOUBLE_EQ(f.back(), base.back() / 4.0);
  for (size_t k = 0; k < f.size(); ++k) {
    EXPECT_LE(f[k], base[k] * (1 + 1e-15));
    EXPECT_GE(f[k], base[k] / 4.0 * (1 - 1e-15));
  }
  // mscale = 0.1 ln(4) + 1.
  EXPECT_DOUBLE_EQ(s.getEffectiveAttentionFactor(), 0.1 * std::log(4.0) + 1.0);
}

TEST_F(RopeFrequenciesTest, DynamicNtkBaseGrowsOnlyPastTheOriginalContext) {
  EXPECT_DOUBLE_EQ(dynamicNtkBase(10000.0, 64, 2.0, 2048, 100), 10000.0);
  EXPECT_DOUBLE_EQ(dynamicNtkBase(10000.0, 64, 2.0, 2048, 2048), 10000.0);
  // seq 4096 = 2x the original: (2*2 - 1)^(64/62).
  EXPECT_DOUBLE_EQ(dynamicNtkBase(10000.0, 64, 2.0, 2048, 4096),
                   10000.0 * std::pow(3.0, 64.0 / 62.0));
}

} // namespace

//===- RopeScalingAttrTest.cpp - #mnemo.rope_scaling parsing ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoAttrs.h"
#include "dialects/Mnemo/IR/MnemoDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::mnemo;

namespace {

class RopeScalingAttrTest : public ::testing::Test {
protected:
  RopeScalingAttrTest() {
    ctx.loadDialect<MnemoDialect>();
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &ctx, [this](Diagnostic &d) {
          errors.push_back(d.str());
          return success();
        });
  }

  RopeScalingAttr parse(StringRef text) {
    return dyn_cast_or_null<RopeScalingAttr>(parseAttribute(text, &ctx));
  }

  std::string print(Attribute attr) {
    std::string s;
    llvm::raw_string_ostream os(s);
    attr.print(os);
    return s;
  }

  MLIRContext ctx;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::vector<std::string> errors;
};

TEST_F(RopeScalingAttrTest, ParsesDefaultsAndRoundTrips) {
  RopeScalingAttr a = parse(
      "#mnemo.rope_scaling<yarn, factor = 4.0, original_max_position = 4096>");
  ASSERT_TRUE(a);
  EXPECT_EQ(a.getKind(), RopeScalingKind::Yarn);
  EXPECT_DOUBLE_EQ(a.factor(), 4.0);
  EXPECT_EQ(a.getOriginalMaxPosition(), 4096);
  EXPECT_DOUBLE_EQ(a.betaFast(), 32.0);
  EXPECT_DOUBLE_EQ(a.betaSlow(), 1.0);
  EXPECT_TRUE(a.getTruncate());
  EXPECT_FALSE(a.getAttentionFactor().has_value());
  EXPECT_EQ(parse(print(a)), a);
}

TEST_F(RopeScalingAttrTest, RejectsParametersOfAnotherKind) {
  EXPECT_FALSE(parse("#mnemo.rope_scaling<linear, factor = 2.0, "
                     "beta_fast = 8.0>"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("'beta_fast' does not apply to 'linear'"),
            std::string::npos)
      << errors[0];
}

TEST_F(RopeScalingAttrTest, RejectsMissingOriginalContext) {
  EXPECT_FALSE(parse("#mnemo.rope_scaling<dynamic, factor = 2.0>"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("positive original_max_position"),
            std::string::npos)
      << errors[0];
}

} // namespace

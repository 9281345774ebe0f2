//===- ProfileTest.cpp - profile state, the hook, the C API -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"
#include "RuntimeTestUtil.h"

#include "hooks.h"
#include "profile.h"

#include <cstring>

using namespace mnemo::rt;
using namespace mnemo::test;

namespace {

TEST(Profile, AccumulatesRegions) {
  ProfileState p;
  p.reset(3);
  ASSERT_EQ(p.size(), 3u);
  p.begin(0, 100);
  p.end(0, 250);
  p.begin(0, 1000);
  p.end(0, 1010);
  p.begin(2, 50); // regions of different points may overlap
  p.begin(1, 60);
  p.end(1, 70);
  p.end(2, 90);
  EXPECT_EQ(p.calls(0), 2u);
  EXPECT_EQ(p.totalNs(0), 160u);
  EXPECT_EQ(p.calls(1), 1u);
  EXPECT_EQ(p.totalNs(1), 10u);
  EXPECT_EQ(p.calls(2), 1u);
  EXPECT_EQ(p.totalNs(2), 40u);
  p.reset(3);
  EXPECT_EQ(p.calls(0), 0u);
  EXPECT_EQ(p.totalNs(0), 0u);
}

TEST(Profile, IgnoresWhatWellFormedCodeNeverSends) {
  ProfileState p;
  p.reset(2);
  // Ids out of range.
  for (int64_t point : {int64_t(-1), int64_t(2), INT64_MAX, INT64_MIN}) {
    p.begin(point, 10);
    p.end(point, 20);
  }
  // An end without a begin, and a second end.
  p.end(0, 5);
  p.begin(1, 10);
  p.end(1, 30);
  p.end(1, 40);
  // A begin while inside restarts the region.
  p.begin(0, 100);
  p.begin(0, 150);
  p.end(0, 160);
  // A clock that went backwards counts the region, not the time.
  p.begin(0, 500);
  p.end(0, 400);
  EXPECT_EQ(p.calls(0), 2u);
  EXPECT_EQ(p.totalNs(0), 10u);
  EXPECT_EQ(p.calls(1), 1u);
  EXPECT_EQ(p.totalNs(1), 20u);
  // Before reset: no points at all.
  ProfileState empty;
  empty.begin(0, 1);
  empty.end(0, 2);
  EXPECT_EQ(empty.size(), 0u);
}

TEST(Profile, HookUsesTheContext) {
  ProfileState p;
  p.reset(2);
  hookProfile(0, 0); // no context: nothing
  hookProfile(0, 1);
  EXPECT_EQ(p.calls(0), 0u);
  ExecutionContext off{nullptr, nullptr}, on{nullptr, &p};
  {
    ScopedExecutionContext scope(&off);
    hookProfile(0, 0);
    hookProfile(0, 1);
  }
  EXPECT_EQ(p.calls(0), 0u);
  {
    ScopedExecutionContext scope(&on);
    int64_t before = ProfileState::nowNs();
    hookProfile(1, 0);
    hookProfile(1, 7); // not a phase
    hookProfile(1, 1);
    hookProfile(5, 0); // not a point
    hookProfile(5, 1);
    int64_t after = ProfileState::nowNs();
    EXPECT_EQ(p.calls(1), 1u);
    EXPECT_LE(p.totalNs(1), uint64_t(after - before));
  }
  EXPECT_EQ(p.calls(0), 0u);
}

/// "pass" (output = input) in an artifact naming `points`.
std::string buildWithPoints(std::vector<std::string> points) {
  ArtifactBuilder b;
  fb::FunctionT &f = b.addFunction("pass");
  f.inputs.push_back(sig("a", fb::DType::F32, {2}));
  f.outputs.push_back(sig("y", fb::DType::F32, {2}));
  f.output_slots = {0};
  b.artifact.profile_points = std::move(points);
  return b.build();
}

TEST(Profile, SessionEntries) {
  std::string bytes = buildWithPoints(
      {"linalg.generic (node /model/layers.0/MatMul)", "softmax"});
  mnemo_model_t *model = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(model, nullptr, &s));
  ASSERT_EQ(mnemo_session_profile_count(s), 2u);
  auto expectEntry = [&](size_t index, const char *name) {
    const char *got = nullptr;
    uint64_t calls = 99;
    double ms = 99;
    ASSERT_MNEMO_OK(mnemo_session_profile_entry(s, index, &got, &calls, &ms));
    EXPECT_STREQ(got, name);
    EXPECT_EQ(calls, 0u);
    EXPECT_EQ(ms, 0.0);
  };
  // Never enabled, enabled, disabled: this code reports nothing.
  expectEntry(0, "linalg.generic (node /model/layers.0/MatMul)");
  ASSERT_MNEMO_OK(mnemo_session_set_profiling(s, 1));
  float a[2] = {1, 2};
  int64_t shape[1] = {2};
  for (int run = 0; run < 2; ++run) {
    ASSERT_MNEMO_OK(
        mnemo_session_set_input(s, "a", MNEMO_DTYPE_F32, shape, 1, a));
    ASSERT_MNEMO_OK(mnemo_session_run(s));
  }
  expectEntry(1, "softmax");
  ASSERT_MNEMO_OK(mnemo_session_set_profiling(s, 0));
  expectEntry(1, "softmax");
  // Only the name, or nothing at all.
  const char *name = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_profile_entry(s, 1, &name, nullptr, nullptr));
  EXPECT_STREQ(name, "softmax");
  ASSERT_MNEMO_OK(mnemo_session_profile_entry(s, 0, nullptr, nullptr, nullptr));
  EXPECT_MNEMO_ERROR(mnemo_session_profile_entry(s, 2, &name, nullptr, nullptr),
                     MNEMO_STATUS_NOT_FOUND,
                     "mnemo_session_profile_entry: the model has 2 profile "
                     "points, no point 2");
  EXPECT_MNEMO_ERROR(
      mnemo_session_profile_entry(nullptr, 0, &name, nullptr, nullptr),
      MNEMO_STATUS_INVALID_ARGUMENT,
      "mnemo_session_profile_entry: NULL session");
  EXPECT_MNEMO_ERROR(mnemo_session_set_profiling(nullptr, 1),
                     MNEMO_STATUS_INVALID_ARGUMENT,
                     "mnemo_session_set_profiling: NULL session");
  EXPECT_EQ(mnemo_session_profile_count(nullptr), 0u);
  mnemo_session_free(s);
  mnemo_model_free(model);
}

TEST(Profile, ArtifactWithoutPoints) {
  std::string bytes = buildWithPoints({});
  mnemo_model_t *model = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(model, nullptr, &s));
  EXPECT_EQ(mnemo_session_profile_count(s), 0u);
  ASSERT_MNEMO_OK(mnemo_session_set_profiling(s, 1));
  EXPECT_MNEMO_ERROR(
      mnemo_session_profile_entry(s, 0, nullptr, nullptr, nullptr),
      MNEMO_STATUS_NOT_FOUND, "the model has 0 profile points");
  mnemo_session_free(s);
  mnemo_model_free(model);
}

} // namespace

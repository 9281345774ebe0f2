//===- HooksTest.cpp - filling a code object's hooks table ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Loading fills `mnemo_hooks` when the code object defines it, and loads an
// object without it (older artifacts) as before; a table of older code
// (two slots) gets two. The table is read back through dlsym, as the code
// would read it, and called. Then sessions run hand-written kernels that
// call the hooks (Inputs/hooks_kernels.c): loops split over the session's
// threads with results independent of their number, small and nested
// loops inline, profile points, sessions of different thread counts at
// once, buffers from the alloc hook reused run after run and released when
// their size goes unused, and the same kernels as older code, which
// mallocs its buffers.
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"
#include "RuntimeTestUtil.h"

#include "buffer_cache.h"
#include "hooks.h"
#include "model.h"
#include "parallel.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <thread>

using namespace mnemo::rt;
using namespace mnemo::test;

namespace {

/// An artifact of one function, "pass", around `code`.
std::string buildAround(const std::string &code) {
  ArtifactBuilder b;
  b.artifact.code.assign(code.begin(), code.end());
  b.addKernel(kSymbolA, 1, 1, {1}, {1}); // resolved, never called
  fb::FunctionT &f = b.addFunction("pass");
  f.inputs.push_back(sig("a", fb::DType::F32, {2}));
  f.outputs.push_back(sig("y", fb::DType::F32, {2}));
  f.output_slots = {0};
  return b.build();
}

void count(void *ctx, int64_t begin, int64_t end) {
  *static_cast<int64_t *>(ctx) += end - begin;
}

TEST(Hooks, FilledWhenTheCodeHasATable) {
  std::string bytes = buildAround(codeObjectWithHooks());
  mnemo_model_t *model = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  EXPECT_TRUE(model->code.hasHooks);
  void *p = dlsym(model->code.handle, kHooks);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(model->code.hasAllocHooks);
  auto *table = static_cast<HooksTable *>(p);
  EXPECT_EQ(table->parallelFor, &hookParallelFor);
  EXPECT_EQ(table->profile, &hookProfile);
  EXPECT_EQ(table->alloc, &hookAlloc);
  EXPECT_EQ(table->free, &hookFree);
  // Called as the code calls them, outside any session run: the loop runs
  // inline, the profile call is ignored, alloc gives a plain block.
  int64_t iterations = 0;
  table->parallelFor(count, &iterations, 123456, 1000);
  EXPECT_EQ(iterations, 123456);
  table->profile(0, 0);
  table->profile(0, 1);
  int64_t blocks = liveBufferBlocks();
  void *buffer = table->alloc(1000, 64);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer) % 64, 0u);
  EXPECT_EQ(liveBufferBlocks(), blocks + 1);
  table->free(buffer);
  table->free(nullptr);
  EXPECT_EQ(liveBufferBlocks(), blocks);
  // A second model of the same code gets its own table, filled the same.
  mnemo_model_t *second = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &second));
  auto *other = static_cast<HooksTable *>(dlsym(second->code.handle, kHooks));
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other, table);
  EXPECT_EQ(other->parallelFor, &hookParallelFor);
  mnemo_model_free(second);
  mnemo_model_free(model);
}

TEST(Hooks, CodeWithoutATableLoads) {
  std::string bytes = buildAround(codeObject());
  mnemo_model_t *model = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  EXPECT_FALSE(model->code.hasHooks);
  mnemo_model_free(model);
}

TEST(Hooks, ATooSmallTableIsRejected) {
  std::string bytes = buildAround(codeObjectWithHooks(8));
  mnemo_model_t *model = nullptr;
  EXPECT_MNEMO_ERROR(loadMemory(bytes, &model), MNEMO_STATUS_DATA_LOSS,
                     "<memory>: code: 'mnemo_hooks' is 8 bytes, the hooks "
                     "table takes 16");
  EXPECT_EQ(model, nullptr);
  // A larger one (a newer compiler's table) is fine: the runtime fills the
  // fields it knows.
  bytes = buildAround(codeObjectWithHooks(48));
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  EXPECT_TRUE(model->code.hasHooks);
  EXPECT_TRUE(model->code.hasAllocHooks);
  auto *words = static_cast<uint64_t *>(dlsym(model->code.handle, kHooks));
  ASSERT_NE(words, nullptr);
  EXPECT_EQ(words[4], 0u);
  EXPECT_EQ(words[5], 0u);
  mnemo_model_free(model);
}

TEST(Hooks, OlderCodesTableGetsTwoSlots) {
  // 16 bytes (older code) up to 31: parallel_for and profile only; what
  // follows the two slots is not the table's and stays as it was.
  for (uint64_t size : {16, 24, 31}) {
    std::string bytes = buildAround(codeObjectWithHooks(size));
    mnemo_model_t *model = nullptr;
    ASSERT_MNEMO_OK(loadMemory(bytes, &model));
    EXPECT_TRUE(model->code.hasHooks);
    EXPECT_FALSE(model->code.hasAllocHooks) << size;
    auto *table =
        static_cast<unsigned char *>(dlsym(model->code.handle, kHooks));
    ASSERT_NE(table, nullptr);
    void *slots[2];
    std::memcpy(slots, table, sizeof(slots));
    EXPECT_EQ(slots[0], reinterpret_cast<void *>(&hookParallelFor));
    EXPECT_EQ(slots[1], reinterpret_cast<void *>(&hookProfile));
    for (uint64_t i = 16; i < size; ++i)
      EXPECT_EQ(table[i], 0) << size << " bytes, byte " << i;
    mnemo_model_free(model);
  }
}

// Real code through the hooks: Inputs/hooks_kernels.c.

/// The bytes of the shared object at `path`.
std::string readKernels(const char *path) {
  std::string bytes;
  std::FILE *f = std::fopen(path, "rb");
  if (!f)
    return bytes;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), f)) > 0;)
    bytes.append(buffer, n);
  std::fclose(f);
  return bytes;
}

/// A model of `affine` (x: f32 [?] up to kMaxN -> f32) and its counters:
/// one call of the kernel, or with `chained` two (y = affine(affine(x)),
/// whose intermediate the session releases after the second call).
struct AffineModel {
  static constexpr int64_t kMaxN = 1 << 20;
  std::string bytes;
  mnemo_model_t *model = nullptr;
  int64_t *chunks = nullptr;
  int64_t *splitInner = nullptr;
  int64_t *misaligned = nullptr;

  /// `legacy`: the kernels as older code (two-slot table, malloc).
  void load(bool chained = false, bool legacy = false) {
    const char *path =
        legacy ? MNEMO_TEST_HOOKS_KERNELS_LEGACY : MNEMO_TEST_HOOKS_KERNELS;
    std::string code = readKernels(path);
    ASSERT_FALSE(code.empty()) << "cannot read " << path;
    ArtifactBuilder b;
    b.artifact.code.assign(code.begin(), code.end());
    uint32_t k = b.addKernel("affine", 1, 1, {1}, {1});
    fb::FunctionT &f = b.addFunction("affine");
    f.inputs.push_back(sig("x", fb::DType::F32, {-1}, {kMaxN}));
    f.outputs.push_back(sig("y", fb::DType::F32, {-1}, {kMaxN}));
    f.calls.push_back(call(k, {0}, {1}));
    if (chained)
      f.calls.push_back(call(k, {1}, {2}));
    f.output_slots = {chained ? 2u : 1u};
    b.artifact.profile_points = {"the loop", "the kernel"};
    bytes = b.build();
    ASSERT_MNEMO_OK(loadMemory(bytes, &model));
    ASSERT_TRUE(model->code.hasHooks);
    ASSERT_EQ(model->code.hasAllocHooks, !legacy);
    chunks =
        static_cast<int64_t *>(dlsym(model->code.handle, "mnemo_test_chunks"));
    splitInner = static_cast<int64_t *>(
        dlsym(model->code.handle, "mnemo_test_split_inner"));
    misaligned = static_cast<int64_t *>(
        dlsym(model->code.handle, "mnemo_test_misaligned"));
    ASSERT_TRUE(chunks && splitInner && misaligned);
  }
  ~AffineModel() { mnemo_model_free(model); }
};

/// x[i] = i % 1000 / 8, as runAffine feeds it, through affine once or
/// twice.
std::vector<float> expectedAffine(int64_t n, bool chained) {
  std::vector<float> want(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float y = 2 * (static_cast<float>(i % 1000) / 8) + static_cast<float>(i);
    want[i] = chained ? 2 * y + static_cast<float>(i) : y;
  }
  return want;
}

/// Runs `s` on x[i] = i / 8 (n of them); the output, empty on failure.
std::vector<float> runAffine(mnemo_session_t *s, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(i % 1000) / 8;
  mnemo_status_t status =
      mnemo_session_set_input(s, "x", MNEMO_DTYPE_F32, &n, 1, x.data());
  mnemo_tensor_t y;
  if (!status)
    status = mnemo_session_run(s);
  if (!status)
    status = mnemo_session_get_output(s, 0, &y);
  Status owned(status);
  EXPECT_TRUE(owned.ok()) << owned.message();
  return owned.ok() ? floats(y) : std::vector<float>();
}

TEST(HooksSession, LoopsSplitOverTheSessionsThreads) {
  AffineModel m;
  ASSERT_NO_FATAL_FAILURE(m.load());
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(m.model, nullptr, &s));
  constexpr int64_t n = 100000;
  std::vector<float> want(n);
  for (int64_t i = 0; i < n; ++i)
    want[i] = 2 * (static_cast<float>(i % 1000) / 8) + static_cast<float>(i);
  for (size_t threads : {1, 4, 3, 16, 2}) {
    ASSERT_MNEMO_OK(mnemo_session_set_threads(s, threads));
    for (int run = 0; run < 3; ++run) {
      *m.chunks = 0;
      ASSERT_EQ(runAffine(s, n), want) << threads << " threads";
      // The kernel's loop has a cost of 64 per iteration.
      EXPECT_EQ(*m.chunks, threads == 1 ? 1 : parallelChunks(n, 64, threads));
    }
  }
  // Small inputs run inline: n * cost (64) below the threshold.
  ASSERT_MNEMO_OK(mnemo_session_set_threads(s, 4));
  *m.chunks = 0;
  EXPECT_EQ(runAffine(s, 700).size(), 700u);
  EXPECT_EQ(*m.chunks, 1);
  // The loops inside the bodies always ran whole, inline.
  EXPECT_EQ(*m.splitInner, 0);
  EXPECT_EQ(*m.misaligned, 0);
  mnemo_session_free(s);
}

TEST(HooksSession, Profiling) {
  AffineModel m;
  ASSERT_NO_FATAL_FAILURE(m.load());
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(m.model, nullptr, &s));
  ASSERT_MNEMO_OK(mnemo_session_set_threads(s, 3));
  ASSERT_EQ(mnemo_session_profile_count(s), 2u);
  auto entry = [&](size_t index, uint64_t *calls, double *ms) {
    const char *name = nullptr;
    ASSERT_MNEMO_OK(mnemo_session_profile_entry(s, index, &name, calls, ms));
    EXPECT_STREQ(name, index == 0 ? "the loop" : "the kernel");
  };
  uint64_t calls = 0;
  double loopMs = 0, kernelMs = 0;
  runAffine(s, 50000); // not profiled
  entry(0, &calls, &loopMs);
  EXPECT_EQ(calls, 0u);
  ASSERT_MNEMO_OK(mnemo_session_set_profiling(s, 1));
  for (int run = 0; run < 5; ++run)
    runAffine(s, 50000);
  entry(0, &calls, &loopMs);
  EXPECT_EQ(calls, 5u);
  EXPECT_GT(loopMs, 0.0);
  entry(1, &calls, &kernelMs);
  EXPECT_EQ(calls, 5u);
  EXPECT_GE(kernelMs, loopMs); // the kernel's region encloses the loop's
  // Disabled: the counters stay.
  ASSERT_MNEMO_OK(mnemo_session_set_profiling(s, 0));
  runAffine(s, 50000);
  entry(0, &calls, &loopMs);
  EXPECT_EQ(calls, 5u);
  // Enabled again: from zero.
  ASSERT_MNEMO_OK(mnemo_session_set_profiling(s, 1));
  entry(1, &calls, &kernelMs);
  EXPECT_EQ(calls, 0u);
  EXPECT_EQ(kernelMs, 0.0);
  runAffine(s, 10);
  entry(1, &calls, &kernelMs);
  EXPECT_EQ(calls, 1u);
  mnemo_session_free(s);
}

TEST(HooksSession, CodeThatStaysLoadedShadowsNothing) {
  // The kernels' object is -z nodelete: freed, it stays loaded under the
  // path of its closed memfd, which the next memfd gets again.
  for (int round = 0; round < 3; ++round) {
    {
      AffineModel m;
      ASSERT_NO_FATAL_FAILURE(m.load());
    }
    std::string bytes = buildAround(codeObject());
    mnemo_model_t *model = nullptr;
    ASSERT_MNEMO_OK(loadMemory(bytes, &model));
    EXPECT_FALSE(model->code.hasHooks);
    EXPECT_EQ(dlsym(model->code.handle, "affine"), nullptr);
    mnemo_model_free(model);
  }
}

TEST(HooksSession, ManySessionsWithTheirOwnThreads) {
  AffineModel m;
  ASSERT_NO_FATAL_FAILURE(m.load());
  mnemo_session_t *reference = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(m.model, nullptr, &reference));
  ASSERT_MNEMO_OK(mnemo_session_set_threads(reference, 1));
  std::vector<float> want = runAffine(reference, 30000);
  mnemo_session_free(reference);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      mnemo_session_t *s = nullptr;
      if (!Status(mnemo_session_create(m.model, nullptr, &s)).ok() ||
          !Status(mnemo_session_set_threads(s, t % 4)).ok()) {
        ++mismatches;
        mnemo_session_free(s);
        return;
      }
      if (t % 2) // profiling on half of them
        mismatches += !Status(mnemo_session_set_profiling(s, 1)).ok();
      for (int run = 0; run < 40; ++run)
        mismatches += runAffine(s, 30000) != want;
      mnemo_session_free(s);
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(*m.splitInner, 0);
  EXPECT_EQ(*m.misaligned, 0);
}

// The alloc and free hooks through sessions. liveBufferBlocks() counts
// every block that exists, held or cached; the tests run one at a time, so
// a session's blocks are the difference from before it.

TEST(HooksSession, BuffersAreReusedRunAfterRun) {
  AffineModel m;
  ASSERT_NO_FATAL_FAILURE(m.load(/*chained=*/true));
  int64_t before = liveBufferBlocks();
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(m.model, nullptr, &s));
  ASSERT_MNEMO_OK(mnemo_session_set_threads(s, 4));
  constexpr int64_t n = 50000; // 200 KB buffers: malloc would mmap them
  std::vector<float> want = expectedAffine(n, true);
  int64_t chunks = 0;
  for (int run = 0; run < 10; ++run) {
    *m.chunks = 0;
    ASSERT_EQ(runAffine(s, n), want) << "run " << run;
    chunks = *m.chunks;
    // The output (held until the next run), the intermediate and the
    // scratch buffer (cached); the bodies' temporaries, allocated without
    // a context, went back to malloc.
    EXPECT_EQ(liveBufferBlocks() - before, 3) << "run " << run;
  }
  // Both loops were split over 4 threads.
  EXPECT_EQ(chunks, 2 * parallelChunks(n, 64, 4));
  EXPECT_EQ(*m.misaligned, 0);
  mnemo_session_free(s);
  EXPECT_EQ(liveBufferBlocks(), before);
}

TEST(HooksSession, BuffersOfUnusedSizesAgeOut) {
  AffineModel m;
  ASSERT_NO_FATAL_FAILURE(m.load(/*chained=*/true));
  int64_t before = liveBufferBlocks();
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(m.model, nullptr, &s));
  ASSERT_MNEMO_OK(mnemo_session_set_threads(s, 3));
  auto live = [&] { return liveBufferBlocks() - before; };
  // Runs 1-3 at n = 1000: two blocks of 4000 bytes, and the scratch one.
  for (int run = 1; run <= 3; ++run)
    ASSERT_EQ(runAffine(s, 1000), expectedAffine(1000, true));
  EXPECT_EQ(live(), 3);
  // Runs 4-7 at n = 2000 use two blocks of 8000; the 4000-byte ones stay
  // cached through four runs that do not ask for them...
  for (int run = 4; run <= 7; ++run) {
    ASSERT_EQ(runAffine(s, 2000), expectedAffine(2000, true));
    EXPECT_EQ(live(), 5) << "run " << run;
  }
  // ... and go when the fifth begins.
  ASSERT_EQ(runAffine(s, 2000), expectedAffine(2000, true));
  EXPECT_EQ(live(), 3);
  // A size used in every run never ages: the scratch block is the same
  // one all along, and so are the 8000-byte ones.
  for (int run = 9; run <= 20; ++run)
    ASSERT_EQ(runAffine(s, 2000), expectedAffine(2000, true));
  EXPECT_EQ(live(), 3);
  // Back to n = 1000: new 4000-byte blocks, and the 8000-byte ones age out
  // in turn.
  for (int run = 21; run <= 24; ++run)
    ASSERT_EQ(runAffine(s, 1000), expectedAffine(1000, true));
  EXPECT_EQ(live(), 5);
  ASSERT_EQ(runAffine(s, 1000), expectedAffine(1000, true));
  EXPECT_EQ(live(), 3);
  mnemo_session_free(s);
  EXPECT_EQ(liveBufferBlocks(), before);
}

TEST(HooksSession, BuffersSurviveAFailedRun) {
  AffineModel m;
  ASSERT_NO_FATAL_FAILURE(m.load());
  int64_t before = liveBufferBlocks();
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(m.model, nullptr, &s));
  ASSERT_EQ(runAffine(s, 100), expectedAffine(100, false));
  // No input bound: the run fails after releasing the last outputs into
  // the cache.
  EXPECT_MNEMO_ERROR(mnemo_session_run(s), MNEMO_STATUS_INVALID_ARGUMENT,
                     "input 'x': not set");
  EXPECT_EQ(liveBufferBlocks() - before, 2);
  ASSERT_EQ(runAffine(s, 100), expectedAffine(100, false));
  EXPECT_EQ(liveBufferBlocks() - before, 2);
  mnemo_session_free(s);
  EXPECT_EQ(liveBufferBlocks(), before);
}

TEST(HooksSession, OlderCodeMallocsItsBuffers) {
  // The same kernels with a two-slot table: the runtime leaves the code to
  // malloc and releases the results with free(), which a block of the
  // alloc hook would not survive.
  AffineModel m;
  ASSERT_NO_FATAL_FAILURE(m.load(/*chained=*/true, /*legacy=*/true));
  int64_t before = liveBufferBlocks();
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(m.model, nullptr, &s));
  ASSERT_MNEMO_OK(mnemo_session_set_threads(s, 4));
  for (int run = 0; run < 5; ++run)
    ASSERT_EQ(runAffine(s, 30000), expectedAffine(30000, true));
  EXPECT_EQ(liveBufferBlocks(), before);
  EXPECT_EQ(*m.misaligned, 0);
  mnemo_session_free(s);
}

} // namespace

//===- SessionTest.cpp - sessions through the C API -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Sessions over functions without calls: their outputs are their inputs and
// weights, so input binding and validation, output hand-out (copies of the
// caller's memory, zero-copy weights), dynamic dims and the model's
// lifetime are tested without running any code. Compiled kernels (results
// of several ranks, dynamic dims, many threads) are tested on mnemoc's
// artifacts in test/Runtime.
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"
#include "RuntimeTestUtil.h"

#include <cstring>
#include <thread>

using namespace mnemo::test;
using fb::DType;

namespace {

/// A loaded model and a session over it, freed at the end.
struct Loaded {
  std::string bytes;
  mnemo_model_t *model = nullptr;
  mnemo_session_t *session = nullptr;
  ~Loaded() {
    mnemo_session_free(session);
    mnemo_model_free(model);
  }
};

void load(ArtifactBuilder &b, Loaded &l, const char *function = nullptr) {
  l.bytes = b.build();
  ASSERT_MNEMO_OK(
      mnemo_model_load_memory(l.bytes.data(), l.bytes.size(), &l.model));
  ASSERT_MNEMO_OK(mnemo_session_create(l.model, function, &l.session));
}

mnemo_status_t setF32(mnemo_session_t *s, const char *name,
                      std::vector<int64_t> shape, const float *data) {
  return mnemo_session_set_input(s, name, MNEMO_DTYPE_F32, shape.data(),
                                 shape.size(), data);
}

/// The output `index` of the last run, as floats with its shape.
std::pair<std::vector<int64_t>, std::vector<float>> output(mnemo_session_t *s,
                                                           size_t index) {
  mnemo_tensor_t t;
  Status status(mnemo_session_get_output(s, index, &t));
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok())
    return {};
  EXPECT_EQ(t.dtype, MNEMO_DTYPE_F32);
  return {shapeOf(t), floats(t)};
}

/// "pass": inputs a and b, both f32 [2, 3]; outputs y = a and z = b.
Status tryLoad(const std::string &bytes) {
  mnemo_model_t *model = nullptr;
  Status status(mnemo_model_load_memory(bytes.data(), bytes.size(), &model));
  mnemo_model_free(model);
  return status;
}

void buildPass(ArtifactBuilder &b) {
  fb::FunctionT &f = b.addFunction("pass");
  f.inputs.push_back(sig("a", DType::F32, {2, 3}));
  f.inputs.push_back(sig("b", DType::F32, {2, 3}));
  f.outputs.push_back(sig("y", DType::F32, {2, 3}));
  f.outputs.push_back(sig("z", DType::F32, {2, 3}));
  f.output_slots = {0, 1};
}

TEST(Session, InputOutputsAreCopies) {
  ArtifactBuilder b;
  buildPass(b);
  Loaded l;
  load(b, l);
  EXPECT_EQ(mnemo_session_output_count(l.session), 2u);
  EXPECT_EQ(mnemo_session_function(l.session), 0u);
  EXPECT_STREQ(mnemo_model_function_name(l.model, 0), "pass");
  for (int run = 0; run < 3; ++run) {
    std::vector<float> a = {1, 2, 3, 4, 5, 6}, c = {10, 20, 30, 40, 50, 60};
    a[0] = static_cast<float>(run);
    ASSERT_MNEMO_OK(setF32(l.session, "a", {2, 3}, a.data()));
    ASSERT_MNEMO_OK(setF32(l.session, "b", {2, 3}, c.data()));
    ASSERT_MNEMO_OK(mnemo_session_run(l.session));
    // The outputs outlive the caller's buffers.
    std::fill(a.begin(), a.end(), -1.0f);
    a.clear();
    a.shrink_to_fit();
    c.assign(6, -1.0f);
    auto [shape, values] = output(l.session, 0);
    EXPECT_EQ(shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(values,
              (std::vector<float>{static_cast<float>(run), 2, 3, 4, 5, 6}));
    EXPECT_EQ(output(l.session, 1).second,
              (std::vector<float>{10, 20, 30, 40, 50, 60}));
  }
  mnemo_tensor_t t;
  ASSERT_MNEMO_OK(mnemo_session_get_output_by_name(l.session, "z", &t));
  EXPECT_EQ(t.size_bytes, 24u);
  EXPECT_EQ(t.rank, 2u);
  EXPECT_MNEMO_ERROR(mnemo_session_get_output_by_name(l.session, "w", &t),
                     MNEMO_STATUS_NOT_FOUND, "output 'w'");
  EXPECT_MNEMO_ERROR(mnemo_session_get_output(l.session, 2, &t),
                     MNEMO_STATUS_NOT_FOUND, "no output 2");
}

TEST(Session, WeightOutputsAreZeroCopy) {
  // Two outputs of different ranks, both weights, one of them twice.
  ArtifactBuilder b;
  uint32_t w = b.addWeight("w", {2, 2}, {5, 6, 7, 8});
  uint32_t v = b.addWeight("v", {3}, {-1, 0.5f, 2});
  fb::FunctionT &f = b.addFunction("f");
  f.weights = {w, v};
  f.outputs.push_back(sig("w", DType::F32, {2, 2}));
  f.outputs.push_back(sig("v", DType::F32, {3}));
  f.outputs.push_back(sig("w2", DType::F32, {2, 2}));
  f.output_slots = {0, 1, 0};
  Loaded l;
  load(b, l);
  const void *first = nullptr;
  for (int run = 0; run < 2; ++run) {
    ASSERT_MNEMO_OK(mnemo_session_run(l.session));
    mnemo_tensor_t t, t2;
    ASSERT_MNEMO_OK(mnemo_session_get_output(l.session, 0, &t));
    ASSERT_MNEMO_OK(mnemo_session_get_output(l.session, 2, &t2));
    EXPECT_EQ(floats(t), (std::vector<float>{5, 6, 7, 8}));
    // A weight output is the weight itself, 64-byte aligned in the segment.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 64, 0u);
    EXPECT_EQ(t2.data, t.data);
    if (run == 0)
      first = t.data;
    EXPECT_EQ(t.data, first);
    auto [shape, values] = output(l.session, 1);
    EXPECT_EQ(shape, std::vector<int64_t>{3});
    EXPECT_EQ(values, (std::vector<float>{-1, 0.5f, 2}));
  }
}

TEST(Session, ReplaceableWeights) {
  // "f" hands out a replaceable weight (an adapter's factor) and a plain one.
  ArtifactBuilder b;
  uint32_t a = b.addWeight("lora.m.A", {2, 2}, {1, 2, 3, 4});
  b.artifact.weights[a]->replaceable = true;
  uint32_t w = b.addWeight("w", {3}, {-1, 0.5f, 2});
  fb::FunctionT &f = b.addFunction("f");
  f.weights = {a, w};
  f.outputs.push_back(sig("a", DType::F32, {2, 2}));
  f.outputs.push_back(sig("w", DType::F32, {3}));
  f.output_slots = {0, 1};
  Loaded l;
  load(b, l);
  std::vector<float> next = {9, 8, 7, 6};
  int64_t shape[2] = {2, 2};
  ASSERT_MNEMO_OK(mnemo_model_set_weight(l.model, "lora.m.A", MNEMO_DTYPE_F32,
                                         shape, 2, next.data()));
  next.assign(4, 0); // the model copied the values
  // A session created now computes with the new values; the earlier one
  // keeps those it was created with.
  mnemo_session_t *later = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(l.model, nullptr, &later));
  ASSERT_MNEMO_OK(mnemo_session_run(later));
  EXPECT_EQ(output(later, 0).second, (std::vector<float>{9, 8, 7, 6}));
  EXPECT_EQ(output(later, 1).second, (std::vector<float>{-1, 0.5f, 2}));
  mnemo_session_free(later); // the replaced values are the model's
  ASSERT_MNEMO_OK(mnemo_session_run(l.session));
  EXPECT_EQ(output(l.session, 0).second, (std::vector<float>{1, 2, 3, 4}));

  float three[3] = {0, 0, 0};
  int64_t shape3[1] = {3};
  Status plain(mnemo_model_set_weight(l.model, "w", MNEMO_DTYPE_F32, shape3, 1,
                                      three));
  EXPECT_EQ(plain.code(), MNEMO_STATUS_INCOMPATIBLE);
  EXPECT_NE(plain.message().find("weight 'w' is not replaceable"),
            std::string::npos)
      << plain.message();
  Status wrong(mnemo_model_set_weight(l.model, "lora.m.A", MNEMO_DTYPE_F32,
                                      shape3, 1, three));
  EXPECT_EQ(wrong.code(), MNEMO_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(wrong.message().find("is f32 [2, 2], got f32 [3]"),
            std::string::npos)
      << wrong.message();
  Status dtype(mnemo_model_set_weight(l.model, "lora.m.A", MNEMO_DTYPE_F16,
                                      shape, 2, three));
  EXPECT_EQ(dtype.code(), MNEMO_STATUS_INVALID_ARGUMENT);
  Status missing(mnemo_model_set_weight(l.model, "lora.x.A", MNEMO_DTYPE_F32,
                                        shape, 2, three));
  EXPECT_EQ(missing.code(), MNEMO_STATUS_NOT_FOUND);
  Status null(mnemo_model_set_weight(l.model, "lora.m.A", MNEMO_DTYPE_F32,
                                     shape, 2, nullptr));
  EXPECT_EQ(null.code(), MNEMO_STATUS_INVALID_ARGUMENT);
}

TEST(Session, ReplaceableWeightNamesAreUnique) {
  ArtifactBuilder b;
  uint32_t a = b.addWeight("lora.m.A", {2}, {1, 2});
  uint32_t c = b.addWeight("lora.m.A", {2}, {3, 4});
  b.artifact.weights[a]->replaceable = true;
  b.artifact.weights[c]->replaceable = true;
  fb::FunctionT &f = b.addFunction("f");
  f.weights = {a, c};
  f.outputs.push_back(sig("a", DType::F32, {2}));
  f.output_slots = {0};
  Status status = tryLoad(b.build());
  EXPECT_EQ(status.code(), MNEMO_STATUS_DATA_LOSS);
  EXPECT_NE(status.message().find("replaceable weight 'lora.m.A' is listed "
                                  "twice"),
            std::string::npos)
      << status.message();
}

TEST(Session, DynamicDims) {
  ArtifactBuilder b;
  fb::FunctionT &f = b.addFunction("f");
  f.inputs.push_back(sig("a", DType::F32, {-1, 2}, {4, 2}));
  f.outputs.push_back(sig("y", DType::F32, {-1, 2}, {4, 2}));
  f.output_slots = {0};
  Loaded l;
  load(b, l);
  mnemo_tensor_info_t info;
  ASSERT_MNEMO_OK(mnemo_model_input_info(l.model, 0, 0, &info));
  EXPECT_STREQ(info.name, "a");
  EXPECT_EQ(info.rank, 2u);
  EXPECT_EQ(info.shape[0], -1);
  EXPECT_EQ(info.max_shape[0], 4);
  ASSERT_MNEMO_OK(mnemo_model_output_info(l.model, 0, 0, &info));
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(info.shape[0], -1);
  EXPECT_MNEMO_ERROR(mnemo_model_output_info(l.model, 0, 1, &info),
                     MNEMO_STATUS_NOT_FOUND, "");
  EXPECT_MNEMO_ERROR(mnemo_model_input_info(l.model, 1, 0, &info),
                     MNEMO_STATUS_NOT_FOUND, "");
  float a[] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int64_t rows : {3, 1, 4}) {
    ASSERT_MNEMO_OK(setF32(l.session, "a", {rows, 2}, a));
    ASSERT_MNEMO_OK(mnemo_session_run(l.session));
    auto [shape, y] = output(l.session, 0);
    EXPECT_EQ(shape, (std::vector<int64_t>{rows, 2}));
    EXPECT_EQ(y, std::vector<float>(a, a + rows * 2));
  }
  EXPECT_MNEMO_ERROR(setF32(l.session, "a", {5, 2}, a),
                     MNEMO_STATUS_INVALID_ARGUMENT,
                     "input 'a': dim 0 is 5, expected 1..4 (dynamic)");
  EXPECT_MNEMO_ERROR(setF32(l.session, "a", {0, 2}, a),
                     MNEMO_STATUS_INVALID_ARGUMENT,
                     "input 'a': dim 0 is 0, expected 1..4");
}

TEST(Session, InputErrors) {
  ArtifactBuilder b;
  buildPass(b);
  Loaded l;
  load(b, l);
  float a[6] = {};
  EXPECT_MNEMO_ERROR(setF32(l.session, "x", {2, 3}, a), MNEMO_STATUS_NOT_FOUND,
                     "input 'x': function 'pass' has no such input (inputs: "
                     "a, b)");
  int64_t shape[] = {2, 3};
  EXPECT_MNEMO_ERROR(
      mnemo_session_set_input(l.session, "a", MNEMO_DTYPE_I32, shape, 2, a),
      MNEMO_STATUS_INVALID_ARGUMENT, "input 'a': dtype i32, expected f32");
  EXPECT_MNEMO_ERROR(setF32(l.session, "a", {6}, a),
                     MNEMO_STATUS_INVALID_ARGUMENT,
                     "input 'a': rank 1, expected 2");
  EXPECT_MNEMO_ERROR(setF32(l.session, "a", {2, 4}, a),
                     MNEMO_STATUS_INVALID_ARGUMENT,
                     "input 'a': dim 1 is 4, expected 3");
  EXPECT_MNEMO_ERROR(setF32(l.session, "a", {2, 3}, nullptr),
                     MNEMO_STATUS_INVALID_ARGUMENT, "input 'a': NULL data");
  EXPECT_MNEMO_ERROR(
      setF32(l.session, "a", {2, 3},
             reinterpret_cast<const float *>(reinterpret_cast<char *>(a) + 1)),
      MNEMO_STATUS_INVALID_ARGUMENT, "not aligned to 4 bytes");
  mnemo_tensor_t t;
  EXPECT_MNEMO_ERROR(mnemo_session_get_output(l.session, 0, &t),
                     MNEMO_STATUS_INVALID_ARGUMENT, "has not run");
  ASSERT_MNEMO_OK(setF32(l.session, "a", {2, 3}, a));
  EXPECT_MNEMO_ERROR(mnemo_session_run(l.session),
                     MNEMO_STATUS_INVALID_ARGUMENT, "input 'b': not set");
  // A run consumes the bindings, failed or not.
  ASSERT_MNEMO_OK(setF32(l.session, "b", {2, 3}, a));
  EXPECT_MNEMO_ERROR(mnemo_session_run(l.session),
                     MNEMO_STATUS_INVALID_ARGUMENT, "input 'a': not set");
  // A failed run leaves no outputs behind, even after a good one.
  ASSERT_MNEMO_OK(setF32(l.session, "a", {2, 3}, a));
  ASSERT_MNEMO_OK(setF32(l.session, "b", {2, 3}, a));
  ASSERT_MNEMO_OK(mnemo_session_run(l.session));
  ASSERT_MNEMO_OK(mnemo_session_get_output(l.session, 0, &t));
  EXPECT_MNEMO_ERROR(mnemo_session_run(l.session),
                     MNEMO_STATUS_INVALID_ARGUMENT, "input 'a': not set");
  EXPECT_MNEMO_ERROR(mnemo_session_get_output(l.session, 0, &t),
                     MNEMO_STATUS_INVALID_ARGUMENT, "has not run");
  mnemo_session_t *other = nullptr;
  EXPECT_MNEMO_ERROR(mnemo_session_create(l.model, "nope", &other),
                     MNEMO_STATUS_NOT_FOUND, "no function 'nope'");
  EXPECT_EQ(other, nullptr);
}

TEST(Session, ModelOutlivesItsFree) {
  ArtifactBuilder b;
  buildPass(b);
  std::string bytes = b.build();
  mnemo_model_t *model = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(model, "pass", &s));
  mnemo_model_free(model);
  float a[6] = {1, 1, 1, 1, 1, 1}, c[6] = {2, 2, 2, 2, 2, 2};
  ASSERT_MNEMO_OK(setF32(s, "a", {2, 3}, a));
  ASSERT_MNEMO_OK(setF32(s, "b", {2, 3}, c));
  ASSERT_MNEMO_OK(mnemo_session_run(s));
  EXPECT_EQ(output(s, 1).second, std::vector<float>(6, 2.0f));
  mnemo_session_free(s);
}

TEST(Session, ManySessionsOverOneModel) {
  // The runtime's own state per session; compiled code on many threads is
  // tested by mnemo-runtime-threads-test.
  ArtifactBuilder b;
  buildPass(b);
  std::string bytes = b.build();
  mnemo_model_t *model = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      mnemo_session_t *s = nullptr;
      if (mnemo_status_t status = mnemo_session_create(model, nullptr, &s)) {
        mnemo_status_free(status);
        wrong[t] = -1;
        return;
      }
      int64_t shape[] = {2, 3};
      for (int run = 0; run < 200; ++run) {
        float a[6], c[6];
        for (int i = 0; i < 6; ++i) {
          a[i] = static_cast<float>(t * 1000 + run + i);
          c[i] = -a[i];
        }
        mnemo_status_t status =
            mnemo_session_set_input(s, "a", MNEMO_DTYPE_F32, shape, 2, a);
        if (!status)
          status =
              mnemo_session_set_input(s, "b", MNEMO_DTYPE_F32, shape, 2, c);
        if (!status)
          status = mnemo_session_run(s);
        mnemo_tensor_t y, z;
        if (!status)
          status = mnemo_session_get_output(s, 0, &y);
        if (!status)
          status = mnemo_session_get_output(s, 1, &z);
        if (status) {
          mnemo_status_free(status);
          ++wrong[t];
          continue;
        }
        for (int i = 0; i < 6; ++i) {
          wrong[t] += static_cast<const float *>(y.data)[i] != a[i];
          wrong[t] += static_cast<const float *>(z.data)[i] != -a[i];
        }
      }
      mnemo_session_free(s);
    });
  }
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(wrong, std::vector<int>(8, 0));
  mnemo_model_free(model);
}

} // namespace

// An input the function updates in place (a generation step's KV cache
// pool) binds only through set_inout, the others only through set_input;
// a bad in-place marking is refused at load.
TEST(Session, InOutInputs) {
  ArtifactBuilder b;
  buildPass(b);
  b.artifact.functions[0]->inputs[0]->in_place = true;
  Loaded l;
  load(b, l);
  EXPECT_EQ(mnemo_model_input_is_inout(l.model, 0, 0), 1);
  EXPECT_EQ(mnemo_model_input_is_inout(l.model, 0, 1), 0);
  EXPECT_EQ(mnemo_model_input_is_inout(l.model, 0, 2), 0);
  EXPECT_EQ(mnemo_model_input_is_inout(l.model, 1, 0), 0);
  float a[6] = {1, 2, 3, 4, 5, 6}, c[6] = {};
  int64_t shape[] = {2, 3};
  EXPECT_MNEMO_ERROR(setF32(l.session, "a", {2, 3}, a),
                     MNEMO_STATUS_INVALID_ARGUMENT,
                     "input 'a': function 'pass' updates it in place; bind "
                     "writable memory with mnemo_session_set_inout");
  EXPECT_MNEMO_ERROR(mnemo_session_set_inout(l.session, "b", MNEMO_DTYPE_F32,
                                             shape, 2, c),
                     MNEMO_STATUS_INVALID_ARGUMENT,
                     "input 'b': function 'pass' only reads it; bind it with "
                     "mnemo_session_set_input");
  EXPECT_MNEMO_ERROR(mnemo_session_set_inout(l.session, "a", MNEMO_DTYPE_F32,
                                             shape, 1, a),
                     MNEMO_STATUS_INVALID_ARGUMENT, "rank 1, expected 2");
  ASSERT_MNEMO_OK(mnemo_session_set_inout(l.session, "a", MNEMO_DTYPE_F32,
                                          shape, 2, a));
  ASSERT_MNEMO_OK(setF32(l.session, "b", {2, 3}, c));
  ASSERT_MNEMO_OK(mnemo_session_run(l.session));
  EXPECT_EQ(output(l.session, 0).second,
            (std::vector<float>{1, 2, 3, 4, 5, 6}));

  ArtifactBuilder bad;
  buildPass(bad);
  bad.artifact.functions[0]->outputs[0]->in_place = true;
  EXPECT_EQ(tryLoad(bad.build()).message(),
            "<memory>: function 'pass': output 'y' is marked in place, which "
            "only inputs can be");
  ArtifactBuilder window;
  buildPass(window);
  window.artifact.functions[0]->inputs[1]->kv_window = 16;
  EXPECT_EQ(tryLoad(window.build()).message(),
            "<memory>: function 'pass': input 'b': kv_window 16 on a tensor "
            "that is no pool");
  ArtifactBuilder every;
  buildPass(every);
  every.artifact.functions[0]->inputs[1]->kv_every = 4;
  EXPECT_EQ(tryLoad(every.build()).message(),
            "<memory>: function 'pass': input 'b': kv_every 4 on a tensor "
            "that is no pool");
  ArtifactBuilder last;
  buildPass(last);
  last.artifact.functions[0]->inputs[0]->in_place = true;
  last.artifact.functions[0]->inputs[0]->kv_last = -8;
  EXPECT_EQ(tryLoad(last.build()).message(),
            "<memory>: function 'pass': input 'a': kv_last -8 on a pool");
}

/// Generation steps `prefill` and `decode` with the step inputs, then
/// `tables` (block tables of entry pools, by name) and one pool of a row
/// per `every` tokens (0: per token), for the generator's signature checks.
static void buildSteps(ArtifactBuilder &b, std::vector<std::string> tables,
                       int64_t every) {
  // The logits: a weight, slot I (after the I inputs).
  uint32_t logits = b.addWeight("logits", {1, 1, 10}, std::vector<float>(10));
  for (const char *name : {"prefill", "decode"}) {
    fb::FunctionT &f = b.addFunction(name);
    int64_t s = std::strcmp(name, "decode") ? -1 : 1, maxS = s < 0 ? 64 : 1;
    f.inputs.push_back(sig("input_ids", DType::I64, {-1, s}, {4, maxS}));
    f.inputs.push_back(sig("positions", DType::I64, {-1, s}, {4, maxS}));
    f.inputs.push_back(sig("block_table", DType::I32, {-1, -1}, {4, 4}));
    f.inputs.push_back(sig("context_lengths", DType::I64, {-1}, {4}));
    for (const std::string &table : tables)
      f.inputs.push_back(sig(table, DType::I32, {-1, -1}, {4, 4}));
    auto pool = sig("cache.0.entries", DType::F32, {-1, 1, 16, 8},
                    {1 << 20, 1, 16, 8});
    pool->in_place = true;
    pool->kv_every = every;
    f.inputs.push_back(std::move(pool));
    f.weights = {logits};
    f.outputs.push_back(sig("logits", DType::F32, {1, 1, 10}));
    f.output_slots = {static_cast<uint32_t>(f.inputs.size())};
  }
}

// Pools of compressed entries are paged through a table of their own,
// named for their rate; each table pages some pool.
TEST(Generator, EntryTables) {
  struct Case {
    std::vector<std::string> tables;
    int64_t every;
    const char *error;
  } cases[] = {
      {{"block_table.every.x"}, 4,
       "an input between the step inputs and the cache pools is not a block "
       "table block_table.every.R [B, W] of i32 (R > 1)"},
      {{}, 4,
       "a cache pool of one row per R tokens has no block table "
       "block_table.every.R"},
      {{"block_table.every.4"}, 0, "a block table pages no cache pool"},
  };
  for (const Case &c : cases) {
    ArtifactBuilder b;
    buildSteps(b, c.tables, c.every);
    Loaded l;
    load(b, l, "prefill");
    mnemo_generator_t *g = nullptr;
    EXPECT_MNEMO_ERROR(mnemo_generator_create(l.model, nullptr, 4, &g),
                       MNEMO_STATUS_INCOMPATIBLE, c.error);
    EXPECT_EQ(g, nullptr);
  }
}

// A generator needs the generation steps, with their signature.
TEST(Generator, Misuse) {
  ArtifactBuilder b;
  buildPass(b);
  Loaded l;
  load(b, l);
  mnemo_generator_t *g = nullptr;
  EXPECT_MNEMO_ERROR(mnemo_generator_create(l.model, nullptr, 4, &g),
                     MNEMO_STATUS_NOT_FOUND,
                     "no generation steps (functions 'prefill' and 'decode'");
  size_t page = 0;
  EXPECT_MNEMO_ERROR(mnemo_generator_page_size_of(l.model, &page),
                     MNEMO_STATUS_NOT_FOUND, "no generation steps");
  EXPECT_MNEMO_ERROR(mnemo_generator_page_size_of(l.model, nullptr),
                     MNEMO_STATUS_INVALID_ARGUMENT, "NULL out_page_size");
  EXPECT_MNEMO_ERROR(mnemo_generator_create(l.model, nullptr, 0, &g),
                     MNEMO_STATUS_INVALID_ARGUMENT, "0 pages");
  EXPECT_MNEMO_ERROR(mnemo_generator_create(nullptr, nullptr, 4, &g),
                     MNEMO_STATUS_INVALID_ARGUMENT, "NULL model");
  EXPECT_EQ(g, nullptr);

  ArtifactBuilder steps;
  for (const char *name : {"prefill", "decode"}) {
    fb::FunctionT &f = steps.addFunction(name);
    f.inputs.push_back(sig("input_ids", DType::I64, {-1, -1}, {4, 64}));
    f.outputs.push_back(sig("logits", DType::I64, {-1, -1}, {4, 64}));
    f.output_slots = {0};
  }
  Loaded s;
  load(steps, s, "prefill");
  EXPECT_MNEMO_ERROR(mnemo_generator_create(s.model, nullptr, 4, &g),
                     MNEMO_STATUS_INCOMPATIBLE,
                     "function 'prefill' is not a generation step: expected "
                     "input_ids, positions, block_table, context_lengths and "
                     "cache pools, and one output");
  EXPECT_MNEMO_ERROR(mnemo_generator_step(nullptr, 0, nullptr, nullptr),
                     MNEMO_STATUS_INVALID_ARGUMENT, "NULL generator");
  EXPECT_EQ(mnemo_generator_cache_bytes(nullptr), 0u);
  EXPECT_MNEMO_ERROR(mnemo_generator_release(nullptr, 1),
                     MNEMO_STATUS_INVALID_ARGUMENT, "NULL generator");
  mnemo_generator_free(nullptr);
  EXPECT_EQ(mnemo_generator_vocab_size(nullptr), 0u);
}

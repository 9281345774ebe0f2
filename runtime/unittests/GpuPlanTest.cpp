//===- GpuPlanTest.cpp - PTX artifacts' plans and the device API -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A PTX artifact's launch plan is verified when the model loads (no CUDA
// driver needed): these build plans in memory and check what is accepted
// and what is refused, including fields a byte edit of a real artifact
// cannot reach (values at their defaults are not stored). The device API's
// CPU side and its misuse run here too; the CUDA side runs in
// test/Runtime/cuda*.test (driver stand-in) and on GPUs.
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"
#include "RuntimeTestUtil.h"

#include <functional>

using namespace mnemo::test;

namespace {

std::unique_ptr<fb::BufferT> buffer(fb::BufferKind kind, uint32_t index,
                                    uint64_t bytes) {
  auto b = std::make_unique<fb::BufferT>();
  b->kind = kind;
  b->index = index;
  b->bytes = bytes;
  return b;
}

/// A PTX artifact: y[4] = kernel(x[4], w[4]) through a temporary and a
/// tensor map of the input.
ArtifactBuilder gpuArtifact() {
  ArtifactBuilder b;
  b.artifact.code_format = fb::CodeFormat::PTX;
  b.artifact.target->triple = "nvptx64-nvidia-cuda";
  b.artifact.target->cpu = "sm_90a";
  std::string ptx = ".visible .entry k(.param .u64 a, .param .u64 b, "
                    ".param .u64 c, .param .u32 d)\n{ ret; }\n";
  b.artifact.code.assign(ptx.begin(), ptx.end());
  b.addWeight("w", {4}, {1, 2, 3, 4});
  uint32_t kernel = b.addKernel("k", 4, 0);
  fb::FunctionT &f = b.addFunction("forward");
  f.inputs.push_back(sig("x", fb::DType::F32, {4}));
  f.outputs.push_back(sig("y", fb::DType::F32, {4}));
  f.buffers.push_back(buffer(fb::BufferKind::INPUT, 0, 16));
  f.buffers.push_back(buffer(fb::BufferKind::WEIGHT, 0, 16));
  f.buffers.push_back(buffer(fb::BufferKind::TEMPORARY, 0, 16));
  auto map = buffer(fb::BufferKind::TENSOR_MAP, 0, 128);
  map->tensor_map = std::make_unique<fb::TensorMapT>();
  map->tensor_map->source = 0;
  map->tensor_map->dtype = fb::DType::F32;
  map->tensor_map->dims = {4};
  map->tensor_map->box = {4};
  f.buffers.push_back(std::move(map));
  auto launch = std::make_unique<fb::LaunchT>();
  launch->kernel = kernel;
  launch->grid = {1, 1, 1};
  launch->block = {32, 1, 1};
  launch->args = {fb::Argument(fb::ArgumentKind::BUFFER, 3),
                  fb::Argument(fb::ArgumentKind::BUFFER, 1),
                  fb::Argument(fb::ArgumentKind::BUFFER, 2),
                  fb::Argument(fb::ArgumentKind::I32, 7)};
  f.launches.push_back(std::move(launch));
  f.output_buffers = {2};
  return b;
}

void expectRefused(const std::function<void(fb::FunctionT &)> &mutate,
                   const std::string &fragment) {
  ArtifactBuilder b = gpuArtifact();
  mutate(*b.artifact.functions[0]);
  mnemo_model_t *model = nullptr;
  std::string bytes = b.build(); // Alive while the model is.
  Status status = loadMemory(bytes, &model);
  mnemo_model_free(model);
  EXPECT_EQ(status.code(), MNEMO_STATUS_DATA_LOSS) << status.message();
  EXPECT_NE(status.message().find(fragment), std::string::npos)
      << status.message();
}

TEST(GpuPlan, LoadsWithoutDriverAndRefusesCpuSessions) {
  ArtifactBuilder b = gpuArtifact();
  std::string bytes = b.build();
  mnemo_model_t *model = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  EXPECT_STREQ(mnemo_model_target_cpu(model), "sm_90a");
  EXPECT_EQ(mnemo_model_input_count(model, 0), 1u);
  mnemo_session_t *session = nullptr;
  EXPECT_MNEMO_ERROR(mnemo_session_create(model, nullptr, &session),
                     MNEMO_STATUS_INCOMPATIBLE,
                     "holds PTX for sm_90a; create the session on a CUDA "
                     "device");
  EXPECT_EQ(session, nullptr);
  mnemo_model_free(model);
}

TEST(GpuPlan, RefusesDefaultValuedDamage) {
  // Input 0 that does not exist, a weight index past the table, a launch
  // of kernel 0 when there is none: values a byte edit cannot store.
  expectRefused([](fb::FunctionT &f) { f.buffers[0]->index = 1; },
                "buffer 0: input 1 does not exist");
  expectRefused([](fb::FunctionT &f) { f.buffers[1]->index = 1; },
                "buffer 1: weight 1 does not exist or has other bytes");
  expectRefused([](fb::FunctionT &f) { f.buffers[1]->bytes = 12; },
                "buffer 1: weight 0 does not exist or has other bytes");
  expectRefused([](fb::FunctionT &f) { f.launches[0]->kernel = 1; },
                "launch 0: kernel 1 does not exist");
  expectRefused([](fb::FunctionT &f) { f.launches[0]->grid = {1, 1}; },
                "launch 0: grid and block need 3 sizes each");
  expectRefused([](fb::FunctionT &f) { f.launches[0]->block = {32, 32, 2}; },
                "launch 0: bad block size (at most 1024 threads)");
  expectRefused([](fb::FunctionT &f) { f.buffers[3]->tensor_map.reset(); },
                "buffer 3: a tensor map without its map");
  expectRefused(
      [](fb::FunctionT &f) {
        f.buffers[3]->tensor_map->dtype = fb::DType::I64;
      },
      "buffer 3: a tensor map's type is bf16, f16, f32 or f8e4m3");
  expectRefused([](fb::FunctionT &f) { f.buffers[3]->tensor_map->dims = {5}; },
                "buffer 3: a tensor map spans more than the 16 bytes of its "
                "source");
  expectRefused(
      [](fb::FunctionT &f) { f.buffers[3]->tensor_map->strides = {16}; },
      "a tensor map of rank 1 to 5 needs rank - 1 strides");
  // A size computed at run time: no static bytes beside it. A tensor map's
  // dim expressions: one per dim, each with a 0 value.
  expectRefused(
      [](fb::FunctionT &f) {
        f.exprs = {fb::Expr(fb::ExprOp::CONST, 0, 0, 0, 16)};
        f.buffers[2]->bytes_expr = 0;
      },
      "buffer 2: bytes_expr 0 (a temporary's expression)");
  expectRefused(
      [](fb::FunctionT &f) {
        f.exprs = {fb::Expr(fb::ExprOp::CONST, 0, 0, 0, 4)};
        f.buffers[3]->tensor_map->dims = {0};
        f.buffers[3]->tensor_map->dims_exprs = {0, -1};
      },
      "buffer 3: a tensor map's dim or stride expressions");
  expectRefused(
      [](fb::FunctionT &f) {
        f.buffers[3]->tensor_map->dims = {0};
        f.buffers[3]->tensor_map->dims_exprs = {0};
      },
      "buffer 3: a tensor map's dim or stride expressions");
  expectRefused(
      [](fb::FunctionT &f) {
        f.exprs = {fb::Expr(fb::ExprOp::ADD, 0, 1, 0, 0)};
      },
      "expression 0: an operand is not an earlier expression");
  expectRefused([](fb::FunctionT &f) { f.output_buffers = {2, 2}; },
                "2 output buffers for 1 outputs");
  expectRefused([](fb::FunctionT &f) { f.output_buffers = {3}; },
                "output 0: buffer 3 does not hold it");
  expectRefused([](fb::FunctionT &f) { f.output_buffers.clear(); },
                "no launch plan (buffers, launches and output buffers)");
}

/// Loads `b` with its GPU binaries mutated by `mutate`; expects `fragment`
/// in a DATA_LOSS error, or a load when it is empty.
void expectBinaries(ArtifactBuilder b,
                    const std::function<void(ArtifactBuilder &)> &mutate,
                    const std::string &fragment) {
  mutate(b);
  mnemo_model_t *model = nullptr;
  std::string bytes = b.build();
  Status status = loadMemory(bytes, &model);
  mnemo_model_free(model);
  if (fragment.empty()) {
    EXPECT_TRUE(status.ok()) << status.message();
    return;
  }
  EXPECT_EQ(status.code(), MNEMO_STATUS_DATA_LOSS) << status.message();
  EXPECT_NE(status.message().find(fragment), std::string::npos)
      << status.message();
}

std::unique_ptr<fb::GpuBinaryT> binary(const std::string &chip,
                                       const std::string &image) {
  auto g = std::make_unique<fb::GpuBinaryT>();
  g->chip = chip;
  g->image.assign(image.begin(), image.end());
  return g;
}

TEST(GpuPlan, GpuBinariesAreChecked) {
  const std::string elf = std::string("\x7f"
                                      "ELF") +
                          "rest of an image";
  auto with = [&](std::vector<std::pair<std::string, std::string>> list) {
    return [list](ArtifactBuilder &b) {
      for (const auto &[chip, image] : list)
        b.artifact.gpu_binaries.push_back(binary(chip, image));
    };
  };
  expectBinaries(gpuArtifact(), with({{"sm_90a", elf}}), "");
  expectBinaries(gpuArtifact(), with({{"sm_9x", elf}}),
                 "GPU binary 0 has no valid chip name");
  expectBinaries(gpuArtifact(), with({{"gfx90a", elf}}),
                 "GPU binary 0 has no valid chip name");
  expectBinaries(gpuArtifact(),
                 with({{"sm_90a", "\x7f"
                                  "EL"}}),
                 "the GPU binary for sm_90a is not an ELF image");
  expectBinaries(gpuArtifact(), with({{"sm_90a", "cubin"}}),
                 "the GPU binary for sm_90a is not an ELF image");
  expectBinaries(gpuArtifact(), with({{"sm_80", elf}}),
                 "a GPU binary for sm_80 in an artifact for sm_90a");
  expectBinaries(gpuArtifact(), with({{"sm_90a", elf}, {"sm_90a", elf}}),
                 "two GPU binaries for sm_90a");
  // A CPU artifact has no use for them.
  ArtifactBuilder cpu;
  uint32_t kernel = cpu.addKernel(kSymbolA, 1, 1, {1}, {1});
  fb::FunctionT &f = cpu.addFunction("f");
  f.inputs.push_back(sig("x", fb::DType::F32, {4}));
  f.outputs.push_back(sig("y", fb::DType::F32, {4}));
  f.calls.push_back(call(kernel, {0}, {1}));
  f.output_slots = {1};
  expectBinaries(std::move(cpu), with({{"sm_90a", elf}}),
                 "GPU binaries in an artifact of CPU code");
}

TEST(GpuPlan, DynamicTensorMapLoads) {
  // A map of a temporary sized at run time, its dim an expression: its
  // span is checked at each call, not when the plan loads.
  ArtifactBuilder b = gpuArtifact();
  fb::FunctionT &f = *b.artifact.functions[0];
  f.exprs = {fb::Expr(fb::ExprOp::CONST, 0, 0, 0, 16),
             fb::Expr(fb::ExprOp::CONST, 0, 0, 0, 4)};
  f.buffers[2]->bytes = 0;
  f.buffers[2]->bytes_expr = 0;
  f.buffers[3]->tensor_map->source = 2;
  f.buffers[3]->tensor_map->dims = {0};
  f.buffers[3]->tensor_map->dims_exprs = {1};
  mnemo_model_t *model = nullptr;
  std::string bytes = b.build(); // Alive while the model is.
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  mnemo_model_free(model);
}

TEST(GpuPlan, UnsupportedFunctionLoadsButCannotRun) {
  ArtifactBuilder b = gpuArtifact();
  fb::FunctionT &f = *b.artifact.functions[0];
  f.buffers.clear();
  f.launches.clear();
  f.output_buffers.clear();
  f.unsupported = "'forward': a value computed on the host";
  mnemo_model_t *model = nullptr;
  std::string bytes = b.build(); // Alive while the model is.
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  mnemo_device_t *cpu = nullptr;
  ASSERT_MNEMO_OK(mnemo_device_open("cpu", &cpu));
  mnemo_session_t *session = nullptr;
  EXPECT_MNEMO_ERROR(mnemo_session_create_on(model, nullptr, cpu, &session),
                     MNEMO_STATUS_UNAVAILABLE,
                     "<memory>: 'forward': a value computed on the host");
  mnemo_device_free(cpu);
  mnemo_model_free(model);
}

TEST(Device, NamesAndMisuse) {
  mnemo_device_t *device = nullptr;
  ASSERT_MNEMO_OK(mnemo_device_open("cpu", &device));
  EXPECT_EQ(mnemo_device_kind(device), MNEMO_DEVICE_CPU);
  EXPECT_STREQ(mnemo_device_name(device), "cpu");
  mnemo_device_free(device);
  for (const char *bad : {"gpu", "cuda:", "cuda:x", "cuda:-1", ""})
    EXPECT_MNEMO_ERROR(mnemo_device_open(bad, &device),
                       MNEMO_STATUS_INVALID_ARGUMENT,
                       "expected cpu, cuda or cuda:N");
  EXPECT_MNEMO_ERROR(mnemo_device_open(nullptr, &device),
                     MNEMO_STATUS_INVALID_ARGUMENT, "NULL name");
  mnemo_device_free(nullptr);
  EXPECT_EQ(mnemo_session_uses_cuda_graph(nullptr), 0);
  EXPECT_MNEMO_ERROR(mnemo_session_set_cuda_graph(nullptr, 1),
                     MNEMO_STATUS_INVALID_ARGUMENT, "NULL session");
}

TEST(Device, CpuSessionsOnTheCpuDevice) {
  // A CPU artifact runs on the "cpu" device as with mnemo_session_create;
  // the CUDA-only settings are refused on it.
  ArtifactBuilder b;
  b.addKernel(kSymbolA, 1, 1, {1}, {1});
  fb::FunctionT &f = b.addFunction("f");
  f.inputs.push_back(sig("x", fb::DType::F32, {2}));
  f.outputs.push_back(sig("y", fb::DType::F32, {2}));
  f.calls.push_back(call(0, {0}, {1}));
  f.output_slots = {1};
  mnemo_model_t *model = nullptr;
  std::string bytes = b.build(); // Alive while the model is.
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  mnemo_device_t *cpu = nullptr;
  ASSERT_MNEMO_OK(mnemo_device_open("cpu", &cpu));
  mnemo_session_t *session = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create_on(model, "f", cpu, &session));
  mnemo_device_free(cpu); // sessions do not keep the device
  EXPECT_MNEMO_ERROR(mnemo_session_set_cuda_graph(session, 1),
                     MNEMO_STATUS_INVALID_ARGUMENT,
                     "the session runs on the CPU");
  EXPECT_EQ(mnemo_session_uses_cuda_graph(session), 0);
  mnemo_session_free(session);
  mnemo_model_free(model);
}

} // namespace

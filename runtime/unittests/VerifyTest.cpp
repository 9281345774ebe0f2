//===- VerifyTest.cpp - artifacts the loader must reject --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"
#include "RuntimeTestUtil.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <functional>
#include <random>
#include <unistd.h>

using namespace mnemo::test;
using fb::DType;

namespace {

/// A valid artifact: a 2x2 input and weight, and a plan of two calls,
/// kSymbolA(a, w) then kSymbolB of its result (never run here).
void buildValid(ArtifactBuilder &b) {
  uint32_t add = b.addKernel(kSymbolA, 2, 1, {2, 2}, {2});
  uint32_t scale = b.addKernel(kSymbolB, 1, 1, {2}, {2});
  uint32_t w = b.addWeight("w", {2, 2}, {1, 2, 3, 4});
  fb::FunctionT &f = b.addFunction("f");
  f.inputs.push_back(sig("a", DType::F32, {2, 2}));
  f.weights = {w};
  f.outputs.push_back(sig("y", DType::F32, {2, 2}));
  f.calls.push_back(call(add, {0, 1}, {2}));
  f.calls.push_back(call(scale, {2}, {3}));
  f.output_slots = {3};
}

/// Loads `bytes` from memory; frees the model when it loads.
Status tryLoad(const std::string &bytes) {
  mnemo_model_t *model = nullptr;
  Status status = loadMemory(bytes, &model);
  mnemo_model_free(model);
  return status;
}

/// Builds the valid artifact after `mutate` and expects `code` and a
/// message containing `fragment`.
void expectRejected(const std::function<void(ArtifactBuilder &)> &mutate,
                    mnemo_status_code_t code, const std::string &fragment) {
  ArtifactBuilder b;
  buildValid(b);
  mutate(b);
  Status status = tryLoad(b.build());
  EXPECT_EQ(status.code(), code) << status.message();
  EXPECT_NE(status.message().find(fragment), std::string::npos)
      << status.message();
}

fb::FunctionT &fn(ArtifactBuilder &b) { return *b.artifact.functions[0]; }

TEST(Verify, ValidArtifactLoads) {
  ArtifactBuilder b;
  buildValid(b);
  std::string bytes = b.build();
  mnemo_model_t *model = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  EXPECT_STREQ(mnemo_model_target_triple(model), hostTriple());
  EXPECT_STREQ(mnemo_model_target_cpu(model), "generic");
  EXPECT_STREQ(mnemo_model_provenance(model, MNEMO_PROVENANCE_COMPILER),
               "unit test");
  EXPECT_STREQ(mnemo_model_provenance(model, MNEMO_PROVENANCE_SOURCE_HASH), "");
  EXPECT_EQ(mnemo_model_weights_size(model), 16u);
  EXPECT_EQ(mnemo_model_function_count(model), 1u);
  size_t index = 99;
  ASSERT_MNEMO_OK(mnemo_model_find_function(model, "f", &index));
  EXPECT_EQ(index, 0u);
  mnemo_model_free(model);
}

TEST(Verify, Checksum) {
  ArtifactBuilder b;
  buildValid(b);
  b.checksum = false;
  EXPECT_EQ(tryLoad(b.build()).message(),
            "<memory>: corrupt metadata: metadata_crc32 is missing");
  b.checksum = true;
  std::string bytes = b.build();
  // A provenance string changes: nothing else would notice.
  size_t at = bytes.find("unit test");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = 'U';
  Status status = tryLoad(bytes);
  EXPECT_EQ(status.code(), MNEMO_STATUS_DATA_LOSS);
  EXPECT_NE(status.message().find("corrupt metadata: metadata_crc32 is "),
            std::string::npos)
      << status.message();
  ASSERT_TRUE(resign(bytes));
  EXPECT_TRUE(tryLoad(bytes).ok());
}

TEST(Verify, HeaderAndTarget) {
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.abi_version = MNEMO_ARTIFACT_ABI_VERSION + 1;
      },
      MNEMO_STATUS_INCOMPATIBLE,
      "artifact ABI version " + std::to_string(MNEMO_ARTIFACT_ABI_VERSION + 1) +
          ", this runtime reads version " +
          std::to_string(MNEMO_ARTIFACT_ABI_VERSION) +
          "; recompile with a matching mnemoc");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.target->triple = std::string(hostTriple())[0] == 'x'
                                        ? "aarch64-unknown-linux-gnu"
                                        : "x86_64-unknown-linux-gnu";
      },
      MNEMO_STATUS_INCOMPATIBLE, "compiled for '");
  expectRejected([](ArtifactBuilder &b) { b.artifact.target.reset(); },
                 MNEMO_STATUS_DATA_LOSS, "no target triple");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.code_format = static_cast<fb::CodeFormat>(7);
      },
      MNEMO_STATUS_INCOMPATIBLE, "code format 7 is not supported");
  std::string notArtifact(64, 'x');
  EXPECT_NE(tryLoad(notArtifact)
                .message()
                .find("not a Mnemo artifact: file identifier 'xxxx', expected "
                      "'MNA1'"),
            std::string::npos);
}

TEST(Verify, Code) {
  expectRejected([](ArtifactBuilder &b) { b.artifact.code.clear(); },
                 MNEMO_STATUS_DATA_LOSS, "the artifact has no code");
  expectRejected([](ArtifactBuilder &b) { b.artifact.code.assign(100, 0x90); },
                 MNEMO_STATUS_DATA_LOSS, "code: not an ELF object");
  expectRejected(
      [](ArtifactBuilder &b) {
        uint16_t other =
            std::string(hostTriple())[0] == 'x' ? EM_AARCH64 : EM_X86_64;
        std::memcpy(&b.artifact.code[offsetof(Elf64_Ehdr, e_machine)], &other,
                    2);
      },
      MNEMO_STATUS_INCOMPATIBLE, "code: compiled for");
  expectRejected(
      [](ArtifactBuilder &b) {
        uint16_t phnum = 5000;
        std::memcpy(&b.artifact.code[offsetof(Elf64_Ehdr, e_phnum)], &phnum, 2);
      },
      MNEMO_STATUS_DATA_LOSS, "program headers lie outside the object");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.code.resize(b.artifact.code.size() - 1);
      },
      MNEMO_STATUS_DATA_LOSS, "code: segment 0 lies outside the object");
  expectRejected(
      [](ArtifactBuilder &b) {
        // The program headers say nothing is loadable.
        auto *header = reinterpret_cast<Elf64_Ehdr *>(b.artifact.code.data());
        for (unsigned i = 0; i < header->e_phnum; ++i) {
          auto *ph = reinterpret_cast<Elf64_Phdr *>(b.artifact.code.data() +
                                                    header->e_phoff) +
                     i;
          if (ph->p_type == PT_LOAD)
            ph->p_type = PT_NOTE;
        }
      },
      MNEMO_STATUS_DATA_LOSS, "code: the object has no loadable segment");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.code[offsetof(Elf64_Ehdr, e_type)] = ET_EXEC;
      },
      MNEMO_STATUS_DATA_LOSS, "code: not an ELF shared object (type 2)");
  expectRejected(
      [](ArtifactBuilder &b) { b.artifact.kernels[1]->symbol = "missing"; },
      MNEMO_STATUS_DATA_LOSS, "kernel 'missing' is not in the code object");
  // libc's malloc is found through the object's dependencies.
  expectRejected(
      [](ArtifactBuilder &b) { b.artifact.kernels[1]->symbol = "malloc"; },
      MNEMO_STATUS_DATA_LOSS,
      "kernel 'malloc' is not defined by the code object");
}

TEST(Verify, Weights) {
  expectRejected(
      [](ArtifactBuilder &b) { b.forceWeightsOffset = 1 << 20; },
      MNEMO_STATUS_DATA_LOSS,
      "truncated: the weights segment [1048576, +16) ends past the end of "
      "the file");
  expectRejected([](ArtifactBuilder &b) { b.forceWeightsOffset = 65; },
                 MNEMO_STATUS_DATA_LOSS,
                 "weights_offset 65 is not 64-byte aligned");
  expectRejected([](ArtifactBuilder &b) { b.forceWeightsOffset = 64; },
                 MNEMO_STATUS_DATA_LOSS, "overlaps the metadata");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.weights[0]->shape = {2, 3};
      },
      MNEMO_STATUS_DATA_LOSS,
      "weight 'w': size is 16 bytes, but [2, 3] of f32 takes 24");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.weights[0]->shape = {int64_t(1) << 40, int64_t(1) << 40};
      },
      MNEMO_STATUS_DATA_LOSS, "weight 'w': invalid shape");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.weights[0]->shape = {-2, -8};
      },
      MNEMO_STATUS_DATA_LOSS, "weight 'w': invalid shape [?, ?]");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.weights[0]->dtype = static_cast<DType>(42);
      },
      MNEMO_STATUS_DATA_LOSS, "weight 'w': unknown dtype 42");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.addWeight("v", {16}, std::vector<float>(16, 0));
        b.weightBytes.pop_back(); // declared, but not in the segment
      },
      MNEMO_STATUS_DATA_LOSS,
      "weight 'v': bytes [0, +64) lie outside the weights segment (16 "
      "bytes)");
  expectRejected([](ArtifactBuilder &b) { fn(b).weights = {3}; },
                 MNEMO_STATUS_DATA_LOSS,
                 "weight slot 0 refers to weight 3, the artifact has 1");
}

TEST(Verify, WeightSources) {
  // A weight read in place from a source the artifact does not list.
  expectRejected([](ArtifactBuilder &b) { b.artifact.weights[0]->source = 1; },
                 MNEMO_STATUS_DATA_LOSS, "weight 'w': weight source 1 of 0");
  auto source = [](const char *path, uint64_t size) {
    auto s = std::make_unique<mnemo::artifact::WeightSourceT>();
    s->path = path;
    s->size = size;
    return s;
  };
  expectRejected(
      [&](ArtifactBuilder &b) {
        b.artifact.weight_sources.push_back(source("", 0));
      },
      MNEMO_STATUS_DATA_LOSS, "weight source 0 has no valid path");
  expectRejected(
      [&](ArtifactBuilder &b) {
        b.artifact.weight_sources.push_back(
            source("/nonexistent/model.safetensors", 16));
      },
      MNEMO_STATUS_NOT_FOUND,
      "/nonexistent/model.safetensors: cannot open the weight source");
  // Relative to the artifact's directory: an artifact in memory has none.
  expectRejected(
      [&](ArtifactBuilder &b) {
        b.artifact.weight_sources.push_back(source("model.safetensors", 16));
      },
      MNEMO_STATUS_INVALID_ARGUMENT,
      "weights are read from 'model.safetensors' beside the artifact; load "
      "the artifact with mnemo_model_load_file");
}

TEST(Verify, Signatures) {
  expectRejected(
      [](ArtifactBuilder &b) {
        fn(b).inputs[0] = sig("a", DType::F32, {-1, 2});
        fn(b).inputs[0]->max_shape.clear();
      },
      MNEMO_STATUS_DATA_LOSS,
      "function 'f': input 'a' has dynamic dims but no max_shape");
  expectRejected(
      [](ArtifactBuilder &b) {
        fn(b).inputs[0]->max_shape = {2, 2, 2};
      },
      MNEMO_STATUS_DATA_LOSS, "max_shape has rank 3, shape has rank 2");
  expectRejected(
      [](ArtifactBuilder &b) {
        fn(b).inputs[0]->max_shape = {2, 3};
      },
      MNEMO_STATUS_DATA_LOSS, "max_shape[1] is 3 but the dim is static 2");
  expectRejected(
      [](ArtifactBuilder &b) {
        fn(b).inputs[0] = sig("a", DType::F32, {-1, 2}, {0, 2});
      },
      MNEMO_STATUS_DATA_LOSS, "a dynamic dim's max must be at least 1");
  expectRejected(
      [](ArtifactBuilder &b) {
        fn(b).inputs[0]->dtype = static_cast<DType>(10);
      },
      MNEMO_STATUS_DATA_LOSS, "input 'a': unknown dtype 10");
  expectRejected([](ArtifactBuilder &b) { fn(b).inputs[0]->name.clear(); },
                 MNEMO_STATUS_DATA_LOSS, "input 0 has no valid name");
  expectRejected(
      [](ArtifactBuilder &b) {
        fn(b).outputs.push_back(sig("y", DType::F32, {2, 2}));
        fn(b).output_slots.push_back(3);
      },
      MNEMO_STATUS_DATA_LOSS, "two outputs are named 'y'");
  expectRejected([](ArtifactBuilder &b) { b.addFunction("f"); },
                 MNEMO_STATUS_DATA_LOSS, "two functions are named 'f'");
  expectRejected([](ArtifactBuilder &b) { b.artifact.functions.clear(); },
                 MNEMO_STATUS_DATA_LOSS, "the artifact has no function");
  expectRejected(
      [](ArtifactBuilder &b) {
        fn(b).outputs[0]->dtype = DType::F16;
        fn(b).output_slots = {0};
      },
      MNEMO_STATUS_DATA_LOSS, "output 'y' is f16, its slot 0 holds f32");
}

TEST(Verify, Plan) {
  expectRejected([](ArtifactBuilder &b) { fn(b).calls[1]->kernel = 2; },
                 MNEMO_STATUS_DATA_LOSS,
                 "call 1 uses kernel 2, the artifact has 2");
  expectRejected(
      [](ArtifactBuilder &b) {
        fn(b).calls[0]->args = {0, 3};
      },
      MNEMO_STATUS_DATA_LOSS,
      "call 0 (kernel 'symbol_a') argument 1 is slot 3, not "
      "defined before the call (2 slots so far)");
  expectRejected([](ArtifactBuilder &b) { fn(b).calls[0]->args = {0}; },
                 MNEMO_STATUS_DATA_LOSS,
                 "call 0 passes 1 arguments and 1 results to kernel "
                 "'symbol_a', which takes 2 and 1");
  expectRejected([](ArtifactBuilder &b) { fn(b).calls[1]->results = {7}; },
                 MNEMO_STATUS_DATA_LOSS,
                 "result 0 is slot 7, expected 3 (results take the next "
                 "slots in plan order)");
  expectRejected([](ArtifactBuilder &b) { fn(b).output_slots = {4}; },
                 MNEMO_STATUS_DATA_LOSS,
                 "output 'y' is slot 4, which is never defined (4 slots)");
  expectRejected([](ArtifactBuilder &b) { fn(b).output_slots.clear(); },
                 MNEMO_STATUS_DATA_LOSS,
                 "function 'f': 0 output slots for 1 outputs");
  expectRejected(
      [](ArtifactBuilder &b) { b.artifact.kernels[1]->arg_ranks = {3}; },
      MNEMO_STATUS_DATA_LOSS,
      "call 1 (kernel 'symbol_b') argument 0 is slot 2 of rank 2, the "
      "kernel takes rank 3");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.kernels[1]->result_ranks = {1, 2};
      },
      MNEMO_STATUS_DATA_LOSS,
      "kernel 'symbol_b': result_ranks has 2 entries for 1 descriptors");
  expectRejected(
      [](ArtifactBuilder &b) { b.artifact.kernels[0]->result_ranks = {1}; },
      MNEMO_STATUS_DATA_LOSS,
      "argument 0 is slot 2 of rank 1, the kernel takes rank 2");
  expectRejected(
      [](ArtifactBuilder &b) { b.artifact.kernels[1]->result_ranks = {3}; },
      MNEMO_STATUS_DATA_LOSS, "output 'y' has rank 2, its slot 3 has rank 3");
  // Without declared ranks, an intermediate's layout is unknown.
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.kernels[0]->result_ranks.clear();
        b.artifact.kernels[1]->arg_ranks.clear();
      },
      MNEMO_STATUS_DATA_LOSS,
      "call 0 (kernel 'symbol_a') result 0 has no known rank");
  expectRejected(
      [](ArtifactBuilder &b) { b.artifact.kernels[0]->symbol.clear(); },
      MNEMO_STATUS_DATA_LOSS, "kernel 0 has no valid symbol");
}

TEST(Verify, ProfilePoints) {
  ArtifactBuilder b;
  buildValid(b);
  b.artifact.profile_points = {"profile-point-zero", "profile-point-one"};
  std::string bytes = b.build();
  mnemo_model_t *model = nullptr;
  ASSERT_MNEMO_OK(loadMemory(bytes, &model));
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(model, nullptr, &s));
  ASSERT_EQ(mnemo_session_profile_count(s), 2u);
  const char *name = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_profile_entry(s, 1, &name, nullptr, nullptr));
  EXPECT_STREQ(name, "profile-point-one");
  mnemo_session_free(s);
  mnemo_model_free(model);

  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.profile_points = {"a", ""};
      },
      MNEMO_STATUS_DATA_LOSS, "<memory>: profile point 1 has no valid name");
  expectRejected(
      [](ArtifactBuilder &b) {
        b.artifact.profile_points = {std::string("a\0b", 3)};
      },
      MNEMO_STATUS_DATA_LOSS, "profile point 0 has no valid name");

  // A string that runs past the buffer, or lost its terminator: the
  // FlatBuffers verifier stops it before the checksum is even read.
  size_t at = bytes.find("profile-point-one");
  ASSERT_NE(at, std::string::npos);
  std::string corrupt = bytes;
  uint32_t length = 0x7ffffff0;
  std::memcpy(&corrupt[at - 4], &length, 4);
  EXPECT_EQ(tryLoad(corrupt).message(),
            "<memory>: corrupt metadata: the FlatBuffer fails verification");
  corrupt = bytes;
  corrupt[at + std::strlen("profile-point-one")] = 'x';
  EXPECT_EQ(tryLoad(corrupt).message(),
            "<memory>: corrupt metadata: the FlatBuffer fails verification");
  // A changed character is structurally fine: the checksum catches it.
  corrupt = bytes;
  corrupt[at] = 'P';
  EXPECT_NE(tryLoad(corrupt).message().find("metadata_crc32 is"),
            std::string::npos);
}

TEST(Verify, SideWeightsFile) {
  std::string pattern = ::testing::TempDir() + "mnemo-runtime-test-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  ASSERT_NE(mkdtemp(buffer.data()), nullptr);
  const char *dir = buffer.data();
  std::string artifactPath = std::string(dir) + "/model.mnemo";
  std::string weightsPath = std::string(dir) + "/model.weights";
  ArtifactBuilder b;
  buildValid(b);
  // A second function hands out the weight itself: its values come from
  // the side file.
  fb::FunctionT &w = b.addFunction("w");
  w.weights = {0};
  w.outputs.push_back(sig("w", DType::F32, {2, 2}));
  w.output_slots = {0};
  b.sideFile = "model.weights";
  std::string bytes = b.build();
  auto write = [](const std::string &path, const std::string &contents) {
    std::FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(contents.data(), 1, contents.size(), f);
    std::fclose(f);
  };
  write(artifactPath, bytes);
  mnemo_model_t *model = nullptr;
  EXPECT_MNEMO_ERROR(mnemo_model_load_file(artifactPath.c_str(), &model),
                     MNEMO_STATUS_NOT_FOUND,
                     "model.weights: cannot open the weights file");
  write(weightsPath, b.sideSegment.substr(0, 70));
  EXPECT_MNEMO_ERROR(mnemo_model_load_file(artifactPath.c_str(), &model),
                     MNEMO_STATUS_DATA_LOSS,
                     "model.weights: truncated: the weights segment");
  write(weightsPath, b.sideSegment);
  ASSERT_MNEMO_OK(mnemo_model_load_file(artifactPath.c_str(), &model));
  EXPECT_EQ(mnemo_model_weights_size(model), 16u);
  mnemo_session_t *s = nullptr;
  ASSERT_MNEMO_OK(mnemo_session_create(model, "w", &s));
  ASSERT_MNEMO_OK(mnemo_session_run(s));
  mnemo_tensor_t y;
  ASSERT_MNEMO_OK(mnemo_session_get_output(s, 0, &y));
  EXPECT_EQ(floats(y), (std::vector<float>{1, 2, 3, 4}));
  mnemo_session_free(s);
  mnemo_model_free(model);
  EXPECT_MNEMO_ERROR(loadMemory(bytes, &model), MNEMO_STATUS_INVALID_ARGUMENT,
                     "load the artifact with mnemo_model_load_file");
  b.sideFile = "/etc/passwd";
  EXPECT_MNEMO_ERROR(loadMemory(b.build(), &model), MNEMO_STATUS_DATA_LOSS,
                     "weights_file '/etc/passwd' is not a relative path");
  unlink(artifactPath.c_str());
  unlink(weightsPath.c_str());
  rmdir(dir);
  EXPECT_MNEMO_ERROR(mnemo_model_load_file(artifactPath.c_str(), &model),
                     MNEMO_STATUS_NOT_FOUND, "cannot open the artifact");
  EXPECT_MNEMO_ERROR(mnemo_model_load_file("/", &model),
                     MNEMO_STATUS_INVALID_ARGUMENT, "not a regular file");
}

TEST(Verify, EveryTruncationIsRejected) {
  ArtifactBuilder b;
  buildValid(b);
  std::string bytes = b.build();
  for (size_t n = 0; n < bytes.size(); ++n) {
    Status status = tryLoad(bytes.substr(0, n));
    ASSERT_FALSE(status.ok()) << "length " << n;
    ASSERT_EQ(status.code(), MNEMO_STATUS_DATA_LOSS) << status.message();
  }
}

TEST(Verify, EveryMetadataByteFlipIsRejected) {
  // With the checksum, any change to the metadata is caught.
  ArtifactBuilder b;
  buildValid(b);
  std::string bytes = b.build();
  size_t metadataEnd = 4 + *reinterpret_cast<const uint32_t *>(bytes.data());
  for (size_t i = 0; i < metadataEnd; ++i) {
    std::string corrupt = bytes;
    corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
    Status status = tryLoad(corrupt);
    ASSERT_FALSE(status.ok()) << "offset " << i;
  }
}

TEST(Verify, ResignedByteFlipsNeverCrash) {
  // With the checksum forged after the flip, only the structural checks
  // stand: a flip may go unnoticed (a name, a value), but loading must not
  // crash. The code object's bytes are left alone: a forged code object is
  // code, and loading runs it.
  ArtifactBuilder b;
  buildValid(b);
  std::string bytes = b.build();
  const fb::Artifact *a = fb::GetSizePrefixedArtifact(bytes.data());
  size_t codeBegin =
      a->code()->data() - reinterpret_cast<const uint8_t *>(bytes.data());
  size_t codeEnd = codeBegin + a->code()->size();
  size_t rejected = 0, total = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i >= codeBegin && i < codeEnd)
      continue;
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::string corrupt = bytes;
      corrupt[i] = static_cast<char>(corrupt[i] ^ mask);
      resign(corrupt);
      rejected += !tryLoad(corrupt).ok();
      ++total;
    }
  }
  EXPECT_GT(rejected, total / 4);
}

TEST(Verify, RandomBytesAreRejected) {
  std::mt19937 rng(1234);
  for (size_t size : {1u, 11u, 12u, 16u, 100u, 4096u, 65536u}) {
    for (int round = 0; round < 20; ++round) {
      std::string bytes(size, '\0');
      for (char &c : bytes)
        c = static_cast<char>(rng());
      EXPECT_FALSE(tryLoad(bytes).ok());
      // Random bytes behind a plausible header.
      if (size >= 12) {
        uint32_t n = static_cast<uint32_t>(size - 4);
        std::memcpy(&bytes[0], &n, 4);
        std::memcpy(&bytes[8], "MNA1", 4);
        Status status = tryLoad(bytes);
        EXPECT_EQ(status.code(), MNEMO_STATUS_DATA_LOSS) << status.message();
      }
    }
  }
  Status empty(mnemo_model_load_memory(nullptr, 0, nullptr));
  EXPECT_EQ(empty.code(), MNEMO_STATUS_INVALID_ARGUMENT);
  mnemo_model_t *model = nullptr;
  EXPECT_MNEMO_ERROR(mnemo_model_load_memory(nullptr, 0, &model),
                     MNEMO_STATUS_DATA_LOSS, "<memory>: the artifact is empty");
}

TEST(Verify, StatusBasics) {
  EXPECT_EQ(mnemo_status_code(nullptr), MNEMO_STATUS_OK);
  EXPECT_STREQ(mnemo_status_message(nullptr), "");
  mnemo_status_free(nullptr);
  EXPECT_STREQ(mnemo_status_code_name(MNEMO_STATUS_DATA_LOSS), "DATA_LOSS");
  EXPECT_STREQ(mnemo_status_code_name(static_cast<mnemo_status_code_t>(99)),
               "UNKNOWN");
  EXPECT_EQ(mnemo_dtype_size(MNEMO_DTYPE_BF16), 2u);
  EXPECT_EQ(mnemo_dtype_size(static_cast<mnemo_dtype_t>(99)), 0u);
  EXPECT_STREQ(mnemo_dtype_name(MNEMO_DTYPE_BOOL), "bool");
  // Names from a file cannot break the one-line message.
  expectRejected(
      [](ArtifactBuilder &b) { b.artifact.kernels[1]->symbol = "a\nb"; },
      MNEMO_STATUS_DATA_LOSS, "kernel 'a b' is not in the code object");
}

} // namespace

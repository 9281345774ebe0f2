//===- fuzz_load.cpp - libFuzzer target for artifact loading ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to mnemo_model_load_memory, as they are and with
// the metadata checksum recomputed (to reach the checks behind it). Any
// input must give a model or a one-line error status; a crash, a sanitizer
// report or a leak is a bug. In this build the runtime checks code objects
// but does not dlopen them. The main build makes it as bin/mnemo-fuzz-load
// (tools/fuzz) and the tests run it for a bounded time on CPU and GPU
// artifacts (test/Fuzz/load.test). Standalone, with UBSan too:
//   cmake -G Ninja -S runtime -B build-runtime/fuzz -DMNEMO_RUNTIME_FUZZ=ON \
//     -DMNEMO_RUNTIME_SANITIZERS=address,undefined
//   ninja -C build-runtime/fuzz mnemo-runtime-fuzz-load
//   build-runtime/fuzz/bin/mnemo-runtime-fuzz-load CORPUS_DIR
// seeding CORPUS_DIR with real artifacts.
//
//===----------------------------------------------------------------------===//

#include "crc32.h"

#include "artifact_generated.h"

#include "mnemo/runtime.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

/// How deep the inputs got: loads, and the loader's distinct diagnostics
/// (numbers and names masked), printed at exit. A mutator that keeps
/// artifacts well formed reaches many more of the loader's checks.
struct Reach {
  size_t inputs = 0, loaded = 0, seen = 0;
  std::unordered_set<std::string> diagnostics;

  /// Records the message with quoted names dropped and each word that
  /// holds a digit (numbers, hex checksums) as `N`.
  void note(const char *message) {
    std::string kind, word;
    bool quoted = false, digits = false;
    for (const char *c = message;; ++c) {
      if (*c == '\'') {
        quoted = !quoted;
        continue;
      }
      if (quoted && *c)
        continue;
      if (*c == ' ' || !*c) {
        kind += digits ? std::string("N") : word;
        word.clear();
        digits = false;
        if (!*c)
          break;
        kind += ' ';
        continue;
      }
      word += *c;
      digits |= std::isdigit(static_cast<unsigned char>(*c)) != 0;
    }
    diagnostics.insert(kind);
    if (std::getenv("MNEMO_FUZZ_LOAD_DIAGNOSTICS") && diagnostics.size() > seen)
      std::fprintf(stderr, "mnemo-fuzz-load: new diagnostic: %s\n",
                   kind.c_str());
    seen = diagnostics.size();
  }

  static Reach &get() {
    static Reach *reach = [] {
      std::atexit([] {
        Reach &r = get();
        std::fprintf(stderr,
                     "mnemo-fuzz-load: %zu loads, %zu succeeded, %zu distinct "
                     "diagnostics\n",
                     r.inputs, r.loaded, r.diagnostics.size());
      });
      return new Reach;
    }();
    return *reach;
  }
};

/// Loads one buffer and walks what it exposes.
void load(const uint8_t *data, size_t size) {
  mnemo_model_t *model = nullptr;
  mnemo_status_t status = mnemo_model_load_memory(data, size, &model);
  ++Reach::get().inputs;
  if (status) {
    if (std::strchr(mnemo_status_message(status), '\n') ||
        mnemo_status_code(status) == MNEMO_STATUS_OK)
      __builtin_trap();
    Reach::get().note(mnemo_status_message(status));
    mnemo_status_free(status);
    return;
  }
  ++Reach::get().loaded;
  // Walk everything introspection exposes.
  for (size_t f = 0; f < mnemo_model_function_count(model); ++f) {
    for (size_t i = 0; i < mnemo_model_input_count(model, f); ++i) {
      mnemo_tensor_info_t info;
      mnemo_status_free(mnemo_model_input_info(model, f, i, &info));
    }
    mnemo_session_t *session = nullptr;
    mnemo_status_free(mnemo_session_create(
        model, mnemo_model_function_name(model, f), &session));
    for (size_t i = 0; i < mnemo_session_profile_count(session); ++i) {
      const char *name = nullptr;
      mnemo_status_free(
          mnemo_session_profile_entry(session, i, &name, nullptr, nullptr));
      if (!name || std::strlen(name) == 0)
        __builtin_trap();
    }
    mnemo_session_free(session);
  }
  mnemo_model_free(model);
}

/// A copy of `data` with metadata_crc32 recomputed, as a forger would do,
/// so that mutations reach the structural checks behind the checksum.
bool resigned(const uint8_t *data, size_t size, std::vector<uint8_t> &out) {
  namespace fb = ::mnemo::artifact;
  uint32_t n;
  if (size < 12 || (std::memcpy(&n, data, 4), n > size - 4) || n < 8)
    return false;
  out.assign(data, data + size);
  flatbuffers::Verifier verifier(out.data(), size_t(n) + 4);
  if (!fb::VerifySizePrefixedArtifactBuffer(verifier))
    return false;
  const fb::Artifact *a = fb::GetSizePrefixedArtifact(out.data());
  if (!a->metadata_crc32())
    return false;
  size_t at = reinterpret_cast<const flatbuffers::Table *>(a)->GetAddressOf(
                  fb::Artifact::VT_METADATA_CRC32) -
              out.data();
  std::memset(&out[at], 0, 4);
  uint32_t crc = mnemo::rt::crc32(0, out.data() + 4, n);
  std::memcpy(&out[at], &crc, 4);
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  load(data, size);
  std::vector<uint8_t> copy;
  if (resigned(data, size, copy))
    load(copy.data(), copy.size());
  return 0;
}

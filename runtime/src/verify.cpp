//===- verify.cpp - checking an artifact before use -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "verify.h"

#include "code_object.h"
#include "crc32.h"
#include "dtype.h"
#include "status.h"
#include "support/String.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

using namespace mnemo::rt;
namespace fb = ::mnemo::artifact;

static_assert(FLATBUFFERS_LITTLEENDIAN,
              "artifacts are little-endian and read in place");

namespace {

constexpr uint64_t kAlignment = 64;
constexpr uint32_t kUnknownRank = UINT32_MAX;
/// Slots are uint32 in the schema; keeping the count well below that leaves
/// room for arithmetic on it.
constexpr uint64_t kMaxSlots = uint64_t(1) << 30;
/// Tables the FlatBuffers verifier accepts (its default, 1M, is reachable
/// by a model with many weights).
constexpr uint32_t kMaxTables = 1u << 24;

/// Whether `s` is present, non-empty and free of NUL bytes (it is used as a
/// C string).
bool isName(const flatbuffers::String *s) {
  return s && s->size() > 0 && std::strlen(s->c_str()) == s->size();
}

/// Product of `dims` times `elementSize`, false on overflow.
bool byteSize(const Vector<int64_t> &dims, uint64_t elementSize,
              uint64_t *out) {
  uint64_t n = elementSize;
  for (int64_t d : dims)
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return false;
  *out = n;
  return true;
}

Vector<int64_t> toVector(const flatbuffers::Vector<int64_t> *v) {
  // The verifier aligns a vector's length, not its 8-byte elements: copy
  // the (little-endian) bytes rather than load possibly misaligned int64s.
  Vector<int64_t> out(v ? v->size() : 0);
  if (!out.empty())
    std::memcpy(out.data(), v->Data(), out.size() * sizeof(int64_t));
  return out;
}


/// The index of the first name that repeats an earlier one, or -1.
int64_t firstRepeat(const Vector<std::string_view> &names) {
  Vector<std::pair<std::string_view, int64_t>> sorted;
  sorted.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i)
    sorted.emplace_back(names[i], static_cast<int64_t>(i));
  std::sort(sorted.begin(), sorted.end());
  int64_t first = -1;
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i].first == sorted[i - 1].first &&
        (first < 0 || sorted[i].second < first))
      first = sorted[i].second; // a later copy; equal names sort by index
  return first;
}

/// The printable form of the 4 identifier bytes.
String formatIdentifier(const uint8_t *p) {
  String s;
  for (int i = 0; i < 4; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') {
      s += static_cast<char>(p[i]);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", p[i]);
      s += hex;
    }
  }
  return s;
}

/// The architecture part of a target triple, normalized.
std::string_view tripleArch(const char *triple) {
  std::string_view t(triple);
  std::string_view arch = t.substr(0, t.find('-'));
  if (arch == "arm64")
    return "aarch64";
  if (arch == "amd64")
    return "x86_64";
  return arch;
}

/// Checks Artifact.metadata_crc32.
mnemo_status_t verifyChecksum(const char *what, const uint8_t *data,
                              uint64_t bufferSize, const fb::Artifact &a) {
  flatbuffers::Optional<uint32_t> expected = a.metadata_crc32();
  if (!expected)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: corrupt metadata: metadata_crc32 is missing", what);
  // The field's bytes count as zeros.
  const uint8_t *field =
      reinterpret_cast<const flatbuffers::Table &>(a).GetAddressOf(
          fb::Artifact::VT_METADATA_CRC32);
  auto at = static_cast<size_t>(field - data);
  const uint8_t zeros[4] = {};
  uint32_t crc = crc32(0, data + 4, at - 4);
  crc = crc32(crc, zeros, sizeof(zeros));
  crc = crc32(crc, field + 4, static_cast<size_t>(bufferSize) - at - 4);
  if (crc != *expected)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: corrupt metadata: metadata_crc32 is %08x, the "
                      "bytes give %08x",
                      what, *expected, crc);
  return nullptr;
}

/// Reads and checks one signature tensor.
mnemo_status_t verifyTensorSig(const char *what, const char *function,
                               const char *role, size_t index,
                               const fb::TensorSig *sig, TensorSig &out) {
  if (!sig)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: function '%s': %s %zu is missing", what, function,
                      role, index);
  if (!isName(sig->name()))
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: function '%s': %s %zu has no valid name", what,
                      function, role, index);
  const char *name = sig->name()->c_str();
  auto dtype = static_cast<unsigned>(sig->dtype());
  if (!isValidDType(dtype))
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: function '%s': %s '%s': unknown dtype %u", what,
                      function, role, name, dtype);
  out.name = name;
  out.dtype = static_cast<mnemo_dtype_t>(dtype);
  out.inPlace = sig->in_place();
  out.kvWindow = sig->kv_window();
  out.kvEvery = sig->kv_every();
  out.kvLast = sig->kv_last();
  const std::pair<const char *, int64_t> uses[] = {
      {"kv_window", out.kvWindow},
      {"kv_every", out.kvEvery},
      {"kv_last", out.kvLast}};
  for (auto [field, value] : uses)
    if (value < 0 || (value && !out.inPlace))
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': %s '%s': %s %lld on %s", what,
                        function, role, name, field,
                        static_cast<long long>(value),
                        out.inPlace ? "a pool" : "a tensor that is no pool");
  if (out.inPlace && std::strcmp(role, "input") != 0)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: function '%s': %s '%s' is marked in place, which "
                      "only inputs can be",
                      what, function, role, name);
  out.shape = toVector(sig->shape());
  if (out.shape.size() > kMaxRank)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: function '%s': %s '%s': rank %zu exceeds %u", what,
                      function, role, name, out.shape.size(), kMaxRank);
  bool dynamic = false;
  for (size_t i = 0; i < out.shape.size(); ++i) {
    if (out.shape[i] < -1)
      return makeStatus(
          MNEMO_STATUS_DATA_LOSS, "%s: function '%s': %s '%s': dim %zu is %lld",
          what, function, role, name, i, static_cast<long long>(out.shape[i]));
    dynamic |= out.shape[i] == -1;
  }
  if (!sig->max_shape()) {
    if (dynamic)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': %s '%s' has dynamic dims but no "
                        "max_shape",
                        what, function, role, name);
    out.maxShape = out.shape;
    return nullptr;
  }
  out.maxShape = toVector(sig->max_shape());
  if (out.maxShape.size() != out.shape.size())
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: function '%s': %s '%s': max_shape has rank %zu, "
                      "shape has rank %zu",
                      what, function, role, name, out.maxShape.size(),
                      out.shape.size());
  for (size_t i = 0; i < out.shape.size(); ++i) {
    int64_t d = out.shape[i], m = out.maxShape[i];
    if (d >= 0 && m != d)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': %s '%s': max_shape[%zu] is %lld "
                        "but the dim is static %lld",
                        what, function, role, name, i,
                        static_cast<long long>(m), static_cast<long long>(d));
    if (d < 0 && m < 1)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': %s '%s': max_shape[%zu] is %lld, "
                        "a dynamic dim's max must be at least 1",
                        what, function, role, name, i,
                        static_cast<long long>(m));
  }
  return nullptr;
}

mnemo_status_t verifyWeights(mnemo_model_t &model, const fb::Artifact &a) {
  const char *what = model.name.c_str();
  const auto *weights = a.weights();
  if (!weights)
    return nullptr;
  model.weights.resize(weights->size());
  for (flatbuffers::uoffset_t k = 0; k < weights->size(); ++k) {
    const fb::Weight *w = weights->Get(k);
    WeightInfo &info = model.weights[k];
    if (!w || !isName(w->name()))
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weight %u has no valid name", what, k);
    const char *name = w->name()->c_str();
    auto dtype = static_cast<unsigned>(w->dtype());
    if (!isValidDType(dtype))
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weight '%s': unknown dtype %u", what, name, dtype);
    info.name = name;
    info.replaceable = w->replaceable();
    if (info.replaceable)
      for (flatbuffers::uoffset_t j = 0; j < k; ++j)
        if (model.weights[j].replaceable &&
            std::strcmp(model.weights[j].name, name) == 0)
          return makeStatus(MNEMO_STATUS_DATA_LOSS,
                            "%s: replaceable weight '%s' is listed twice",
                            what, name);
    info.dtype = static_cast<mnemo_dtype_t>(dtype);
    info.shape = toVector(w->shape());
    if (info.shape.size() > kMaxRank)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weight '%s': rank %zu exceeds %u", what, name,
                        info.shape.size(), kMaxRank);
    uint64_t bytes = 0;
    if (!byteSize(info.shape, mnemo_dtype_size(info.dtype), &bytes))
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weight '%s': invalid shape %s", what, name,
                        formatShape(info.shape).c_str());
    if (w->size() != bytes)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weight '%s': size is %llu bytes, but %s of %s "
                        "takes %llu",
                        what, name, static_cast<unsigned long long>(w->size()),
                        formatShape(info.shape).c_str(),
                        mnemo_dtype_name(info.dtype),
                        static_cast<unsigned long long>(bytes));
    // In the weights segment (64-byte aligned), or in place in a weight
    // source (aligned for the element type).
    uint32_t source = w->source();
    if (source > model.weightSources.size())
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weight '%s': weight source %u of %zu", what,
                        name, source, model.weightSources.size());
    const uint8_t *base = model.weightsBase;
    uint64_t extent = model.weightsSize;
    uint64_t alignment = kAlignment;
    const char *where = "the weights segment";
    if (source > 0) {
      const Region &file = model.weightSources[source - 1];
      base = file.data;
      extent = file.size;
      alignment = mnemo_dtype_size(info.dtype);
      where = "its weight source";
    }
    if (w->offset() % alignment != 0)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weight '%s': offset %llu is not %llu-byte "
                        "aligned",
                        what, name,
                        static_cast<unsigned long long>(w->offset()),
                        static_cast<unsigned long long>(alignment));
    if (w->offset() > extent || w->size() > extent - w->offset())
      return makeStatus(
          MNEMO_STATUS_DATA_LOSS,
          "%s: weight '%s': bytes [%llu, +%llu) lie outside %s (%llu bytes)",
          what, name, static_cast<unsigned long long>(w->offset()),
          static_cast<unsigned long long>(w->size()), where,
          static_cast<unsigned long long>(extent));
    info.data = base + w->offset();
    info.size = w->size();
  }
  return nullptr;
}

/// The ranks a kernel declares, when it does.
struct KernelRanks {
  const flatbuffers::Vector<uint32_t> *args = nullptr;
  const flatbuffers::Vector<uint32_t> *results = nullptr;
};

mnemo_status_t verifyRankList(const char *what, const char *symbol,
                              const char *field,
                              const flatbuffers::Vector<uint32_t> *ranks,
                              uint32_t expected) {
  if (!ranks)
    return nullptr;
  if (ranks->size() != expected)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: kernel '%s': %s has %u entries for %u descriptors",
                      what, symbol, field, ranks->size(), expected);
  for (uint32_t r : *ranks)
    if (r > kMaxRank)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: kernel '%s': %s has rank %u, more than %u", what,
                        symbol, field, r, kMaxRank);
  return nullptr;
}

mnemo_status_t verifyKernels(mnemo_model_t &model, const fb::Artifact &a,
                             Vector<KernelRanks> &ranks) {
  const char *what = model.name.c_str();
  const auto *kernels = a.kernels();
  if (!kernels)
    return nullptr;
  model.kernels.resize(kernels->size());
  ranks.resize(kernels->size());
  for (flatbuffers::uoffset_t k = 0; k < kernels->size(); ++k) {
    const fb::Kernel *kernel = kernels->Get(k);
    if (!kernel || !isName(kernel->symbol()))
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: kernel %u has no valid symbol", what, k);
    KernelInfo &info = model.kernels[k];
    info.symbol = kernel->symbol()->c_str();
    info.numArgs = kernel->num_args();
    info.numResults = kernel->num_results();
    MNEMO_RETURN_IF_ERROR(verifyRankList(what, info.symbol, "arg_ranks",
                                         kernel->arg_ranks(), info.numArgs));
    MNEMO_RETURN_IF_ERROR(verifyRankList(what, info.symbol, "result_ranks",
                                         kernel->result_ranks(),
                                         info.numResults));
    ranks[k] = {kernel->arg_ranks(), kernel->result_ranks()};
  }
  return nullptr;
}

/// Fails when two entries of `sigs` share a name.
mnemo_status_t checkUniqueNames(const char *what, const char *function,
                                const char *role,
                                const Vector<TensorSig> &sigs) {
  Vector<std::string_view> names;
  for (const TensorSig &sig : sigs)
    names.push_back(sig.name);
  int64_t repeat = firstRepeat(names);
  if (repeat >= 0)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: function '%s': two %ss are named '%s'", what,
                      function, role, sigs[repeat].name);
  return nullptr;
}

/// Fills `plan.calls` and the result slots' ranks (unknown where the kernel
/// declares none).
mnemo_status_t verifyCalls(const mnemo_model_t &model,
                           const Vector<KernelRanks> &kernelRanks,
                           const fb::Function &f, FunctionPlan &plan) {
  const char *what = model.name.c_str();
  const char *name = plan.name;
  const auto *calls = f.calls();
  if (!calls)
    return nullptr;
  plan.calls.resize(calls->size());
  uint64_t defined = plan.slotRanks.size();
  for (flatbuffers::uoffset_t c = 0; c < calls->size(); ++c) {
    const fb::Call *call = calls->Get(c);
    if (!call)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': call %u is missing", what, name, c);
    if (call->kernel() >= model.kernels.size())
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': call %u uses kernel %u, the "
                        "artifact has %zu",
                        what, name, c, call->kernel(), model.kernels.size());
    const KernelInfo &kernel = model.kernels[call->kernel()];
    const KernelRanks &ranks = kernelRanks[call->kernel()];
    CallPlan &step = plan.calls[c];
    step.kernel = call->kernel();
    uint32_t numArgs = call->args() ? call->args()->size() : 0;
    uint32_t numResults = call->results() ? call->results()->size() : 0;
    if (numArgs != kernel.numArgs || numResults != kernel.numResults)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': call %u passes %u arguments and "
                        "%u results to kernel '%s', which takes %u and %u",
                        what, name, c, numArgs, numResults, kernel.symbol,
                        kernel.numArgs, kernel.numResults);
    for (uint32_t i = 0; i < numArgs; ++i) {
      uint32_t slot = call->args()->Get(i);
      if (slot >= defined)
        return makeStatus(MNEMO_STATUS_DATA_LOSS,
                          "%s: function '%s': call %u (kernel '%s') argument "
                          "%u is slot %u, not defined before the call (%llu "
                          "slots so far)",
                          what, name, c, kernel.symbol, i, slot,
                          static_cast<unsigned long long>(defined));
      step.args.push_back(slot);
    }
    if (defined + numResults > kMaxSlots)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': more than %llu slots", what, name,
                        static_cast<unsigned long long>(kMaxSlots));
    for (uint32_t j = 0; j < numResults; ++j) {
      uint32_t slot = call->results()->Get(j);
      if (slot != defined + j)
        return makeStatus(MNEMO_STATUS_DATA_LOSS,
                          "%s: function '%s': call %u (kernel '%s') result "
                          "%u is slot %u, expected %llu (results take the "
                          "next slots in plan order)",
                          what, name, c, kernel.symbol, j, slot,
                          static_cast<unsigned long long>(defined + j));
      step.results.push_back(slot);
      plan.slotRanks.push_back(ranks.results ? ranks.results->Get(j)
                                             : kUnknownRank);
    }
    defined += numResults;
  }
  return nullptr;
}

/// Checks the output slots, completes the slot ranks and checks every
/// call's argument ranks.
mnemo_status_t verifySlots(const mnemo_model_t &model,
                           const Vector<KernelRanks> &kernelRanks,
                           const fb::Function &f, FunctionPlan &plan) {
  const char *what = model.name.c_str();
  const char *name = plan.name;
  uint32_t numOutputSlots = f.output_slots() ? f.output_slots()->size() : 0;
  if (numOutputSlots != plan.outputs.size())
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: function '%s': %u output slots for %zu outputs",
                      what, name, numOutputSlots, plan.outputs.size());
  for (uint32_t i = 0; i < numOutputSlots; ++i) {
    uint32_t slot = f.output_slots()->Get(i);
    const TensorSig &sig = plan.outputs[i];
    if (slot >= plan.numSlots())
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': output '%s' is slot %u, which is "
                        "never defined (%u slots)",
                        what, name, sig.name, slot, plan.numSlots());
    auto rank = static_cast<uint32_t>(sig.shape.size());
    uint32_t &slotRank = plan.slotRanks[slot];
    if (slotRank == kUnknownRank)
      slotRank = rank;
    if (slotRank != rank)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': output '%s' has rank %u, its "
                        "slot %u has rank %u",
                        what, name, sig.name, rank, slot, slotRank);
    // An output that is an input or a weight must agree with it on dtype.
    mnemo_dtype_t dtype = sig.dtype;
    if (slot < plan.firstWeightSlot())
      dtype = plan.inputs[slot].dtype;
    else if (slot < plan.firstResultSlot())
      dtype = model.weights[plan.weights[slot - plan.firstWeightSlot()]].dtype;
    if (dtype != sig.dtype)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function '%s': output '%s' is %s, its slot %u "
                        "holds %s",
                        what, name, sig.name, mnemo_dtype_name(sig.dtype), slot,
                        mnemo_dtype_name(dtype));
    plan.outputSlots.push_back(slot);
  }
  for (size_t c = 0; c < plan.calls.size(); ++c) {
    const CallPlan &step = plan.calls[c];
    const KernelInfo &kernel = model.kernels[step.kernel];
    for (size_t j = 0; j < step.results.size(); ++j)
      if (plan.slotRanks[step.results[j]] == kUnknownRank)
        return makeStatus(MNEMO_STATUS_DATA_LOSS,
                          "%s: function '%s': call %zu (kernel '%s') result "
                          "%zu has no known rank: the kernel has no "
                          "result_ranks and the result is not an output",
                          what, name, c, kernel.symbol, j);
    const auto *argRanks = kernelRanks[step.kernel].args;
    if (!argRanks)
      continue;
    for (size_t i = 0; i < step.args.size(); ++i)
      if (plan.slotRanks[step.args[i]] != argRanks->Get(i))
        return makeStatus(MNEMO_STATUS_DATA_LOSS,
                          "%s: function '%s': call %zu (kernel '%s') "
                          "argument %zu is slot %u of rank %u, the kernel "
                          "takes rank %u",
                          what, name, c, kernel.symbol, i, step.args[i],
                          plan.slotRanks[step.args[i]], argRanks->Get(i));
  }
  return nullptr;
}

/// Decides when each result buffer dies: after its last use, or right after
/// the call defining it when nothing uses it; outputs live until the next
/// run.
void planReleases(FunctionPlan &plan) {
  Vector<uint32_t> lastUse(plan.numSlots(), UINT32_MAX);
  Vector<bool> isOutput(plan.numSlots(), false);
  for (uint32_t slot : plan.outputSlots)
    isOutput[slot] = true;
  for (uint32_t c = 0; c < plan.calls.size(); ++c) {
    for (uint32_t slot : plan.calls[c].args)
      lastUse[slot] = c;
    for (uint32_t slot : plan.calls[c].results)
      lastUse[slot] = lastUse[slot] == UINT32_MAX ? c : lastUse[slot];
  }
  for (uint32_t slot = plan.firstResultSlot(); slot < plan.numSlots(); ++slot)
    if (!isOutput[slot])
      plan.calls[lastUse[slot]].releaseAfter.push_back(slot);
}

} // namespace

mnemo_status_t mnemo::rt::verifySignature(const mnemo_model_t &model,
                                          const fb::Function &f,
                                          FunctionPlan &plan) {
  const char *what = model.name.c_str();
  const char *name = plan.name;
  if (const auto *inputs = f.inputs()) {
    plan.inputs.resize(inputs->size());
    for (flatbuffers::uoffset_t i = 0; i < inputs->size(); ++i)
      MNEMO_RETURN_IF_ERROR(verifyTensorSig(what, name, "input", i,
                                            inputs->Get(i), plan.inputs[i]));
  }
  if (const auto *outputs = f.outputs()) {
    plan.outputs.resize(outputs->size());
    for (flatbuffers::uoffset_t i = 0; i < outputs->size(); ++i)
      MNEMO_RETURN_IF_ERROR(verifyTensorSig(what, name, "output", i,
                                            outputs->Get(i), plan.outputs[i]));
  }
  MNEMO_RETURN_IF_ERROR(checkUniqueNames(what, name, "input", plan.inputs));
  MNEMO_RETURN_IF_ERROR(checkUniqueNames(what, name, "output", plan.outputs));
  return nullptr;
}

namespace {

mnemo_status_t verifyFunction(const mnemo_model_t &model,
                              const Vector<KernelRanks> &kernelRanks,
                              const fb::Function &f, FunctionPlan &plan) {
  const char *what = model.name.c_str();
  const char *name = plan.name;
  if (const auto *weights = f.weights()) {
    for (flatbuffers::uoffset_t k = 0; k < weights->size(); ++k) {
      uint32_t index = weights->Get(k);
      if (index >= model.weights.size())
        return makeStatus(MNEMO_STATUS_DATA_LOSS,
                          "%s: function '%s': weight slot %u refers to "
                          "weight %u, the artifact has %zu",
                          what, name, k, index, model.weights.size());
      plan.weights.push_back(index);
    }
  }
  if (uint64_t(plan.inputs.size()) + plan.weights.size() > kMaxSlots)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: function '%s': more than %llu slots", what, name,
                      static_cast<unsigned long long>(kMaxSlots));
  for (const TensorSig &sig : plan.inputs)
    plan.slotRanks.push_back(static_cast<uint32_t>(sig.shape.size()));
  for (uint32_t index : plan.weights)
    plan.slotRanks.push_back(
        static_cast<uint32_t>(model.weights[index].shape.size()));

  MNEMO_RETURN_IF_ERROR(verifyCalls(model, kernelRanks, f, plan));
  MNEMO_RETURN_IF_ERROR(verifySlots(model, kernelRanks, f, plan));
  planReleases(plan);
  return nullptr;
}

/// Copies the profile points' names: each must be a name, as the tools
/// print them.
mnemo_status_t verifyProfilePoints(mnemo_model_t &model,
                                   const fb::Artifact &a) {
  const auto *points = a.profile_points();
  if (!points)
    return nullptr;
  model.profilePoints.reserve(points->size());
  for (flatbuffers::uoffset_t i = 0; i < points->size(); ++i) {
    const flatbuffers::String *name = points->Get(i);
    if (!isName(name))
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: profile point %u has no valid name",
                        model.name.c_str(), i);
    model.profilePoints.push_back(name->c_str());
  }
  return nullptr;
}

/// Whether `chip` names a GPU architecture as the compiler spells it:
/// "sm_" then two or three digits, then an optional "a".
bool isChipName(const char *chip) {
  if (std::strncmp(chip, "sm_", 3) != 0)
    return false;
  size_t digits = 0;
  const char *c = chip + 3;
  for (; *c >= '0' && *c <= '9'; ++c)
    ++digits;
  if (*c == 'a')
    ++c;
  return digits >= 2 && digits <= 3 && *c == '\0';
}

/// Records the GPU binaries of a PTX artifact: each for a chip named once,
/// an ELF image (what the driver loads; the image itself is the driver's
/// to check, and a refused one falls back to the PTX).
mnemo_status_t verifyGpuBinaries(mnemo_model_t &model, const fb::Artifact &a) {
  const char *what = model.name.c_str();
  const auto *binaries = a.gpu_binaries();
  if (!binaries)
    return nullptr;
  if (!model.ptx)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: GPU binaries in an artifact of CPU code", what);
  static constexpr uint8_t kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
  for (flatbuffers::uoffset_t i = 0; i < binaries->size(); ++i) {
    const fb::GpuBinary *g = binaries->Get(i);
    if (!g || !isName(g->chip()) || !isChipName(g->chip()->c_str()))
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: GPU binary %u has no valid chip name", what, i);
    const char *chip = g->chip()->c_str();
    if (std::strcmp(chip, model.cpu) != 0)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: a GPU binary for %s in an artifact for %s", what,
                        chip, model.cpu);
    if (!g->image() || g->image()->size() < sizeof(kElfMagic) ||
        std::memcmp(g->image()->data(), kElfMagic, sizeof(kElfMagic)) != 0)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: the GPU binary for %s is not an ELF image", what,
                        chip);
    for (const GpuBinaryImage &other : model.gpuBinaries)
      if (std::strcmp(other.chip, chip) == 0)
        return makeStatus(MNEMO_STATUS_DATA_LOSS, "%s: two GPU binaries for %s",
                          what, chip);
    model.gpuBinaries.push_back({chip, g->image()->data(), g->image()->size()});
  }
  return nullptr;
}

} // namespace

mnemo_status_t mnemo::rt::verifyHeader(const char *what, const uint8_t *data,
                                       size_t size, const fb::Artifact **out,
                                       uint64_t *metadataEnd) {
  constexpr size_t kHeader = 12; // size prefix, root offset, identifier
  if (size < kHeader)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: truncated: an artifact starts with a %zu-byte "
                      "header, the file has %zu",
                      what, kHeader, size);
  if (!fb::SizePrefixedArtifactBufferHasIdentifier(data))
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: not a Mnemo artifact: file identifier '%s', "
                      "expected '%s'",
                      what, formatIdentifier(data + 8).c_str(),
                      fb::ArtifactIdentifier());
  uint32_t metadataSize = flatbuffers::ReadScalar<uint32_t>(data);
  if (metadataSize > size - 4)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: truncated: the metadata needs %u bytes after the "
                      "size prefix, only %zu follow",
                      what, metadataSize, size - 4);
  uint64_t bufferSize = uint64_t(metadataSize) + 4;
  if (bufferSize < kHeader || bufferSize >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: corrupt size prefix: %u bytes of metadata", what,
                      metadataSize);
  flatbuffers::Verifier::Options options;
  options.max_tables = kMaxTables;
  flatbuffers::Verifier verifier(data, static_cast<size_t>(bufferSize),
                                 options);
  if (!fb::VerifySizePrefixedArtifactBuffer(verifier))
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: corrupt metadata: the FlatBuffer fails "
                      "verification",
                      what);
  const fb::Artifact *a = fb::GetSizePrefixedArtifact(data);
  MNEMO_RETURN_IF_ERROR(verifyChecksum(what, data, bufferSize, *a));

  if (a->abi_version() != MNEMO_ARTIFACT_ABI_VERSION)
    return makeStatus(MNEMO_STATUS_INCOMPATIBLE,
                      "%s: artifact ABI version %u, this runtime reads "
                      "version %u; recompile with a matching mnemoc",
                      what, a->abi_version(), MNEMO_ARTIFACT_ABI_VERSION);
  if (!a->target() || !isName(a->target()->triple()))
    return makeStatus(MNEMO_STATUS_DATA_LOSS, "%s: no target triple", what);
  const char *triple = a->target()->triple()->c_str();
  if (a->code_format() == fb::CodeFormat::PTX) {
    // GPU code: which device runs it is the session's choice.
    *out = a;
    *metadataEnd = bufferSize;
    return nullptr;
  }
  if (tripleArch(triple) != hostArchitecture())
    return makeStatus(MNEMO_STATUS_INCOMPATIBLE,
                      "%s: compiled for '%s', this machine is %s; recompile "
                      "with mnemoc --target for it",
                      what, triple, hostArchitecture());
  if (a->code_format() != fb::CodeFormat::ELF_SHARED_OBJECT)
    return makeStatus(MNEMO_STATUS_INCOMPATIBLE,
                      "%s: code format %u is not supported (this runtime "
                      "loads ELF shared objects and PTX)",
                      what, static_cast<unsigned>(a->code_format()));
  *out = a;
  *metadataEnd = bufferSize;
  return nullptr;
}

mnemo_status_t mnemo::rt::verifyWeightsSegment(const char *what,
                                               uint64_t offset, uint64_t size,
                                               uint64_t regionSize,
                                               uint64_t minOffset) {
  if (offset % kAlignment != 0)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: weights_offset %llu is not 64-byte aligned", what,
                      static_cast<unsigned long long>(offset));
  if (offset > regionSize || size > regionSize - offset)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: truncated: the weights segment [%llu, +%llu) ends "
                      "past the end of the file (%llu bytes)",
                      what, static_cast<unsigned long long>(offset),
                      static_cast<unsigned long long>(size),
                      static_cast<unsigned long long>(regionSize));
  if (size > 0 && offset < minOffset)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: the weights segment at %llu overlaps the metadata "
                      "(%llu bytes)",
                      what, static_cast<unsigned long long>(offset),
                      static_cast<unsigned long long>(minOffset));
  return nullptr;
}

mnemo_status_t mnemo::rt::verifyContents(mnemo_model_t &model,
                                         const fb::Artifact &a) {
  const char *what = model.name.c_str();
  if (!a.code() || a.code()->size() == 0)
    return makeStatus(MNEMO_STATUS_DATA_LOSS, "%s: the artifact has no code",
                      what);
  MNEMO_RETURN_IF_ERROR(verifyWeights(model, a));
  MNEMO_RETURN_IF_ERROR(verifyProfilePoints(model, a));
  model.ptx = a.code_format() == fb::CodeFormat::PTX;
  MNEMO_RETURN_IF_ERROR(verifyGpuBinaries(model, a));
  Vector<KernelRanks> kernelRanks;
  MNEMO_RETURN_IF_ERROR(verifyKernels(model, a, kernelRanks));

  const auto *functions = a.functions();
  if (!functions || functions->size() == 0)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: the artifact has no function", what);
  model.functions.resize(functions->size());
  Vector<std::string_view> names;
  for (flatbuffers::uoffset_t i = 0; i < functions->size(); ++i) {
    const fb::Function *f = functions->Get(i);
    if (!f || !isName(f->name()))
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: function %u has no valid name", what, i);
    model.functions[i].name = f->name()->c_str();
    names.push_back(model.functions[i].name);
  }
  int64_t repeat = firstRepeat(names);
  if (repeat >= 0)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: two functions are named '%s'", what,
                      model.functions[repeat].name);
  for (flatbuffers::uoffset_t i = 0; i < functions->size(); ++i) {
    const fb::Function *f = functions->Get(i);
    FunctionPlan &plan = model.functions[i];
    MNEMO_RETURN_IF_ERROR(verifySignature(model, *f, plan));
    if (f->unsupported() && f->unsupported()->size() > 0) {
      // Sessions refuse it with this reason; the rest of its plan is absent.
      if (!isName(f->unsupported()))
        return makeStatus(MNEMO_STATUS_DATA_LOSS,
                          "%s: function '%s': invalid 'unsupported' text",
                          what, plan.name);
      plan.unsupported = f->unsupported()->c_str();
      continue;
    }
    MNEMO_RETURN_IF_ERROR(model.ptx
                              ? verifyGpuFunction(model, *f, plan)
                              : verifyFunction(model, kernelRanks, *f, plan));
  }
  return nullptr;
}

/// "[2, ?, 8]" (-1 as "?"), bounded in length, for messages.
String mnemo::rt::formatShape(const Vector<int64_t> &dims) {
  String s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    if (s.size() > 200) {
      s += "...";
      break;
    }
    s += dims[i] < 0 ? String("?")
                     : formatString("%lld", static_cast<long long>(dims[i]));
  }
  return s + "]";
}

//===- model.cpp - loading and describing models ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "model.h"

#include "crc32.h"
#include "status.h"
#include "support/Memory.h"
#include "support/String.h"
#include "verify.h"

#include <cstring>
#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

using namespace mnemo::rt;
namespace fb = ::mnemo::artifact;

namespace {

const char *str(const flatbuffers::String *s) { return s ? s->c_str() : ""; }

/// The directory part of `path`, with its trailing slash ("" for none).
String directoryOf(const String &path) {
  size_t slash = path.rfind('/');
  return slash == String::npos ? String() : path.substr(0, slash + 1);
}

/// Locates and checks the weights segment, mapping the side file when the
/// weights live there.
mnemo_status_t resolveWeights(mnemo_model_t &model, const fb::Artifact &a,
                              uint64_t metadataEnd) {
  const char *what = model.name.c_str();
  const flatbuffers::String *sideFile = a.weights_file();
  if (!sideFile || sideFile->size() == 0) {
    MNEMO_RETURN_IF_ERROR(verifyWeightsSegment(what, a.weights_offset(),
                                               a.weights_size(),
                                               model.file.size, metadataEnd));
    model.weightsBase = model.file.data + a.weights_offset();
    model.weightsSize = a.weights_size();
    return nullptr;
  }
  const char *name = sideFile->c_str();
  if (std::strlen(name) != sideFile->size() || name[0] == '/')
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: weights_file '%s' is not a relative path", what,
                      name);
  if (model.file.kind != Region::Kind::Mapped)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "%s: the weights are in a side file ('%s'); load the "
                      "artifact with mnemo_model_load_file",
                      what, name);
  String path = directoryOf(model.name) + name;
  MNEMO_RETURN_IF_ERROR(
      mapFile(path.c_str(), "weights file", model.sideWeights));
  MNEMO_RETURN_IF_ERROR(verifyWeightsSegment(path.c_str(), a.weights_offset(),
                                             a.weights_size(),
                                             model.sideWeights.size, 0));
  model.weightsBase = model.sideWeights.data + a.weights_offset();
  model.weightsSize = a.weights_size();
  return nullptr;
}

/// Maps the files weights are read from in place and checks that each is
/// the one the artifact was compiled against (its size and CRC-32).
mnemo_status_t mapWeightSources(mnemo_model_t &model, const fb::Artifact &a) {
  const char *what = model.name.c_str();
  const auto *sources = a.weight_sources();
  if (!sources)
    return nullptr;
  for (flatbuffers::uoffset_t i = 0; i < sources->size(); ++i) {
    const fb::WeightSource *source = sources->Get(i);
    const flatbuffers::String *recorded = source ? source->path() : nullptr;
    if (!recorded || recorded->size() == 0 ||
        std::strlen(recorded->c_str()) != recorded->size())
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weight source %u has no valid path", what, i);
    const char *name = recorded->c_str();
    if (name[0] != '/' && model.file.kind != Region::Kind::Mapped)
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "%s: weights are read from '%s' beside the artifact; "
                        "load the artifact with mnemo_model_load_file",
                        what, name);
    String path = name[0] == '/' ? String(name) : directoryOf(model.name) + name;
    model.weightSources.emplace_back();
    Region &region = model.weightSources.back();
    MNEMO_RETURN_IF_ERROR(mapFile(path.c_str(), "weight source", region));
    if (region.size != source->size())
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weight source %s has %llu bytes, but the artifact "
                        "was compiled against %llu (recompile it, or restore "
                        "the file)",
                        what, path.c_str(),
                        static_cast<unsigned long long>(region.size),
                        static_cast<unsigned long long>(source->size()));
    uint32_t crc = crc32(0, region.data, region.size);
    if (crc != source->crc32())
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: weight source %s has CRC-32 %08x, but the "
                        "artifact was compiled against %08x (the file "
                        "changed: recompile the artifact, or restore it)",
                        what, path.c_str(), crc, source->crc32());
  }
  return nullptr;
}

/// Refuses code that needs an instruction set this CPU lacks (it would stop
/// on an illegal instruction): SVE on AArch64.
mnemo_status_t checkCPUFeatures(const char *what, const char *features) {
#if defined(__aarch64__) && defined(__linux__)
  bool sve = std::strstr(features, "+sve") != nullptr;
  if (sve && !(getauxval(AT_HWCAP) & HWCAP_SVE))
    return makeStatus(MNEMO_STATUS_INCOMPATIBLE,
                      "%s: code: compiled for SVE (--target=aarch64-sve), "
                      "which this CPU lacks; recompile with --target=aarch64",
                      what);
#else
  (void)what;
  (void)features;
#endif
  return nullptr;
}

/// Verifies everything, then loads the code, finds the kernels and fills
/// the code's hooks table.
mnemo_status_t load(mnemo_model_t &model) {
  const char *what = model.name.c_str();
  const fb::Artifact *a = nullptr;
  uint64_t metadataEnd = 0;
  MNEMO_RETURN_IF_ERROR(
      verifyHeader(what, model.file.data, model.file.size, &a, &metadataEnd));
  model.triple = str(a->target()->triple());
  model.cpu = str(a->target()->cpu());
  model.features = str(a->target()->features());
  if (const fb::Provenance *p = a->provenance()) {
    model.compiler = str(p->compiler());
    model.source = str(p->source());
    model.sourceHash = str(p->source_hash());
  }
  MNEMO_RETURN_IF_ERROR(resolveWeights(model, *a, metadataEnd));
  MNEMO_RETURN_IF_ERROR(mapWeightSources(model, *a));
  MNEMO_RETURN_IF_ERROR(verifyContents(model, *a));
  if (model.ptx) {
    // Loaded on a device by each session created there.
    model.ptxCode = reinterpret_cast<const char *>(a->code()->data());
    model.ptxSize = a->code()->size();
    return nullptr;
  }
  MNEMO_RETURN_IF_ERROR(checkCPUFeatures(what, model.features));
  MNEMO_RETURN_IF_ERROR(
      loadCodeObject(what, a->code()->data(), a->code()->size(), model.code));
  for (KernelInfo &kernel : model.kernels)
    MNEMO_RETURN_IF_ERROR(
        findKernel(what, model.code, kernel.symbol, &kernel.fn));
  return installHooks(what, a->code()->data(), a->code()->size(), model.code);
}

void destroyModel(mnemo_model_t *model) {
  unloadCodeObject(model->code);
  releaseRegion(model->sideWeights);
  for (Region &source : model->weightSources)
    releaseRegion(source);
  releaseRegion(model->file);
  mnemo::rt::destroy(model);
}

/// Finishes a load: hands the model out or destroys it.
mnemo_status_t finish(mnemo_model_t *model, mnemo_status_t status,
                      mnemo_model_t **out) {
  if (status) {
    destroyModel(model);
    return status;
  }
  *out = model;
  return nullptr;
}

const FunctionPlan *functionAt(const mnemo_model_t *model, size_t function) {
  if (!model || function >= model->functions.size())
    return nullptr;
  return &model->functions[function];
}

void describe(const TensorSig &sig, mnemo_tensor_info_t *out) {
  out->name = sig.name;
  out->dtype = sig.dtype;
  out->rank = sig.shape.size();
  out->shape = sig.shape.data();
  out->max_shape = sig.maxShape.data();
}

} // namespace

void mnemo::rt::retainModel(mnemo_model_t *model) {
  model->refs.fetch_add(1, std::memory_order_relaxed);
}

void mnemo::rt::releaseModel(mnemo_model_t *model) {
  if (model->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    destroyModel(model);
}

extern "C" {

mnemo_status_t mnemo_model_load_file(const char *path,
                                     mnemo_model_t **out_model) {
  if (!path || !out_model)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_model_load_file: NULL %s",
                      path ? "out_model" : "path");
  *out_model = nullptr;
  auto *model = make<mnemo_model_t>();
  if (!model)
    return outOfMemory();
  model->name = path;
  mnemo_status_t status = mapFile(path, "artifact", model->file);
  if (!status)
    status = load(*model);
  return finish(model, status, out_model);
}

mnemo_status_t mnemo_model_load_memory(const void *data, size_t size,
                                       mnemo_model_t **out_model) {
  if (!out_model || (!data && size > 0))
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_model_load_memory: NULL %s",
                      out_model ? "data" : "out_model");
  *out_model = nullptr;
  auto *model = make<mnemo_model_t>();
  if (!model)
    return outOfMemory();
  model->name = "<memory>";
  mnemo_status_t status = nullptr;
  if (size == 0)
    status = makeStatus(MNEMO_STATUS_DATA_LOSS, "<memory>: the artifact is "
                                                "empty");
  if (!status)
    status = wrapMemory(data, size, model->file);
  if (!status)
    status = load(*model);
  return finish(model, status, out_model);
}

void mnemo_model_free(mnemo_model_t *model) {
  if (model)
    releaseModel(model);
}

const char *mnemo_model_target_triple(const mnemo_model_t *model) {
  return model ? model->triple : "";
}

const char *mnemo_model_target_cpu(const mnemo_model_t *model) {
  return model ? model->cpu : "";
}

const char *mnemo_model_target_features(const mnemo_model_t *model) {
  return model ? model->features : "";
}

const char *mnemo_model_provenance(const mnemo_model_t *model,
                                   mnemo_provenance_t field) {
  if (!model)
    return "";
  switch (field) {
  case MNEMO_PROVENANCE_COMPILER:
    return model->compiler;
  case MNEMO_PROVENANCE_SOURCE:
    return model->source;
  case MNEMO_PROVENANCE_SOURCE_HASH:
    return model->sourceHash;
  default:
    return "";
  }
}

uint64_t mnemo_model_weights_size(const mnemo_model_t *model) {
  return model ? model->weightsSize : 0;
}

mnemo_status_t mnemo_model_set_weight(mnemo_model_t *model, const char *name,
                                      mnemo_dtype_t dtype,
                                      const int64_t *shape, size_t rank,
                                      const void *data) {
  if (!model || !name || (rank && !shape) || !data)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_model_set_weight: null argument");
  bool named = false;
  for (WeightInfo &w : model->weights) {
    named |= std::strcmp(w.name, name) == 0;
    if (!w.replaceable || std::strcmp(w.name, name) != 0)
      continue;
    Vector<int64_t> given(shape, shape + rank);
    if (dtype != w.dtype || given != w.shape)
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "%s: weight '%s' is %s %s, got %s %s",
                        model->name.c_str(), name, mnemo_dtype_name(w.dtype),
                        formatShape(w.shape).c_str(), mnemo_dtype_name(dtype),
                        formatShape(given).c_str());
    OwnedBytes copy(static_cast<uint8_t *>(std::malloc(w.size ? w.size : 1)));
    if (!copy)
      return makeStatus(MNEMO_STATUS_RESOURCE_EXHAUSTED,
                        "%s: weight '%s': no memory for %llu bytes",
                        model->name.c_str(), name,
                        static_cast<unsigned long long>(w.size));
    std::memcpy(copy.get(), data, w.size);
    LockGuard lock(model->weightsMutex);
    w.data = copy.get();
    model->replaced.emplace_back(std::move(copy), w.size);
    model->hasReplaced.store(true, std::memory_order_release);
    return nullptr;
  }
  if (named)
    return makeStatus(MNEMO_STATUS_INCOMPATIBLE,
                      "%s: weight '%s' is not replaceable (only an attached "
                      "adapter's factors are: mnemoc --lora-attach)",
                      model->name.c_str(), name);
  return makeStatus(MNEMO_STATUS_NOT_FOUND, "%s: no weight '%s'",
                    model->name.c_str(), name);
}

size_t mnemo_model_function_count(const mnemo_model_t *model) {
  return model ? model->functions.size() : 0;
}

const char *mnemo_model_function_name(const mnemo_model_t *model,
                                      size_t function) {
  const FunctionPlan *plan = functionAt(model, function);
  return plan ? plan->name : nullptr;
}

mnemo_status_t mnemo_model_find_function(const mnemo_model_t *model,
                                         const char *name,
                                         size_t *out_function) {
  if (!model || !name || !out_function)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_model_find_function: NULL argument");
  for (size_t i = 0; i < model->functions.size(); ++i) {
    if (std::strcmp(model->functions[i].name, name) == 0) {
      *out_function = i;
      return nullptr;
    }
  }
  return makeStatus(MNEMO_STATUS_NOT_FOUND, "%s: no function '%s'",
                    model->name.c_str(), name);
}

size_t mnemo_model_input_count(const mnemo_model_t *model, size_t function) {
  const FunctionPlan *plan = functionAt(model, function);
  return plan ? plan->inputs.size() : 0;
}

size_t mnemo_model_output_count(const mnemo_model_t *model, size_t function) {
  const FunctionPlan *plan = functionAt(model, function);
  return plan ? plan->outputs.size() : 0;
}

mnemo_status_t mnemo_model_input_info(const mnemo_model_t *model,
                                      size_t function, size_t index,
                                      mnemo_tensor_info_t *out_info) {
  const FunctionPlan *plan = functionAt(model, function);
  if (!out_info)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_model_input_info: NULL out_info");
  if (!plan || index >= plan->inputs.size())
    return makeStatus(MNEMO_STATUS_NOT_FOUND, "no input %zu of function %zu",
                      index, function);
  describe(plan->inputs[index], out_info);
  return nullptr;
}

int mnemo_model_input_is_inout(const mnemo_model_t *model, size_t function,
                               size_t index) {
  const FunctionPlan *plan = functionAt(model, function);
  return plan && index < plan->inputs.size() && plan->inputs[index].inPlace
             ? 1
             : 0;
}

mnemo_status_t mnemo_model_output_info(const mnemo_model_t *model,
                                       size_t function, size_t index,
                                       mnemo_tensor_info_t *out_info) {
  const FunctionPlan *plan = functionAt(model, function);
  if (!out_info)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_model_output_info: NULL out_info");
  if (!plan || index >= plan->outputs.size())
    return makeStatus(MNEMO_STATUS_NOT_FOUND, "no output %zu of function %zu",
                      index, function);
  describe(plan->outputs[index], out_info);
  return nullptr;
}

} // extern "C"

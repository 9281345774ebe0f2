//===- run_cuda.cpp - mnemo-run --device=cuda -------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "run_cuda.h"

#include "cli.h"
#include "npy.h"

#include "mnemo/runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

using namespace mnemo::run;

namespace {

/// Reads input `info` from the file given for it, checking dtype and shape.
int readInput(const mnemo_tensor_info_t &info,
              const std::vector<std::pair<std::string, std::string>> &given,
              mnemo::npy::Array &out) {
  const std::string *file = nullptr;
  for (const auto &[name, path] : given)
    if (name == info.name) {
      if (file)
        return fail("input '" + name + "'", "given twice");
      file = &path;
    }
  if (!file)
    return fail("input '" + std::string(info.name) + "'",
                std::string("missing; pass --input ") + info.name +
                    "=FILE.npy");
  std::string error;
  if (!mnemo::npy::read(file->c_str(), out, error))
    return fail(*file, error);
  mnemo::npy::narrowStandIn(out, info.dtype);
  if (out.dtype != info.dtype ||
      !std::equal(out.shape.begin(), out.shape.end(), info.shape,
                  info.shape + info.rank) ||
      out.shape.size() != info.rank)
    return fail(*file, std::string("expected ") + mnemo_dtype_name(info.dtype) +
                           " " + formatShape(info.shape, info.rank) + ", got " +
                           mnemo_dtype_name(out.dtype) + " " +
                           formatShape(out.shape.data(), out.shape.size()));
  return -1;
}

} // namespace

int mnemo::run::runCuda(
    const char *ptx, const std::vector<std::pair<std::string, std::string>> &inputs,
    const std::string &outputDir, long repeat, const std::string &function,
    int graph) {
  mnemo_cuda_program_t *program = nullptr;
  if (mnemo_status_t status = mnemo_cuda_program_load_file(
          ptx, function.empty() ? nullptr : function.c_str(), &program))
    return fail(status);
  std::unique_ptr<mnemo_cuda_program_t, void (*)(mnemo_cuda_program_t *)> guard(
      program, mnemo_cuda_program_free);
  if (graph >= 0)
    if (mnemo_status_t status = mnemo_cuda_program_set_graph(program, graph))
      return fail(status);

  size_t numInputs = mnemo_cuda_program_input_count(program);
  std::vector<mnemo::npy::Array> arrays(numInputs);
  std::vector<const void *> in(numInputs);
  for (size_t i = 0; i < numInputs; ++i) {
    mnemo_tensor_info_t info;
    if (mnemo_status_t status = mnemo_cuda_program_input_info(program, i, &info))
      return fail(status);
    int rc = readInput(info, inputs, arrays[i]);
    if (rc >= 0)
      return rc;
    in[i] = arrays[i].data.get();
  }
  for (const auto &[name, path] : inputs) {
    bool known = false;
    for (size_t i = 0; i < numInputs; ++i) {
      mnemo_tensor_info_t info;
      mnemo_cuda_program_input_info(program, i, &info);
      known |= name == info.name;
    }
    if (!known)
      return fail("input '" + name + "'", "no such input");
  }

  size_t numOutputs = mnemo_cuda_program_output_count(program);
  std::vector<mnemo_tensor_info_t> outInfo(numOutputs);
  std::vector<std::vector<uint8_t>> outData(numOutputs);
  std::vector<void *> out(numOutputs);
  for (size_t i = 0; i < numOutputs; ++i) {
    if (mnemo_status_t status =
            mnemo_cuda_program_output_info(program, i, &outInfo[i]))
      return fail(status);
    size_t bytes = mnemo_dtype_size(outInfo[i].dtype);
    for (size_t k = 0; k < outInfo[i].rank; ++k)
      bytes *= static_cast<size_t>(outInfo[i].shape[k]);
    outData[i].resize(bytes);
    out[i] = outData[i].data();
  }

  std::vector<double> times;
  for (long r = 0; r < repeat; ++r) {
    double start = nowMs();
    if (mnemo_status_t status =
            mnemo_cuda_program_run(program, in.data(), out.data()))
      return fail(status);
    times.push_back(nowMs() - start);
  }

  if (!outputDir.empty())
    if (int rc = makeOutputDir(outputDir.c_str()); rc >= 0)
      return rc;
  for (size_t i = 0; i < numOutputs; ++i) {
    const mnemo_tensor_info_t &t = outInfo[i];
    std::string line = std::string(t.name) + ": " + mnemo_dtype_name(t.dtype) +
                       " " + formatShape(t.shape, t.rank);
    if (!outputDir.empty()) {
      std::string path = outputDir + "/" + fileNameFor(t.name) + ".npy", error;
      if (!mnemo::npy::writeWidened(path.c_str(), t.dtype, t.shape, t.rank,
                                    outData[i].data(), outData[i].size(),
                                    error))
        return fail(path, error);
      line += " -> " + path;
    }
    std::printf("%s\n", line.c_str());
  }
  size_t n = times.size();
  std::printf("latency: %.4g ms (median of %zu, cuda, %s)\n", median(times), n,
              mnemo_cuda_program_uses_graph(program) ? "graph"
                                                     : "kernel by kernel");
  return 0;
}

//===- mnemo-run.cpp - runs a compiled model on .npy inputs -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mnemo-run OUT.mnemo --input NAME=FILE.npy ... [--output-dir DIR]
//             [--repeat N] [--function NAME] [--threads N] [--profile]
//             [--device cpu|cuda] [--cuda-graph on|off]
//   mnemo-run OUT.mnemo --dump-plan
//   mnemo-run OUT.mnemo --generate N --input input_ids=IDS.npy
//             --output-dir DIR [--prompt-lengths L0,L1,...]
//             [--teacher-force TOKENS.npy] [--threads N] [--kv-pages N]
//             [--prompt-chunk N]
//
// Loads the artifact, binds each input from a .npy file, runs the function
// N times, prints every output's name, dtype and shape and the median
// latency of the runs with the thread count, and writes the outputs to
// DIR/<name>.npy. --threads N sets the threads a run's parallel loops use
// (0, the default: one per core). --profile times the regions the code
// reports (its profile points) over the runs after the first (the warm-up;
// with --repeat 1, that one run) and prints them, slowest first. Every
// failure is one line, "mnemo-run: error: <file or tensor>: <reason>", and
// a non-zero exit. --device=cuda runs an artifact compiled for a GPU
// (`mnemoc --target=sm_90a -o OUT.mnemo`) through the same session API on
// CUDA device 0; without a driver that is the error "no CUDA driver: ...".
// --cuda-graph on|off chooses between replaying the plan as a CUDA graph
// (the default for plans of several kernels) and launching kernel by
// kernel. --dump-plan prints the artifact's plan as JSON and exits.
// --generate runs the artifact's generation steps (generate.cpp).
//
//===----------------------------------------------------------------------===//

#include "cli.h"
#include "generate.h"
#include "npy.h"
#include "profile_table.h"
#include "plan_json.h"

#include "mnemo/runtime.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mnemo::run;

namespace {

constexpr const char *kUsage =
    "usage: mnemo-run OUT.mnemo --input NAME=FILE.npy ... "
    "[--output-dir DIR] [--repeat N] [--function NAME] [--threads N] "
    "[--profile] [--device cpu|cuda] [--cuda-graph on|off] "
    "[--weight NAME=FILE.npy ...] | OUT.mnemo "
    "--dump-plan | OUT.mnemo --generate N --input input_ids=IDS.npy "
    "--output-dir DIR [--prompt-lengths L0,L1,...] [--teacher-force "
    "TOKENS.npy] [--kv-pages N] [--prompt-chunk N]";

constexpr const char *kOptions =
    "  --input NAME=FILE.npy  an input of the function (every one is needed)\n"
    "  --output-dir DIR       write each output to DIR/<name>.npy\n"
    "  --repeat N             run N times; print the median latency\n"
    "                         (--generate: generate N times, report the\n"
    "                         last, warm run)\n"
    "  --function NAME        the function to run (default: the first)\n"
    "  --threads N            threads for parallel loops, the caller\n"
    "                         included (default 0: one per core)\n"
    "  --profile              time the code's profile points over the runs\n"
    "                         after the first; print them, slowest first\n"
    "  --device cpu|cuda      where the session runs (cuda: an artifact\n"
    "                         compiled for sm_80 or sm_90a)\n"
    "  --cuda-graph on|off    replay the plan as a CUDA graph, or launch\n"
    "                         kernel by kernel\n"
    "  --dump-plan            print the artifact's plan as JSON and exit\n"
    "  --generate N           prefill every row of input_ids, decode N\n"
    "                         tokens greedily; write DIR/tokens.npy and\n"
    "                         DIR/step_logits.npy\n"
    "  --prompt-lengths L,... row i's prompt is its first Li tokens\n"
    "  --teacher-force F.npy  step i feeds F[:, i] instead of its choice\n"
    "  --kv-pages N           KV cache pages (default: what the rows need)\n"
    "  --prompt-chunk N       prefill the prompts' first N tokens, then\n"
    "                         append the rest N at a time (mnemoc\n"
    "                         --append-step)\n"
    "  --weight NAME=FILE.npy replace a replaceable weight (an adapter's\n"
    "                         factor, mnemoc --lora-attach) before running\n";

struct Options {
  const char *artifact = nullptr;
  std::vector<std::pair<std::string, std::string>> inputs; // name, file
  std::vector<std::pair<std::string, std::string>> weights; // --weight
  std::string outputDir; // empty: do not write outputs
  long repeat = 1;
  std::string function; // empty: the first function
  std::string device = "cpu"; // --device
  bool cuda = false;     // a CUDA device
  bool dumpPlan = false; // --dump-plan
  int cudaGraph = -1;    // --cuda-graph: 1 on, 0 off, -1 the program's choice
  long threads = -1;     // --threads: 0 one per core; -1 not given (cores)
  bool profile = false;  // --profile
  long generate = 0;     // --generate N
  std::vector<long> promptLengths; // --prompt-lengths
  std::string teacher;   // --teacher-force
  long kvPages = 0;      // --kv-pages
  long promptChunk = 0;  // --prompt-chunk
};

/// Parses a positive count; false on anything else.
bool parseCount(const std::string &value, long &out) {
  char *end = nullptr;
  errno = 0;
  long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end || errno || n < 1)
    return false;
  out = n;
  return true;
}

/// Parses the command line; returns -1 to go on, else the exit code.
int parseArgs(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::printf("%s\n\n%s", kUsage, kOptions);
      return 0;
    }
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      if (options.artifact)
        return fail(arg, std::string("unexpected argument (the artifact is ") +
                             options.artifact + "); " + kUsage);
      options.artifact = argv[i];
      continue;
    }
    // --flag VALUE or --flag=VALUE
    std::string flag = arg, value;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (flag == "--input" || flag == "--weight" ||
               flag == "--output-dir" ||
               flag == "--repeat" || flag == "--function" ||
               flag == "--device" || flag == "--cuda-graph" ||
               flag == "--threads" || flag == "--generate" ||
               flag == "--prompt-lengths" || flag == "--teacher-force" ||
               flag == "--kv-pages" || flag == "--prompt-chunk") {
      if (i + 1 >= argc)
        return fail(flag, "expects a value");
      value = argv[++i];
    }
    if ((flag == "--output-dir" || flag == "--function") && value.empty())
      return fail(flag, "expects a value");
    if (flag == "--input") {
      size_t sep = value.find('=');
      if (sep == std::string::npos || sep == 0 || sep + 1 == value.size())
        return fail("--input " + value, "expected NAME=FILE.npy");
      options.inputs.emplace_back(value.substr(0, sep), value.substr(sep + 1));
    } else if (flag == "--weight") {
      size_t sep = value.find('=');
      if (sep == std::string::npos || sep == 0 || sep + 1 == value.size())
        return fail("--weight " + value, "expected NAME=FILE.npy");
      options.weights.emplace_back(value.substr(0, sep), value.substr(sep + 1));
    } else if (flag == "--output-dir") {
      options.outputDir = value;
    } else if (flag == "--function") {
      options.function = value;
    } else if (flag == "--device") {
      // The runtime checks the name (cpu, cuda, cuda:N).
      options.device = value;
      options.cuda = value.compare(0, 4, "cuda") == 0;
    } else if (flag == "--cuda-graph") {
      if (value != "on" && value != "off")
        return fail("--cuda-graph", "expected on or off, got '" + value + "'");
      options.cudaGraph = value == "on";
    } else if (flag == "--threads") {
      // The runtime checks the upper bound.
      char *end = nullptr;
      errno = 0;
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || errno || n < 0)
        return fail("--threads",
                    "expected a thread count (0 = one per core), got '" +
                        value + "'");
      options.threads = n;
    } else if (flag == "--profile") {
      if (eq != std::string::npos)
        return fail("--profile", "takes no value");
      options.profile = true;
    } else if (flag == "--dump-plan") {
      if (eq != std::string::npos)
        return fail("--dump-plan", "takes no value");
      options.dumpPlan = true;
    } else if (flag == "--generate") {
      if (!parseCount(value, options.generate))
        return fail("--generate",
                    "expected a positive token count, got '" + value + "'");
    } else if (flag == "--kv-pages") {
      if (!parseCount(value, options.kvPages))
        return fail("--kv-pages",
                    "expected a positive page count, got '" + value + "'");
    } else if (flag == "--prompt-chunk") {
      if (!parseCount(value, options.promptChunk))
        return fail("--prompt-chunk",
                    "expected a positive token count, got '" + value + "'");
    } else if (flag == "--teacher-force") {
      if (value.empty())
        return fail(flag, "expects a value");
      options.teacher = value;
    } else if (flag == "--prompt-lengths") {
      size_t begin = 0;
      while (true) {
        size_t comma = value.find(',', begin);
        std::string item = value.substr(begin, comma - begin);
        long n = 0;
        if (!parseCount(item, n))
          return fail("--prompt-lengths",
                      "expected positive lengths L0,L1,..., got '" + value +
                          "'");
        options.promptLengths.push_back(n);
        if (comma == std::string::npos)
          break;
        begin = comma + 1;
      }
    } else if (flag == "--repeat") {
      char *end = nullptr;
      errno = 0;
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || errno || n < 1)
        return fail("--repeat",
                    "expected a positive integer, got '" + value + "'");
      options.repeat = n;
    } else {
      return fail(flag, std::string("unknown option; ") + kUsage);
    }
  }
  if (!options.artifact)
    return fail("arguments", std::string("no artifact given; ") + kUsage);
  if (options.cudaGraph >= 0 && !options.cuda)
    return fail("--cuda-graph", "needs --device=cuda");
  if (options.threads >= 0 && options.cuda)
    return fail("--threads", "needs --device=cpu");
  bool generationFlag = !options.promptLengths.empty() ||
                        !options.teacher.empty() || options.kvPages ||
                        options.promptChunk;
  if (generationFlag && !options.generate)
    return fail(!options.teacher.empty() ? "--teacher-force"
                : options.kvPages        ? "--kv-pages"
                : options.promptChunk    ? "--prompt-chunk"
                                         : "--prompt-lengths",
                "needs --generate N");
  if (options.generate &&
      (!options.function.empty() || options.profile || options.dumpPlan ||
       options.cudaGraph >= 0))
    return fail("--generate", "takes no --function, --profile, --dump-plan "
                              "or --cuda-graph");
  return -1;
}

/// An input read from its file, converted to the signature's dtype.
struct Input {
  std::string name;
  mnemo::npy::Array array;
  bool inout = false; // the function updates it in place
};

/// Reads the inputs named on the command line, checking names and that
/// every input of the function is given.
int readInputs(const Options &options, mnemo_model_t *model, size_t function,
               std::vector<Input> &inputs) {
  size_t count = mnemo_model_input_count(model, function);
  std::vector<mnemo_tensor_info_t> sigs(count);
  std::string names;
  for (size_t i = 0; i < count; ++i) {
    if (mnemo_status_t status =
            mnemo_model_input_info(model, function, i, &sigs[i]))
      return fail(status);
    names += (i ? ", " : "") + std::string(sigs[i].name);
  }
  std::vector<bool> given(count, false);
  for (const auto &[name, file] : options.inputs) {
    size_t index = count;
    for (size_t i = 0; i < count; ++i)
      if (name == sigs[i].name)
        index = i;
    if (index == count)
      return fail("input '" + name + "'",
                  std::string("no such input of '") +
                      mnemo_model_function_name(model, function) +
                      "' (inputs: " + (names.empty() ? "none" : names) + ")");
    if (given[index])
      return fail("input '" + name + "'", "given twice");
    given[index] = true;
    Input input;
    input.name = name;
    input.inout = mnemo_model_input_is_inout(model, function, index);
    std::string error;
    if (!mnemo::npy::read(file.c_str(), input.array, error))
      return fail(file, error);
    // bf16 has no NumPy dtype: a float32 file stands in for it.
    mnemo::npy::narrowStandIn(input.array, sigs[index].dtype);
    inputs.push_back(std::move(input));
  }
  for (size_t i = 0; i < count; ++i)
    if (!given[i])
      return fail("input '" + std::string(sigs[i].name) + "'",
                  std::string("missing; pass --input ") + sigs[i].name +
                      "=FILE.npy");
  return -1;
}

/// Binds the inputs read from files; one the function updates in place
/// (a generation step's cache pool) is updated in the tool's copy.
mnemo_status_t bindInputs(mnemo_session_t *session,
                          std::vector<Input> &inputs) {
  for (Input &input : inputs) {
    mnemo::npy::Array &a = input.array;
    const char *name = input.name.c_str();
    mnemo_status_t status =
        input.inout
            ? mnemo_session_set_inout(session, name, a.dtype, a.shape.data(),
                                      a.shape.size(), a.data.get())
            : mnemo_session_set_input(session, name, a.dtype, a.shape.data(),
                                      a.shape.size(), a.data.get());
    if (status)
      return status;
  }
  return nullptr;
}

int runGeneration(const Options &options) {
  GenerateOptions g;
  g.artifact = options.artifact;
  g.steps = options.generate;
  for (const auto &[name, file] : options.inputs) {
    if (name != "input_ids")
      return fail("input '" + name + "'",
                  "--generate takes one input, input_ids");
    g.ids = file;
  }
  g.outputDir = options.outputDir;
  g.lengths = options.promptLengths;
  g.teacher = options.teacher;
  g.device = options.device;
  g.threads = options.threads;
  g.pages = options.kvPages;
  g.promptChunk = options.promptChunk;
  g.repeat = options.repeat;
  g.weights = options.weights;
  return generate(g);
}

int writeOutput(const char *dir, const char *name, const mnemo_tensor_t &t,
                std::string &path) {
  path = std::string(dir) + "/" + fileNameFor(name) + ".npy";
  std::string error;
  bool ok = mnemo::npy::writeWidened(path.c_str(), t.dtype, t.shape, t.rank,
                                     t.data, t.size_bytes, error);
  return ok ? -1 : fail(path, error);
}

int run(const Options &options) {
  mnemo_model_t *model = nullptr;
  if (mnemo_status_t status = mnemo_model_load_file(options.artifact, &model))
    return fail(status);
  if (int rc = setWeights(model, options.weights); rc >= 0) {
    mnemo_model_free(model);
    return rc;
  }
  mnemo_device_t *device = nullptr;
  mnemo_session_t *session = nullptr;
  mnemo_status_t status = mnemo_device_open(options.device.c_str(), &device);
  if (!status)
    status = mnemo_session_create_on(
        model, options.function.empty() ? nullptr : options.function.c_str(),
        device, &session);
  mnemo_device_free(device);
  // From here on the session's reference keeps the model alive.
  mnemo_model_free(model);
  if (status)
    return fail(status);
  size_t function = mnemo_session_function(session);

  std::vector<Input> inputs;
  int rc = readInputs(options, model, function, inputs);
  if (rc < 0 && options.threads >= 0)
    if ((status = mnemo_session_set_threads(
             session, static_cast<size_t>(options.threads))))
      rc = fail(status);
  if (rc < 0 && options.cudaGraph >= 0)
    if ((status = mnemo_session_set_cuda_graph(session, options.cudaGraph)))
      rc = fail(status);
  // The first run warms up (page faults, the workers' start) unprofiled,
  // unless it is the only one.
  long warmUps = options.repeat > 1 ? 1 : 0;
  std::vector<double> times, profiledTimes;
  for (long r = 0; rc < 0 && r < options.repeat; ++r) {
    if (options.profile && r == warmUps &&
        (status = mnemo_session_set_profiling(session, 1))) {
      rc = fail(status);
      break;
    }
    if ((status = bindInputs(session, inputs))) {
      rc = fail(status);
      break;
    }
    double start = nowMs();
    status = mnemo_session_run(session);
    times.push_back(nowMs() - start);
    if (r >= warmUps)
      profiledTimes.push_back(times.back());
    if (status)
      rc = fail(status);
  }

  const char *outputDir =
      options.outputDir.empty() ? nullptr : options.outputDir.c_str();
  if (rc < 0 && outputDir)
    rc = makeOutputDir(outputDir);
  size_t outputs = mnemo_session_output_count(session);
  for (size_t i = 0; rc < 0 && i < outputs; ++i) {
    mnemo_tensor_info_t info;
    mnemo_tensor_t t;
    if ((status = mnemo_model_output_info(model, function, i, &info)) ||
        (status = mnemo_session_get_output(session, i, &t))) {
      rc = fail(status);
      break;
    }
    std::string line = std::string(info.name) + ": " +
                       mnemo_dtype_name(t.dtype) + " " +
                       formatShape(t.shape, t.rank);
    if (outputDir) {
      std::string path;
      rc = writeOutput(outputDir, info.name, t, path);
      line += " -> " + path;
      if (t.dtype == MNEMO_DTYPE_BF16)
        line += " (as f32)";
    }
    if (rc < 0)
      std::printf("%s\n", line.c_str());
  }
  if (rc < 0) {
    size_t n = times.size(), threads = mnemo_session_threads(session);
    // Scripts read "latency: X ms (median of N"; the device's details follow.
    if (options.cuda)
      std::printf("latency: %.4g ms (median of %zu, cuda, %s)\n",
                  median(times), n,
                  mnemo_session_uses_cuda_graph(session) ? "graph"
                                                         : "kernel by kernel");
    else
      std::printf("latency: %.4g ms (median of %zu), %zu thread%s\n",
                  median(times), n, threads, threads == 1 ? "" : "s");
    if (options.profile && options.cuda)
      std::printf("profile: no profile points on --device=cuda\n");
    else if (options.profile)
      printProfile(session, profiledTimes, static_cast<size_t>(warmUps));
    rc = 0;
  }
  mnemo_session_free(session);
  return rc;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  int rc = parseArgs(argc, argv, options);
  if (rc >= 0)
    return rc;
  if (options.dumpPlan)
    return dumpPlan(options.artifact);
  if (options.generate)
    return runGeneration(options);
  return run(options);
}

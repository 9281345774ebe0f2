//===- generate.cpp - mnemo-run --generate ----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mnemo-run OUT.mnemo --generate N --input input_ids=IDS.npy
//             --output-dir DIR [--prompt-lengths L0,L1,...]
//             [--teacher-force TOKENS.npy] [--threads N] [--kv-pages N]
//             [--prompt-chunk N] [--repeat N]
//
// Row i of IDS ([B, S] int64) is a prompt of its first Li tokens (default
// S). All rows are added to one generator (one prefill over the ragged
// batch; with --prompt-chunk N, a prefill of each prompt's first N tokens
// and appends of N tokens at a time, mnemo_generator_append, each over the
// rows that still have some), then each step picks every row's next token
// greedily from its logits (the first maximum) and feeds all rows in one
// decode call. With
// --teacher-force, step i feeds TOKENS[:, i] instead (tokens.npy still
// records the greedy choice), so that a lossy cache can be compared step by
// step. Writes DIR/tokens.npy (int64 [B, N]) and DIR/step_logits.npy
// (float32 [B, N, V], the logits each token was chosen from), and prints
// the time to first token (the prefill), the time per output token (the
// median decode step), the decode throughput and the KV cache the rows
// hold at the end (mnemo_generator_cache_bytes). With --repeat N it
// generates N times over one generator (releasing the sequences between
// runs) and reports the last run, a warm one: the first allocates the
// device's buffers and captures its graphs.
//
//===----------------------------------------------------------------------===//

#include "generate.h"

#include "cli.h"
#include "npy.h"

#include "mnemo/runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unistd.h>

using namespace mnemo::run;

namespace {

/// Reads an int64 [rows, >= columns] matrix.
int readTokens(const std::string &path, const char *what, mnemo::npy::Array &a,
               long rows, long columns) {
  std::string error;
  if (!mnemo::npy::read(path.c_str(), a, error))
    return fail(path, error);
  if (a.dtype != MNEMO_DTYPE_I64 || a.shape.size() != 2)
    return fail(path, std::string(what) + ": expected an int64 matrix [B, " +
                          (columns ? std::to_string(columns) : "S") +
                          "], got " + mnemo_dtype_name(a.dtype) + " " +
                          formatShape(a.shape.data(), a.shape.size()));
  if ((rows && a.shape[0] != rows) || a.shape[1] < columns || a.shape[1] < 1)
    return fail(path, std::string(what) + ": shape " +
                          formatShape(a.shape.data(), a.shape.size()) +
                          ", expected [" + std::to_string(rows) + ", " +
                          std::to_string(std::max(columns, 1L)) + "] or wider");
  return -1;
}

} // namespace

int mnemo::run::generate(const GenerateOptions &options) {
  if (options.ids.empty())
    return fail("--generate", "needs --input input_ids=IDS.npy");
  if (options.outputDir.empty())
    return fail("--generate", "needs --output-dir DIR");
  mnemo::npy::Array ids, teacher;
  if (int rc = readTokens(options.ids, "input_ids", ids, 0, 1); rc >= 0)
    return rc;
  long rows = static_cast<long>(ids.shape[0]), width = ids.shape[1];
  long steps = options.steps;
  if (!options.teacher.empty())
    if (int rc = readTokens(options.teacher, "--teacher-force", teacher, rows,
                            steps);
        rc >= 0)
      return rc;
  std::vector<size_t> lengths(rows, static_cast<size_t>(width));
  if (!options.lengths.empty()) {
    if (static_cast<long>(options.lengths.size()) != rows)
      return fail("--prompt-lengths",
                  std::to_string(options.lengths.size()) + " lengths for " +
                      std::to_string(rows) + " rows of " + options.ids);
    for (long r = 0; r < rows; ++r) {
      long l = options.lengths[r];
      if (l < 1 || l > width)
        return fail("--prompt-lengths",
                    "row " + std::to_string(r) + ": length " +
                        std::to_string(l) + ", expected 1 to " +
                        std::to_string(width));
      lengths[r] = static_cast<size_t>(l);
    }
  }

  mnemo_model_t *model = nullptr;
  if (mnemo_status_t status = mnemo_model_load_file(options.artifact, &model))
    return fail(status);
  if (int rc = setWeights(model, options.weights); rc >= 0) {
    mnemo_model_free(model);
    return rc;
  }
  mnemo_device_t *device = nullptr;
  mnemo_generator_t *gen = nullptr;
  mnemo_status_t status = mnemo_device_open(options.device.c_str(), &device);
  // Pages for every row's prompt and generated tokens, unless given.
  size_t pages = static_cast<size_t>(options.pages);
  if (!status && !pages) {
    size_t p = 1;
    status = mnemo_generator_page_size_of(model, &p);
    for (long r = 0; r < rows; ++r)
      pages += (lengths[r] + static_cast<size_t>(steps) + p - 1) / p;
  }
  if (!status)
    status = mnemo_generator_create(model, device, pages, &gen);
  mnemo_device_free(device);
  mnemo_model_free(model);
  if (status)
    return fail(status);
  if (options.threads >= 0 &&
      (status = mnemo_generator_set_threads(
           gen, static_cast<size_t>(options.threads)))) {
    mnemo_generator_free(gen);
    return fail(status);
  }

  const auto *idData = reinterpret_cast<const int64_t *>(ids.data.get());
  const auto *forced = reinterpret_cast<const int64_t *>(teacher.data.get());
  long forcedWidth = forced ? static_cast<long>(teacher.shape[1]) : 0;
  std::vector<const int64_t *> prompts(rows);
  for (long r = 0; r < rows; ++r)
    prompts[r] = idData + r * width;
  std::vector<uint64_t> seq(rows);
  size_t vocab = mnemo_generator_vocab_size(gen);
  std::vector<int64_t> tokens(rows * steps), fed(rows);
  std::vector<float> stepLogits(rows * steps * vocab);
  bool progress = isatty(STDERR_FILENO);

  size_t chunk = options.promptChunk > 0
                     ? static_cast<size_t>(options.promptChunk)
                     : static_cast<size_t>(width);
  std::vector<size_t> first(rows);
  for (long r = 0; r < rows; ++r)
    first[r] = std::min(lengths[r], chunk);
  if (options.promptChunk > 0 && !mnemo_generator_can_append(gen)) {
    // The append's own error says what is missing.
    status = mnemo_generator_append(gen, 0, nullptr, nullptr, nullptr);
    std::string message = mnemo_status_message(status);
    mnemo_status_free(status);
    mnemo_generator_free(gen);
    return fail("--prompt-chunk", message);
  }
  // Each run but the last releases its sequences, so that the next one
  // starts from an empty pool (the buffers it allocated and the graphs it
  // captured stay): --repeat's later runs time a warm generator.
  std::vector<double> stepTimes;
  double ttft = 0, coldTtft = 0;
  uint64_t cacheBytes = 0, held = 0;
  for (long run = 0; run < options.repeat; ++run) {
    stepTimes.clear();
    double start = nowMs();
    status = mnemo_generator_add(gen, static_cast<size_t>(rows),
                                 prompts.data(), first.data(), seq.data());
    for (size_t done = chunk; !status; done += chunk) {
      std::vector<uint64_t> live;
      std::vector<const int64_t *> parts;
      std::vector<size_t> counts;
      for (long r = 0; r < rows; ++r)
        if (lengths[r] > done) {
          live.push_back(seq[r]);
          parts.push_back(prompts[r] + done);
          counts.push_back(std::min(lengths[r] - done, chunk));
        }
      if (live.empty())
        break;
      status = mnemo_generator_append(gen, live.size(), live.data(),
                                      parts.data(), counts.data());
    }
    ttft = nowMs() - start;
    coldTtft = run ? coldTtft : ttft;
    if (status) {
      // "prompt I: ..." is row I of the ids file.
      std::string message = mnemo_status_message(status);
      mnemo_status_free(status);
      mnemo_generator_free(gen);
      return fail(options.ids, message);
    }
    for (long i = 0; !status && i < steps; ++i) {
      for (long r = 0; !status && r < rows; ++r) {
        const float *logits = nullptr;
        if ((status = mnemo_generator_logits(gen, seq[r], &logits)))
          break;
        std::copy(logits, logits + vocab,
                  &stepLogits[(r * steps + i) * vocab]);
        tokens[r * steps + i] =
            std::max_element(logits, logits + vocab) - logits;
        fed[r] = forced ? forced[r * forcedWidth + i] : tokens[r * steps + i];
      }
      if (status || i + 1 == steps)
        break;
      double t0 = nowMs();
      status = mnemo_generator_step(gen, static_cast<size_t>(rows),
                                    seq.data(), fed.data());
      stepTimes.push_back(nowMs() - t0);
      if (progress)
        std::fprintf(stderr, "\rgenerating: %ld/%ld tokens", i + 2, steps);
    }
    if (progress && steps > 1)
      std::fprintf(stderr, "\n");
    // The tokens the rows hold: their prompts and every fed token.
    cacheBytes = mnemo_generator_cache_bytes(gen);
    held = 0;
    for (long r = 0; r < rows; ++r) {
      size_t length = 0;
      if (!status &&
          !(status = mnemo_generator_sequence_length(gen, seq[r], &length)))
        held += length;
    }
    for (long r = 0; !status && run + 1 < options.repeat && r < rows; ++r)
      status = mnemo_generator_release(gen, seq[r]);
    if (status)
      break;
  }
  mnemo_generator_free(gen);
  if (status)
    return fail(status);

  if (int rc = makeOutputDir(options.outputDir.c_str()); rc >= 0)
    return rc;
  std::string error, tokensPath = options.outputDir + "/tokens.npy",
                     logitsPath = options.outputDir + "/step_logits.npy";
  int64_t tokenShape[] = {rows, steps};
  int64_t logitShape[] = {rows, steps, static_cast<int64_t>(vocab)};
  if (!mnemo::npy::write(tokensPath.c_str(), MNEMO_DTYPE_I64, tokenShape, 2,
                         tokens.data(), tokens.size() * sizeof(int64_t),
                         error))
    return fail(tokensPath, error);
  if (!mnemo::npy::write(logitsPath.c_str(), MNEMO_DTYPE_F32, logitShape, 3,
                         stepLogits.data(), stepLogits.size() * sizeof(float),
                         error))
    return fail(logitsPath, error);
  std::printf("tokens: i64 [%ld, %ld] -> %s\n", rows, steps,
              tokensPath.c_str());
  std::printf("step_logits: f32 [%ld, %ld, %zu] -> %s\n", rows, steps, vocab,
              logitsPath.c_str());
  double tpot = stepTimes.empty() ? 0 : median(stepTimes);
  double total = 0;
  for (double t : stepTimes)
    total += t;
  std::printf("time to first token: %.4g ms (prefill of %ld prompt%s)\n",
              ttft, rows, rows == 1 ? "" : "s");
  if (options.repeat > 1)
    std::printf("the last of %ld runs; the first run's time to first token: "
                "%.4g ms\n",
                options.repeat, coldTtft);
  if (!stepTimes.empty())
    std::printf("time per output token: %.4g ms (median of %zu decode "
                "steps); %.4g tokens/s over the batch of %ld\n",
                tpot, stepTimes.size(),
                total > 0 ? 1e3 * rows * stepTimes.size() / total : 0.0,
                rows);
  std::printf("kv cache: %llu B held for %llu tokens (%.1f B per token)\n",
              static_cast<unsigned long long>(cacheBytes),
              static_cast<unsigned long long>(held),
              held ? double(cacheBytes) / double(held) : 0.0);
  return 0;
}

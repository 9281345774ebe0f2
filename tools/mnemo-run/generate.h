//===- generate.h - mnemo-run --generate ------------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_MNEMO_RUN_GENERATE_H
#define MNEMO_TOOLS_MNEMO_RUN_GENERATE_H

#include <string>
#include <vector>

namespace mnemo::run {

struct GenerateOptions {
  const char *artifact = nullptr;
  long steps = 0;            // --generate N
  std::string ids;           // --input input_ids=FILE.npy
  std::string outputDir;     // --output-dir
  std::vector<long> lengths; // --prompt-lengths (empty: every row whole)
  std::string teacher;       // --teacher-force FILE.npy
  std::string device = "cpu";
  long threads = -1; // -1: not given
  long pages = 0;    // --kv-pages (0: what the batch needs)
  long promptChunk = 0; // --prompt-chunk (0: each prompt in one prefill)
  long repeat = 1;      // --repeat: runs over one generator, the last timed
  std::vector<std::pair<std::string, std::string>> weights; // --weight
};

/// Prefills every row of the ids, decodes `steps` tokens greedily (or
/// teacher-forced), writes tokens.npy and step_logits.npy and prints the
/// timings. Returns the exit code.
int generate(const GenerateOptions &options);

} // namespace mnemo::run

#endif // MNEMO_TOOLS_MNEMO_RUN_GENERATE_H

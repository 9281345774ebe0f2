//===- run_cuda.h - mnemo-run --device=cuda ---------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_MNEMO_RUN_RUN_CUDA_H
#define MNEMO_TOOLS_MNEMO_RUN_RUN_CUDA_H

#include <string>
#include <utility>
#include <vector>

namespace mnemo::run {

/// Runs `function` (empty: the first) of a PTX module from `mnemoc
/// --emit=ptx` on the CUDA device, `repeat` times, with the named .npy
/// inputs; prints each output and the median latency and writes the
/// outputs to `outputDir` (unless empty). `graph` is 1 to replay the plan
/// as a CUDA graph, 0 to launch kernel by kernel, -1 for the program's
/// default. Returns the exit code.
int runCuda(const char *ptx,
            const std::vector<std::pair<std::string, std::string>> &inputs,
            const std::string &outputDir, long repeat,
            const std::string &function, int graph);

} // namespace mnemo::run

#endif // MNEMO_TOOLS_MNEMO_RUN_RUN_CUDA_H

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
/// outputs to `outputDir` (unless empty). Returns the exit code.
int runCuda(const char *ptx,
            const std::vector<std::pair<std::string, std::string>> &inputs,
            const std::string &outputDir, long repeat,
            const std::string &function);

} // namespace mnemo::run

#endif // MNEMO_TOOLS_MNEMO_RUN_RUN_CUDA_H

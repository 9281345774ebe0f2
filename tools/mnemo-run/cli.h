//===- cli.h - mnemo-run's messages, names and timing -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the CPU and CUDA paths of mnemo-run share: one-line errors, shapes
// and output file names as printed, the output directory, and latency.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_MNEMO_RUN_CLI_H
#define MNEMO_TOOLS_MNEMO_RUN_CLI_H

#include "mnemo/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mnemo::run {

/// Prints "mnemo-run: error: <subject>: <reason>"; returns the exit code 1.
int fail(const std::string &subject, const std::string &reason);
/// Reports a runtime status (its message already names the subject) and
/// frees it; returns 1.
int fail(mnemo_status_t status);

/// "[2, ?, 64]" (a negative dim is dynamic).
std::string formatShape(const int64_t *shape, size_t rank);
/// A file name for output `name`: characters outside [A-Za-z0-9._-] become
/// '_'.
std::string fileNameFor(const char *name);
/// Creates `dir` unless it exists; returns -1 to go on, else the exit code.
int makeOutputDir(const char *dir);

/// Monotonic milliseconds.
double nowMs();
/// The median of `times` (sorted in place; not empty).
double median(std::vector<double> &times);

/// Replaces the model's weights named in `weights` (name, .npy file; an
/// attached adapter's factors) before any session is made. Returns -1 to go
/// on, else the exit code.
int setWeights(mnemo_model_t *model,
               const std::vector<std::pair<std::string, std::string>> &weights);

} // namespace mnemo::run

#endif // MNEMO_TOOLS_MNEMO_RUN_CLI_H

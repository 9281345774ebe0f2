//===- plan_json.h - mnemo-run --dump-plan ----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_MNEMO_RUN_PLAN_JSON_H
#define MNEMO_TOOLS_MNEMO_RUN_PLAN_JSON_H

namespace mnemo::run {

/// Prints the execution plan of the artifact at `path` as JSON on stdout
/// (docs/Runtime.md describes it): target, where the code and each weight
/// lie in the files, and per function its signature and its plan (GPU
/// buffers and launches, or CPU calls). The artifact is verified by
/// loading it first. Returns the exit code.
int dumpPlan(const char *path);

} // namespace mnemo::run

#endif // MNEMO_TOOLS_MNEMO_RUN_PLAN_JSON_H

//===- profile_table.h - mnemo-run --profile's table ------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_TOOLS_MNEMO_RUN_PROFILE_TABLE_H
#define MNEMO_TOOLS_MNEMO_RUN_PROFILE_TABLE_H

#include "mnemo/runtime.h"

#include <cstddef>
#include <vector>

namespace mnemo::run {

/// Rows shown before the rest is summed up in one line.
constexpr size_t kProfileRows = 30;

/// Prints the session's profile points reached in the profiled runs, whose
/// times are `runMs` (after `warmUps`, 0 or 1, unprofiled runs), slowest
/// first: rank, ms per run, share of the median run, regions per run, name
/// (kProfileRows of them, then the rest summed up); then the sum of the
/// points against the median run. One line when the model has no profile
/// points.
void printProfile(mnemo_session_t *session, std::vector<double> runMs,
                  size_t warmUps);

} // namespace mnemo::run

#endif // MNEMO_TOOLS_MNEMO_RUN_PROFILE_TABLE_H

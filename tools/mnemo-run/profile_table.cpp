//===- profile_table.cpp - mnemo-run --profile's table ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// profile: 4 runs after a warm-up run, 2 threads; 3 of 4 points reached
//   rank    ms/run   % run  calls/run  point
//      1     0.412   35.2%          1  linalg.generic (node /model/MatMul)
//   ...
//   ... 12 more points, 0.123 ms
// points: 1.05 ms per run, 89.6% of the median run (1.17 ms)
//
// A point may enclose others, so the sum can pass 100%.
//
//===----------------------------------------------------------------------===//

#include "profile_table.h"

#include "cli.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace {

struct Row {
  size_t index;
  const char *name;
  uint64_t calls;
  double ms;
};

} // namespace

void mnemo::run::printProfile(mnemo_session_t *session,
                              std::vector<double> runMs, size_t warmUps) {
  size_t count = mnemo_session_profile_count(session);
  if (count == 0) {
    std::printf("profile: the artifact has no profile points (an older "
                "mnemoc, or compiled without them)\n");
    return;
  }
  std::vector<Row> rows;
  for (size_t i = 0; i < count; ++i) {
    Row row{i, nullptr, 0, 0};
    if (mnemo_status_t status = mnemo_session_profile_entry(
            session, i, &row.name, &row.calls, &row.ms)) {
      mnemo_status_free(status); // cannot happen for i < count
      continue;
    }
    if (row.calls > 0)
      rows.push_back(row);
  }
  // Slowest first; ties in artifact order.
  std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
    return a.ms != b.ms ? a.ms > b.ms : a.index < b.index;
  });
  auto runs = static_cast<double>(runMs.size());
  double medianMs = median(runMs);
  size_t threads = mnemo_session_threads(session);
  std::printf("profile: %zu run%s %s, %zu thread%s; %zu of %zu points "
              "reached\n",
              runMs.size(), runMs.size() == 1 ? "" : "s",
              warmUps ? "after a warm-up run" : "(no warm-up)", threads,
              threads == 1 ? "" : "s", rows.size(), count);
  std::printf("  rank    ms/run   %% run  calls/run  point\n");
  double sumMs = 0, restMs = 0;
  auto share = [&](double ms) {
    return medianMs > 0 ? 100 * ms / medianMs : 0.0;
  };
  for (size_t r = 0; r < rows.size(); ++r) {
    double ms = rows[r].ms / runs;
    sumMs += ms;
    if (r >= kProfileRows) {
      restMs += ms;
      continue;
    }
    std::printf("  %4zu  %8.3f  %5.1f%%  %9.4g  %s\n", r + 1, ms, share(ms),
                static_cast<double>(rows[r].calls) / runs, rows[r].name);
  }
  if (rows.size() > kProfileRows)
    std::printf("  ... %zu more points, %.3f ms\n", rows.size() - kProfileRows,
                restMs);
  std::printf("points: %.4g ms per run, %.1f%% of the median run (%.4g ms)\n",
              sumMs, share(sumMs), medianMs);
}

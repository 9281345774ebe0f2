//===- profile.cpp - per-point time of a session's runs ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "profile.h"

#include "support/Sync.h"

using namespace mnemo::rt;

int64_t ProfileState::nowNs() { return monotonicNanos(); }

void ProfileState::reset(size_t count) { points.assign(count, Point()); }

void ProfileState::begin(int64_t point, int64_t ns) {
  if (point < 0 || static_cast<uint64_t>(point) >= points.size())
    return;
  // A begin while inside restarts the region: regions of one point never
  // nest in well-formed code.
  points[point].startNs = ns;
}

void ProfileState::end(int64_t point, int64_t ns) {
  if (point < 0 || static_cast<uint64_t>(point) >= points.size())
    return;
  Point &p = points[point];
  if (p.startNs < 0)
    return;
  if (ns > p.startNs)
    p.totalNs += static_cast<uint64_t>(ns - p.startNs);
  ++p.calls;
  p.startNs = -1;
}

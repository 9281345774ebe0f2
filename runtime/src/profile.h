//===- profile.h - per-point time of a session's runs -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The code's profile hook reports when region `point` begins and ends; a
// session with profiling enabled adds each region's wall time (steady
// clock) and count to the point's totals. The hook comes from the kernel's
// calling thread only, so the state needs no locking; a point id out of
// range or an end without a begin (corrupt code, never a well-formed
// artifact) is ignored rather than trusted.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_PROFILE_H
#define MNEMO_RUNTIME_PROFILE_H

#include "support/Vector.h"

#include <cstddef>
#include <cstdint>

namespace mnemo::rt {

class ProfileState {
public:
  /// Zero counters for `points` points.
  void reset(size_t points);

  /// Region `point` begins / ends now.
  void begin(int64_t point) { begin(point, nowNs()); }
  void end(int64_t point) { end(point, nowNs()); }
  /// The same at time `ns` (for tests).
  void begin(int64_t point, int64_t ns);
  void end(int64_t point, int64_t ns);

  size_t size() const { return points.size(); }
  uint64_t calls(size_t point) const { return points[point].calls; }
  uint64_t totalNs(size_t point) const { return points[point].totalNs; }

  /// Steady-clock nanoseconds.
  static int64_t nowNs();

private:
  struct Point {
    uint64_t totalNs = 0;
    uint64_t calls = 0;
    int64_t startNs = -1; // -1: not inside the region
  };
  Vector<Point> points;
};

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_PROFILE_H

//===- temporary_arena.cpp - GPU temporaries in one block -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "cuda/temporary_arena.h"

#include <algorithm>

using namespace mnemo::rt;
using namespace mnemo::rt::cuda;

namespace {

constexpr uint32_t kUnused = UINT32_MAX;

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

} // namespace

TemporaryArena::TemporaryArena(const GpuPlan &plan) {
  size_t n = plan.buffers.size();
  first.assign(n, kUnused);
  last.assign(n, 0);
  offsets.assign(n, 0);
  placedBytes.assign(n, 0);
  auto touch = [&](size_t buffer, uint32_t at) {
    first[buffer] = std::min(first[buffer], at);
    last[buffer] = std::max(last[buffer], at);
  };
  for (size_t k = 0; k < plan.launches.size(); ++k) {
    for (const GpuArgument &a : plan.launches[k].args) {
      if (a.kind != GpuArgument::Kind::Buffer)
        continue;
      uint32_t at = static_cast<uint32_t>(k);
      touch(a.value, at);
      // A kernel reads a tensor map's source through the map.
      const GpuBuffer &b = plan.buffers[a.value];
      if (b.kind == GpuBuffer::Kind::TensorMap)
        touch(b.map.source, at);
    }
  }
  // Outputs are copied out after the last launch.
  uint32_t end = static_cast<uint32_t>(plan.launches.size());
  for (uint32_t o : plan.outputBuffers)
    touch(o, end);
  for (size_t i = 0; i < n; ++i) {
    if (plan.buffers[i].kind != GpuBuffer::Kind::Temporary)
      continue;
    temps.push_back(static_cast<uint32_t>(i));
    if (first[i] == kUnused) // named by no launch: live after them all
      first[i] = last[i] = end;
  }
}

bool TemporaryArena::place(const Vector<uint64_t> &bytes) {
  bool same = placed;
  for (uint32_t t : temps)
    same = same && bytes[t] == placedBytes[t];
  if (same)
    return false;
  Vector<uint32_t> order;
  for (uint32_t t : temps)
    if (bytes[t])
      order.push_back(t);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (bytes[a] != bytes[b])
      return bytes[a] > bytes[b];
    return first[a] != first[b] ? first[a] < first[b] : a < b;
  });
  Vector<uint64_t> old = offsets;
  uint64_t oldSpan = span;
  span = 0;
  for (uint32_t t : temps)
    offsets[t] = 0;
  // Per placed temporary live at the same time as the one being placed:
  // its [offset, end) in the arena.
  struct Range {
    uint64_t begin, end;
  };
  Vector<Range> taken;
  for (size_t p = 0; p < order.size(); ++p) {
    uint32_t t = order[p];
    taken.clear();
    for (size_t q = 0; q < p; ++q) {
      uint32_t u = order[q];
      if (first[u] <= last[t] && first[t] <= last[u])
        taken.push_back(Range{offsets[u], offsets[u] + bytes[u]});
    }
    std::sort(taken.begin(), taken.end(),
              [](const Range &a, const Range &b) { return a.begin < b.begin; });
    uint64_t at = 0;
    for (const Range &r : taken) {
      if (at + bytes[t] <= r.begin)
        break;
      at = std::max(at, alignUp(r.end, kAlign));
    }
    offsets[t] = at;
    span = std::max(span, at + bytes[t]);
  }
  span = alignUp(span, kAlign);
  for (uint32_t t : temps)
    placedBytes[t] = bytes[t];
  bool moved = !placed || span != oldSpan;
  for (uint32_t t : temps)
    moved = moved || offsets[t] != old[t];
  placed = true;
  return moved;
}

//===- TemporaryArenaTest.cpp - GPU temporaries in one block ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The layout of a GPU plan's temporaries (cuda/temporary_arena.h) without a
// driver: live ranges from launches, tensor maps and outputs; temporaries
// live at the same time never share a byte, the others do; the same bytes
// give the same layout; and on random plans, every pair that is live
// together is disjoint and aligned, within the sum of the sizes.
//
//===----------------------------------------------------------------------===//

#include "cuda/temporary_arena.h"

#include "gtest/gtest.h"

#include <random>
#include <vector>

using namespace mnemo::rt;
using mnemo::rt::cuda::TemporaryArena;

namespace {

GpuBuffer temporary() { return GpuBuffer{}; }

GpuBuffer input(uint32_t index) {
  GpuBuffer b;
  b.kind = GpuBuffer::Kind::Input;
  b.index = index;
  return b;
}

/// A launch whose arguments are the buffers `args`.
GpuLaunch launch(std::initializer_list<uint64_t> args) {
  GpuLaunch l;
  for (uint64_t a : args)
    l.args.push_back(GpuArgument{GpuArgument::Kind::Buffer, a});
  return l;
}

bool overlap(uint64_t a, uint64_t na, uint64_t b, uint64_t nb) {
  return a < b + nb && b < a + na;
}

/// A chain x -> t1 -> t2 -> t3 -> y: each temporary is read by the launch
/// after the one writing it, so t1 may share with t3 and t2 with y.
GpuPlan chain() {
  GpuPlan p;
  p.buffers.push_back(input(0));    // 0: x
  p.buffers.push_back(temporary()); // 1: t1
  p.buffers.push_back(temporary()); // 2: t2
  p.buffers.push_back(temporary()); // 3: t3
  p.buffers.push_back(temporary()); // 4: y (output)
  p.launches.push_back(launch({0, 1}));
  p.launches.push_back(launch({1, 2}));
  p.launches.push_back(launch({2, 3}));
  p.launches.push_back(launch({3, 4}));
  p.outputBuffers.push_back(4);
  return p;
}

TEST(TemporaryArenaTest, ReusesBytesOfTemporariesNoLongerLive) {
  GpuPlan p = chain();
  TemporaryArena arena(p);
  EXPECT_EQ(arena.temporaries().size(), 4u);
  Vector<uint64_t> bytes{64, 1000, 1000, 1000, 100};
  EXPECT_TRUE(arena.place(bytes));
  // t1 and t3 share, and so do t2 and y (live from launch 3 to the end):
  // two 1000-byte slots, each rounded up to 1024.
  EXPECT_EQ(arena.offset(1), arena.offset(3));
  EXPECT_EQ(arena.offset(2), arena.offset(4));
  EXPECT_FALSE(overlap(arena.offset(1), 1000, arena.offset(2), 1000));
  EXPECT_FALSE(overlap(arena.offset(3), 1000, arena.offset(4), 100));
  EXPECT_EQ(arena.extent(), 2048u);
  for (uint32_t t : arena.temporaries())
    EXPECT_EQ(arena.offset(t) % TemporaryArena::kAlign, 0u);
  // The same bytes: the same layout, and nothing to do.
  uint64_t t3 = arena.offset(3);
  EXPECT_FALSE(arena.place(bytes));
  EXPECT_EQ(arena.offset(3), t3);
  // Bytes of inputs are not the arena's business.
  bytes[0] = 1 << 20;
  EXPECT_FALSE(arena.place(bytes));
  // A temporary of no bytes takes none.
  bytes[2] = 0;
  EXPECT_TRUE(arena.place(bytes));
  EXPECT_EQ(arena.offset(2), 0u);
  EXPECT_LE(arena.extent(), 1280u);
}

TEST(TemporaryArenaTest, TensorMapKeepsItsSourceLive) {
  GpuPlan p;
  p.buffers.push_back(temporary()); // 0: written by launch 0
  p.buffers.push_back(temporary()); // 1: written by launch 1
  GpuBuffer map;
  map.kind = GpuBuffer::Kind::TensorMap;
  map.map.source = 0;
  p.buffers.push_back(map);         // 2: a map of buffer 0
  p.buffers.push_back(temporary()); // 3: the output
  p.launches.push_back(launch({0}));
  p.launches.push_back(launch({1}));
  p.launches.push_back(launch({2, 1, 3})); // reads 0 through the map
  p.outputBuffers.push_back(3);
  TemporaryArena arena(p);
  EXPECT_EQ(arena.temporaries().size(), 3u);
  arena.place(Vector<uint64_t>{512, 512, 128, 512});
  // 0, 1 and 3 all live at launch 2.
  EXPECT_FALSE(overlap(arena.offset(0), 512, arena.offset(1), 512));
  EXPECT_FALSE(overlap(arena.offset(0), 512, arena.offset(3), 512));
  EXPECT_FALSE(overlap(arena.offset(1), 512, arena.offset(3), 512));
  EXPECT_EQ(arena.extent(), 1536u);
}

TEST(TemporaryArenaTest, OutputsLiveToTheEnd) {
  GpuPlan p;
  p.buffers.push_back(temporary()); // 0: an output written first
  p.buffers.push_back(temporary()); // 1: scratch of the second launch
  p.launches.push_back(launch({0}));
  p.launches.push_back(launch({1}));
  p.outputBuffers.push_back(0);
  TemporaryArena arena(p);
  arena.place(Vector<uint64_t>{256, 256});
  EXPECT_NE(arena.offset(0), arena.offset(1));
  // Without the output, the two would share.
  p.outputBuffers.clear();
  TemporaryArena shared(p);
  shared.place(Vector<uint64_t>{256, 256});
  EXPECT_EQ(shared.offset(0), shared.offset(1));
}

TEST(TemporaryArenaTest, RandomPlansNeverShareLiveBytes) {
  std::mt19937 rng(20261205);
  for (int round = 0; round < 300; ++round) {
    GpuPlan p;
    size_t buffers = 1 + rng() % 40, launches = 1 + rng() % 30;
    for (size_t i = 0; i < buffers; ++i)
      p.buffers.push_back(rng() % 5 ? temporary() : input(i));
    for (size_t k = 0; k < launches; ++k) {
      GpuLaunch l;
      for (size_t a = rng() % 4; a > 0; --a)
        l.args.push_back(
            GpuArgument{GpuArgument::Kind::Buffer, rng() % buffers});
      p.launches.push_back(std::move(l));
    }
    for (size_t o = rng() % 3; o > 0; --o)
      p.outputBuffers.push_back(static_cast<uint32_t>(rng() % buffers));
    // The live ranges, computed here the plain way.
    std::vector<long> first(buffers, -1), last(buffers, -1);
    for (size_t k = 0; k < launches; ++k)
      for (const GpuArgument &a : p.launches[k].args) {
        if (first[a.value] < 0)
          first[a.value] = static_cast<long>(k);
        last[a.value] = static_cast<long>(k);
      }
    for (uint32_t o : p.outputBuffers) {
      first[o] = first[o] < 0 ? static_cast<long>(launches) : first[o];
      last[o] = static_cast<long>(launches);
    }
    TemporaryArena arena(p);
    for (int shape = 0; shape < 3; ++shape) {
      Vector<uint64_t> bytes;
      uint64_t sum = 0;
      for (size_t i = 0; i < buffers; ++i) {
        bytes.push_back(rng() % 4 ? rng() % 5000 : 0);
        if (p.buffers[i].kind == GpuBuffer::Kind::Temporary)
          sum += (bytes[i] + 255) / 256 * 256;
      }
      arena.place(bytes);
      EXPECT_LE(arena.extent(), sum);
      for (uint32_t a : arena.temporaries()) {
        EXPECT_EQ(arena.offset(a) % TemporaryArena::kAlign, 0u);
        EXPECT_LE(arena.offset(a) + bytes[a], arena.extent());
        for (uint32_t b : arena.temporaries()) {
          if (a >= b || first[a] < 0 || first[b] < 0 || !bytes[a] ||
              !bytes[b] || first[a] > last[b] || first[b] > last[a])
            continue;
          EXPECT_FALSE(
              overlap(arena.offset(a), bytes[a], arena.offset(b), bytes[b]))
              << "round " << round << ": buffers " << a << " and " << b;
        }
      }
      // Placing the same bytes again changes nothing.
      uint64_t extent = arena.extent();
      EXPECT_FALSE(arena.place(bytes));
      EXPECT_EQ(arena.extent(), extent);
    }
  }
}

} // namespace

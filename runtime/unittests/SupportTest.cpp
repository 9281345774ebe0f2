//===- SupportTest.cpp - the runtime's containers and strings ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// runtime/src/support replaces the parts of the standard library that live
// in libstdc++; these check it against what the runtime relies on: element
// lifetimes (every constructed element destroyed once), insertion from the
// vector itself, order and erasure in the sorted map, and formatting.
//
//===----------------------------------------------------------------------===//

#include "support/Map.h"
#include "support/Memory.h"
#include "support/String.h"
#include "support/Vector.h"

#include "gtest/gtest.h"

#include <string>

using namespace mnemo::rt;

namespace {

/// Counts live instances, so that a leak or a double destruction shows.
struct Tracked {
  static int live;
  int value;
  Tracked(int v = 0) : value(v) { ++live; }
  Tracked(const Tracked &o) : value(o.value) { ++live; }
  Tracked(Tracked &&o) noexcept : value(o.value) { ++live; }
  Tracked &operator=(const Tracked &) = default;
  Tracked &operator=(Tracked &&) = default;
  ~Tracked() { --live; }
  bool operator==(const Tracked &o) const { return value == o.value; }
};
int Tracked::live = 0;

std::string values(const Vector<Tracked> &v) {
  std::string s;
  for (const Tracked &t : v)
    s += std::to_string(t.value) + " ";
  return s;
}

TEST(Support, VectorElementLifetimes) {
  {
    Vector<Tracked> v;
    for (int i = 0; i < 100; ++i)
      v.emplace_back(i);
    EXPECT_EQ(Tracked::live, 100);
    v.erase(v.begin() + 10, v.begin() + 90);
    EXPECT_EQ(v.size(), 20u);
    EXPECT_EQ(Tracked::live, 20);
    EXPECT_EQ(v[10].value, 90);
    v.resize(25, Tracked(-1));
    EXPECT_EQ(v.back().value, -1);
    v.resize(3);
    EXPECT_EQ(values(v), "0 1 2 ");
    Vector<Tracked> copy = v;
    Vector<Tracked> moved = std::move(copy);
    EXPECT_TRUE(copy.empty());
    EXPECT_TRUE(moved == v);
    v.pop_back();
    EXPECT_EQ(Tracked::live, 5);
  }
  EXPECT_EQ(Tracked::live, 0);
}

TEST(Support, VectorInsertsFromItself) {
  Vector<Tracked> v;
  for (int i = 0; i < 4; ++i)
    v.emplace_back(i);
  // Both reallocate: the source must be read before the storage moves.
  v.insert(v.begin() + 1, v.begin(), v.end());
  EXPECT_EQ(values(v), "0 0 1 2 3 1 2 3 ");
  v.push_back(v[0]);
  v.emplace_back(v[2]);
  EXPECT_EQ(values(v), "0 0 1 2 3 1 2 3 0 1 ");
  v.insert(v.end(), Tracked(7));
  v.erase(v.begin());
  EXPECT_EQ(values(v), "0 1 2 3 1 2 3 0 1 7 ");
  v.clear();
  EXPECT_EQ(Tracked::live, 0);
}

TEST(Support, VectorOfScalars) {
  Vector<int64_t> v{3, 1, 2};
  v.assign(5, 9);
  EXPECT_EQ(v.size(), 5u);
  int64_t raw[] = {4, 5};
  v.insert(v.begin(), raw, raw + 2);
  Vector<int64_t> want{4, 5, 9, 9, 9, 9, 9};
  EXPECT_TRUE(v == want);
  v.reserve(1000);
  EXPECT_GE(v.capacity(), 1000u);
  EXPECT_TRUE(v == want);
}

TEST(Support, Strings) {
  String s = "model";
  s += ".mnemo";
  s += '!';
  EXPECT_STREQ(s.c_str(), "model.mnemo!");
  EXPECT_EQ(s.size(), 12u);
  EXPECT_EQ(s.find('.'), 5u);
  EXPECT_EQ(s.rfind('m'), 9u);
  EXPECT_EQ(s.find("xyz"), String::npos);
  EXPECT_STREQ(s.substr(6, 5).c_str(), "mnemo");
  EXPECT_STREQ(s.substr(100).c_str(), "");
  s += s; // from itself
  EXPECT_STREQ(s.c_str(), "model.mnemo!model.mnemo!");
  String t = String("a/b/") + "c" + String("/d");
  EXPECT_TRUE(t == "a/b/c/d");
  EXPECT_STREQ(formatString("%s: %d pages", "x", 42).c_str(), "x: 42 pages");
  EXPECT_STREQ(formatString("%s", std::string(1000, 'y').c_str()).c_str(),
               std::string(1000, 'y').c_str());
  EXPECT_TRUE(String().empty());
  EXPECT_STREQ(String(nullptr).c_str(), "");
}

TEST(Support, SortedMap) {
  SortedMap<uint64_t, Vector<int>> map;
  for (uint64_t key : {5, 1, 9, 3})
    map[key].push_back(int(key));
  ++map[3].front();
  EXPECT_EQ(map.size(), 4u);
  std::string order;
  for (auto &[key, value] : map)
    order += std::to_string(key) + ":" + std::to_string(value[0]) + " ";
  EXPECT_EQ(order, "1:1 3:4 5:5 9:9 ");
  EXPECT_FALSE(map.emplace(5, Vector<int>{0}).second);
  EXPECT_TRUE(map.emplace(7, Vector<int>{7}).second);
  EXPECT_EQ(map.count(7), 1u);
  EXPECT_EQ(map.find(4), map.end());
  auto it = map.erase(map.find(5));
  EXPECT_EQ(it->first, 7u);
  EXPECT_EQ(map.count(5), 0u);
  // A value's heap storage survives the entries moving around it.
  const int *data = map.find(9)->second.data();
  map[0];
  map[2];
  EXPECT_EQ(map.find(9)->second.data(), data);
}

TEST(Support, MakeAndDestroy) {
  Tracked *t = make<Tracked>(3);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->value, 3);
  destroy(t);
  destroy<Tracked>(nullptr);
  {
    Owned<Tracked> owned(make<Tracked>(4));
    EXPECT_EQ(Tracked::live, 1);
  }
  EXPECT_EQ(Tracked::live, 0);
}

} // namespace

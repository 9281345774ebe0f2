//===- Map.h - a sorted map over a Vector -----------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// std::map's and std::unordered_map's nodes are managed by libstdc++, which
// the runtime does not link. The runtime's maps are small (live buffers,
// free lists, sequences), so a sorted array with binary search serves them
// all. Unlike std::map, inserting or erasing moves entries: references and
// iterators into the map last only until the next insert or erase.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_SUPPORT_MAP_H
#define MNEMO_RUNTIME_SUPPORT_MAP_H

#include "support/Vector.h"

#include <algorithm>
#include <utility>

namespace mnemo::rt {

template <typename K, typename V> class SortedMap {
public:
  using Entry = std::pair<K, V>;
  using iterator = Entry *;
  using const_iterator = const Entry *;

  size_t size() const { return entries.size(); }
  bool empty() const { return entries.empty(); }
  iterator begin() { return entries.begin(); }
  iterator end() { return entries.end(); }
  const_iterator begin() const { return entries.begin(); }
  const_iterator end() const { return entries.end(); }
  void clear() { entries.clear(); }

  iterator find(const K &key) {
    iterator it = lowerBound(key);
    return it != end() && !(key < it->first) ? it : end();
  }
  const_iterator find(const K &key) const {
    return const_cast<SortedMap *>(this)->find(key);
  }
  size_t count(const K &key) const { return find(key) != end() ? 1 : 0; }

  /// The value of `key`, inserted default-made when absent.
  V &operator[](const K &key) {
    iterator it = lowerBound(key);
    if (it == end() || key < it->first)
      it = entries.insert(it, Entry(key, V()));
    return it->second;
  }
  /// Inserts `key` with `value` unless present; the entry and whether it
  /// was inserted.
  std::pair<iterator, bool> emplace(const K &key, V value) {
    iterator it = lowerBound(key);
    if (it != end() && !(key < it->first))
      return {it, false};
    Vector<Entry> one;
    one.emplace_back(key, std::move(value));
    it = entries.insert(it, std::make_move_iterator(one.begin()),
                        std::make_move_iterator(one.end()));
    return {it, true};
  }
  iterator erase(const_iterator it) { return entries.erase(it); }

private:
  Vector<Entry> entries;

  iterator lowerBound(const K &key) {
    return std::lower_bound(
        entries.begin(), entries.end(), key,
        [](const Entry &e, const K &k) { return e.first < k; });
  }
};

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_SUPPORT_MAP_H

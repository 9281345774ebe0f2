//===- Vector.h - a growable array without the C++ runtime ------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The part of std::vector's interface the runtime uses, over malloc, so that
// the runtime needs no libstdc++ (std::vector reaches it through its length
// and allocation errors and operator new). Growth that finds no memory ends
// the process, as std::vector does without exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_SUPPORT_VECTOR_H
#define MNEMO_RUNTIME_SUPPORT_VECTOR_H

#include "support/Memory.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <utility>

namespace mnemo::rt {

template <typename T> class Vector {
  static_assert(alignof(T) <= alignof(std::max_align_t),
                "over-aligned elements need aligned_alloc");

public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T *;
  using const_iterator = const T *;
  using reference = T &;
  using const_reference = const T &;

  Vector() = default;
  explicit Vector(size_t n) { resize(n); }
  Vector(size_t n, const T &value) { assign(n, value); }
  Vector(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
  }
  template <typename It, typename = decltype(*std::declval<It>()),
            typename = std::enable_if_t<!std::is_integral_v<It>>>
  Vector(It first, It last) {
    assign(first, last);
  }
  Vector(const Vector &other) { assign(other.begin(), other.end()); }
  Vector(Vector &&other) noexcept
      : items(other.items), count(other.count), room(other.room) {
    other.items = nullptr;
    other.count = other.room = 0;
  }
  Vector &operator=(const Vector &other) {
    if (this != &other)
      assign(other.begin(), other.end());
    return *this;
  }
  Vector &operator=(Vector &&other) noexcept {
    if (this != &other) {
      release();
      std::swap(items, other.items);
      std::swap(count, other.count);
      std::swap(room, other.room);
    }
    return *this;
  }
  ~Vector() { release(); }

  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  size_t capacity() const { return room; }
  T *data() { return items; }
  const T *data() const { return items; }
  T *begin() { return items; }
  T *end() { return items + count; }
  const T *begin() const { return items; }
  const T *end() const { return items + count; }
  T &operator[](size_t i) { return items[i]; }
  const T &operator[](size_t i) const { return items[i]; }
  T &front() { return items[0]; }
  const T &front() const { return items[0]; }
  T &back() { return items[count - 1]; }
  const T &back() const { return items[count - 1]; }

  void reserve(size_t n) {
    if (n > room)
      grow(n);
  }
  void clear() {
    destroyRange(items, items + count);
    count = 0;
  }
  void resize(size_t n) {
    if (n < count) {
      destroyRange(items + n, items + count);
    } else {
      reserve(n);
      for (size_t i = count; i < n; ++i)
        ::new (items + i) T();
    }
    count = n;
  }
  void resize(size_t n, const T &value) {
    if (n < count) {
      destroyRange(items + n, items + count);
      count = n;
      return;
    }
    T copy = value; // `value` may be an element
    reserve(n);
    for (size_t i = count; i < n; ++i)
      ::new (items + i) T(copy);
    count = n;
  }
  void assign(size_t n, const T &value) {
    T copy = value;
    clear();
    resize(n, copy);
  }
  template <typename It, typename = decltype(*std::declval<It>())>
  void assign(It first, It last) {
    clear();
    reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first)
      ::new (items + count++) T(*first);
  }

  template <typename... Args> T &emplace_back(Args &&...args) {
    if (count == room) {
      T made(std::forward<Args>(args)...); // args may name an element
      grow(nextRoom(count + 1));
      ::new (items + count) T(std::move(made));
    } else {
      ::new (items + count) T(std::forward<Args>(args)...);
    }
    return items[count++];
  }
  void push_back(const T &value) { emplace_back(value); }
  void push_back(T &&value) { emplace_back(std::move(value)); }
  void pop_back() { items[--count].~T(); }

  T *insert(const T *pos, const T &value) { return insert(pos, &value, &value + 1); }
  template <typename It, typename = decltype(*std::declval<It>())>
  T *insert(const T *pos, It first, It last) {
    size_t at = static_cast<size_t>(pos - items);
    size_t n = static_cast<size_t>(std::distance(first, last));
    if (n == 0)
      return items + at;
    Vector added(first, last); // the source may be this vector
    reserve(count + n > room ? nextRoom(count + n) : room);
    // Move the tail up by n, back to front, then fill the gap.
    for (size_t i = count; i-- > at;) {
      ::new (items + i + n) T(std::move(items[i]));
      items[i].~T();
    }
    for (size_t i = 0; i < n; ++i)
      ::new (items + at + i) T(std::move(added[i]));
    count += n;
    return items + at;
  }
  T *erase(const T *pos) { return erase(pos, pos + 1); }
  T *erase(const T *first, const T *last) {
    T *to = items + (first - items), *from = items + (last - items);
    T *end = items + count;
    T *out = std::move(from, end, to);
    destroyRange(out, end);
    count = static_cast<size_t>(out - items);
    return to;
  }

  friend bool operator==(const Vector &a, const Vector &b) {
    if (a.count != b.count)
      return false;
    for (size_t i = 0; i < a.count; ++i)
      if (!(a.items[i] == b.items[i]))
        return false;
    return true;
  }
  friend bool operator!=(const Vector &a, const Vector &b) { return !(a == b); }

private:
  T *items = nullptr;
  size_t count = 0, room = 0;

  static size_t nextRoom(size_t needed) {
    size_t n = 4;
    while (n < needed)
      n *= 2;
    return n;
  }
  static void destroyRange(T *first, T *last) {
    if constexpr (!std::is_trivially_destructible_v<T>)
      for (; first != last; ++first)
        first->~T();
  }
  void grow(size_t n) {
    size_t bytes = 0;
    if (__builtin_mul_overflow(n, sizeof(T), &bytes))
      abortOutOfMemory(SIZE_MAX);
    T *moved = static_cast<T *>(std::malloc(bytes));
    if (!moved)
      abortOutOfMemory(bytes);
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (count)
        std::memcpy(static_cast<void *>(moved), items, count * sizeof(T));
    } else {
      for (size_t i = 0; i < count; ++i) {
        ::new (moved + i) T(std::move(items[i]));
        items[i].~T();
      }
    }
    std::free(items);
    items = moved;
    room = n;
  }
  void release() {
    clear();
    std::free(items);
    items = nullptr;
    room = 0;
  }
};

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_SUPPORT_VECTOR_H

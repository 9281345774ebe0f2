//===- String.h - an owned string without the C++ runtime -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the runtime does with strings (names for messages, paths, formatted
// text), over a NUL-terminated Vector<char>: std::string's members live in
// libstdc++, which the runtime does not link.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_SUPPORT_STRING_H
#define MNEMO_RUNTIME_SUPPORT_STRING_H

#include "support/Vector.h"

#include <algorithm>
#include <cstdarg>
#include <cstring>
#include <string_view>

namespace mnemo::rt {

class String {
public:
  static constexpr size_t npos = static_cast<size_t>(-1);

  String() { chars.push_back('\0'); }
  String(const char *s) : String(std::string_view(s ? s : "")) {}
  String(const char *s, size_t n) : String(std::string_view(s, n)) {}
  explicit String(std::string_view s) {
    chars.reserve(s.size() + 1);
    chars.assign(s.begin(), s.end());
    chars.push_back('\0');
  }

  const char *c_str() const { return chars.data(); }
  const char *data() const { return chars.data(); }
  size_t size() const { return chars.size() - 1; }
  bool empty() const { return size() == 0; }
  char operator[](size_t i) const { return chars[i]; }
  operator std::string_view() const { return {data(), size()}; }

  String &operator+=(std::string_view s) {
    chars.pop_back();
    chars.insert(chars.end(), s.begin(), s.end());
    chars.push_back('\0');
    return *this;
  }
  String &operator+=(const char *s) { return *this += std::string_view(s); }
  String &operator+=(const String &s) { return *this += std::string_view(s); }
  String &operator+=(char c) { return *this += std::string_view(&c, 1); }

  friend String operator+(String a, std::string_view b) { return a += b; }
  friend String operator+(String a, const char *b) { return a += b; }
  friend String operator+(String a, const String &b) { return a += b; }

  size_t find(char c, size_t from = 0) const {
    return std::string_view(*this).find(c, from);
  }
  size_t find(std::string_view s, size_t from = 0) const {
    return std::string_view(*this).find(s, from);
  }
  size_t rfind(char c) const { return std::string_view(*this).rfind(c); }
  /// Characters [pos, pos + n), clamped to the string.
  String substr(size_t pos, size_t n = npos) const {
    if (pos > size())
      pos = size();
    return String(std::string_view(data() + pos, std::min(n, size() - pos)));
  }

  friend bool operator==(const String &a, std::string_view b) {
    return std::string_view(a) == b;
  }
  friend bool operator!=(const String &a, std::string_view b) {
    return !(a == b);
  }

private:
  Vector<char> chars;
};

/// printf into a String.
String formatString(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
String formatStringV(const char *format, va_list args);

} // namespace mnemo::rt

#endif // MNEMO_RUNTIME_SUPPORT_STRING_H

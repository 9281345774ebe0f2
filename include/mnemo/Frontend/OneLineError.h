//===- OneLineError.h - importer errors as one line -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An importer's error is one line naming the file and the node, tensor or
// key at fault. Names come from the input, and a model may name a value
// "a\nb": the fuzzers found errors quoting such names that printed as
// several lines. The importers' entry points pass their errors through
// `escapeToOneLine`, which writes control characters as \xHH (bytes of
// UTF-8 text are kept).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_FRONTEND_ONELINEERROR_H
#define MNEMO_FRONTEND_ONELINEERROR_H

#include "llvm/ADT/StringExtras.h"
#include <string>

namespace mlir::mnemo {

inline std::string escapeToOneLine(const std::string &message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;
      continue;
    }
    out += "\\x";
    out += llvm::hexdigit(byte >> 4, /*LowerCase=*/true);
    out += llvm::hexdigit(byte & 15, /*LowerCase=*/true);
  }
  return out;
}

} // namespace mlir::mnemo

#endif // MNEMO_FRONTEND_ONELINEERROR_H

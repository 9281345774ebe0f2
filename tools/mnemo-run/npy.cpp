//===- npy.cpp - reading and writing .npy files -----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

using namespace mnemo;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kAlignment = 64;

struct DescrEntry {
  const char *descr;
  mnemo_dtype_t dtype;
};

constexpr DescrEntry kDescrs[] = {
    {"<f4", MNEMO_DTYPE_F32}, {"<f2", MNEMO_DTYPE_F16},
    {"<f8", MNEMO_DTYPE_F64}, {"<i8", MNEMO_DTYPE_I64},
    {"<i4", MNEMO_DTYPE_I32}, {"|i1", MNEMO_DTYPE_I8},
    {"|u1", MNEMO_DTYPE_U8},  {"|b1", MNEMO_DTYPE_BOOL},
};

/// A cursor over the header's Python dict literal.
struct HeaderParser {
  std::string_view text;
  size_t pos = 0;

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string_view::npos)
      return false;
    out.assign(text.substr(pos, end - pos));
    pos = end + 1;
    return true;
  }
  bool parseWord(std::string &out) {
    skipSpace();
    size_t begin = pos;
    while (pos < text.size() && ((text[pos] >= 'a' && text[pos] <= 'z') ||
                                 (text[pos] >= 'A' && text[pos] <= 'Z')))
      ++pos;
    out.assign(text.substr(begin, pos - begin));
    return !out.empty();
  }
  bool parseInt(int64_t &out) {
    skipSpace();
    size_t begin = pos;
    int64_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text[pos] - '0', &value))
        return false;
      ++pos;
    }
    // A trailing 'L' is Python 2's long suffix.
    if (pos > begin && pos < text.size() && text[pos] == 'L')
      ++pos;
    out = value;
    return pos > begin;
  }
  bool parseShape(std::vector<int64_t> &out) {
    if (!consume('('))
      return false;
    if (consume(')'))
      return true;
    for (;;) {
      int64_t d;
      if (!parseInt(d))
        return false;
      out.push_back(d);
      if (consume(')'))
        return true;
      if (!consume(','))
        return false;
      if (consume(')'))
        return true;
    }
  }
};

bool fail(std::string &error, std::string message) {
  error = std::move(message);
  return false;
}

uint32_t readLE(const uint8_t *p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v |= uint32_t(p[i]) << (8 * i);
  return v;
}

bool parseHeader(std::string_view text, std::string &descr, bool &fortran,
                 std::vector<int64_t> &shape, std::string &error) {
  HeaderParser p{text};
  if (!p.consume('{'))
    return fail(error, "malformed header: expected '{'");
  bool haveDescr = false, haveOrder = false, haveShape = false;
  while (!p.consume('}')) {
    std::string key;
    if (!p.parseString(key) || !p.consume(':'))
      return fail(error, "malformed header: expected a quoted key");
    if (key == "descr") {
      if (!p.parseString(descr))
        return fail(error, "malformed header: 'descr' is not a string "
                           "(structured dtypes are not supported)");
      haveDescr = true;
    } else if (key == "fortran_order") {
      std::string word;
      if (!p.parseWord(word) || (word != "True" && word != "False"))
        return fail(error, "malformed header: 'fortran_order' is not a bool");
      fortran = word == "True";
      haveOrder = true;
    } else if (key == "shape") {
      if (!p.parseShape(shape))
        return fail(error, "malformed header: 'shape' is not a tuple of "
                           "non-negative integers");
      haveShape = true;
    } else {
      return fail(error, "malformed header: unexpected key '" + key + "'");
    }
    if (!p.consume(',')) {
      if (!p.consume('}'))
        return fail(error, "malformed header: expected ',' or '}'");
      break;
    }
  }
  p.skipSpace();
  if (p.pos != text.size())
    return fail(error, "malformed header: text after the dict");
  if (!haveDescr || !haveOrder || !haveShape)
    return fail(error, "malformed header: it needs 'descr', "
                       "'fortran_order' and 'shape'");
  return true;
}

bool dtypeOfDescr(const std::string &descr, mnemo_dtype_t &dtype,
                  std::string &error) {
  std::string d = descr;
  // One-byte types have no byte order; NumPy writes '|', accept '<' too.
  if (d.size() == 3 && d[0] == '<' && d[2] == '1')
    d[0] = '|';
  for (const DescrEntry &e : kDescrs) {
    if (d == e.descr) {
      dtype = e.dtype;
      return true;
    }
  }
  if (!descr.empty() && descr[0] == '>')
    return fail(error, "big-endian data ('" + descr +
                           "') is not supported; save it little-endian");
  return fail(error, "unsupported dtype '" + descr +
                         "' (supported: <f4 <f2 <f8 <i8 <i4 |i1 |u1 |b1)");
}

} // namespace

const char *npy::descrOf(mnemo_dtype_t dtype) {
  for (const DescrEntry &e : kDescrs)
    if (e.dtype == dtype)
      return e.descr;
  return "";
}

bool npy::parse(const uint8_t *file, size_t size, Array &out,
                std::string &error) {
  if (size < kMagicSize + 2 || std::memcmp(file, kMagic, kMagicSize) != 0)
    return fail(error, "not a .npy file (bad magic)");
  unsigned major = file[6], minor = file[7];
  size_t lengthBytes;
  if (major == 1 && minor == 0)
    lengthBytes = 2;
  else if (major == 2 && minor == 0)
    lengthBytes = 4;
  else
    return fail(error, "unsupported .npy format version " +
                           std::to_string(major) + "." + std::to_string(minor) +
                           " (supported: 1.0, 2.0)");
  size_t preamble = kMagicSize + 2 + lengthBytes;
  if (size < preamble)
    return fail(error, "truncated header");
  size_t headerLength = readLE(file + kMagicSize + 2, lengthBytes);
  if (headerLength > size - preamble)
    return fail(error, "truncated header: it claims " +
                           std::to_string(headerLength) + " bytes");
  std::string_view header(reinterpret_cast<const char *>(file) + preamble,
                          headerLength);
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  if (!parseHeader(header, descr, fortran, shape, error))
    return false;
  mnemo_dtype_t dtype;
  if (!dtypeOfDescr(descr, dtype, error))
    return false;
  if (fortran)
    return fail(error, "Fortran-order arrays are not supported; save it in "
                       "C order (numpy.ascontiguousarray)");
  uint64_t bytes = mnemo_dtype_size(dtype);
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      return fail(error, "the shape is too large");
  size_t available = size - preamble - headerLength;
  if (bytes != available)
    return fail(error, (bytes > available ? "truncated data: "
                                          : "size "
                                            "mismatch: ") +
                           std::to_string(available) +
                           " bytes of data, the "
                           "header's shape needs " +
                           std::to_string(bytes));
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void *data = std::aligned_alloc(kAlignment, rounded ? rounded : kAlignment);
  if (!data)
    return fail(error, "out of memory");
  std::memcpy(data, file + preamble + headerLength, bytes);
  out.dtype = dtype;
  out.shape = std::move(shape);
  out.data.reset(static_cast<uint8_t *>(data));
  out.bytes = bytes;
  return true;
}

bool npy::read(const char *path, Array &out, std::string &error) {
  std::FILE *f = std::fopen(path, "rb");
  if (!f)
    return fail(error, std::string("cannot open: ") + std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    bytes.insert(bytes.end(), chunk, chunk + n);
  int readError = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (readError)
    return fail(error, std::string("cannot read: ") + std::strerror(readError));
  return parse(bytes.data(), bytes.size(), out, error);
}

bool npy::serialize(mnemo_dtype_t dtype, const int64_t *shape, size_t rank,
                    const void *data, size_t bytes, std::string &out,
                    std::string &error) {
  const char *descr = descrOf(dtype);
  if (!*descr)
    return fail(error, std::string("dtype ") + mnemo_dtype_name(dtype) +
                           " has no .npy equivalent");
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < rank; ++i) {
    header += std::to_string(shape[i]);
    if (rank == 1 || i + 1 < rank)
      header += rank == 1 ? "," : ", ";
  }
  header += "), }";
  // Pad with spaces and end with '\n' so that the data starts 64-byte
  // aligned, as NumPy does.
  size_t preamble = kMagicSize + 2 + 2;
  bool v2 = preamble + header.size() + 1 > 65535;
  if (v2)
    preamble += 2;
  size_t total = preamble + header.size() + 1;
  header.append((kAlignment - total % kAlignment) % kAlignment, ' ');
  header += '\n';
  out.assign(kMagic, kMagicSize);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  size_t length = header.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i)
    out += static_cast<char>((length >> (8 * i)) & 0xff);
  out += header;
  if (bytes > 0)
    out.append(static_cast<const char *>(data), bytes);
  return true;
}

bool npy::write(const char *path, mnemo_dtype_t dtype, const int64_t *shape,
                size_t rank, const void *data, size_t bytes,
                std::string &error) {
  std::string contents;
  if (!serialize(dtype, shape, rank, data, bytes, contents, error))
    return false;
  std::FILE *f = std::fopen(path, "wb");
  if (!f)
    return fail(error, std::string("cannot create: ") + std::strerror(errno));
  bool ok =
      std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  ok &= std::fclose(f) == 0;
  if (!ok)
    return fail(error, "write error");
  return true;
}

void npy::narrowStandIn(Array &a, mnemo_dtype_t want) {
  if (want != MNEMO_DTYPE_BF16 || a.dtype != MNEMO_DTYPE_F32)
    return;
  // In place: element k moves from byte 4k to byte 2k; nearest even, NaN
  // kept a NaN.
  size_t n = a.bytes / 4;
  uint8_t *bytes = a.data.get();
  for (size_t k = 0; k < n; ++k) {
    uint32_t u;
    std::memcpy(&u, bytes + 4 * k, 4);
    uint16_t h = (u & 0x7fffffffu) > 0x7f800000u
                     ? uint16_t(0x7fc0)
                     : uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    std::memcpy(bytes + 2 * k, &h, 2);
  }
  a.dtype = MNEMO_DTYPE_BF16;
  a.bytes = n * 2;
}

bool npy::writeWidened(const char *path, mnemo_dtype_t dtype,
                       const int64_t *shape, size_t rank, const void *data,
                       size_t bytes, std::string &error) {
  if (dtype != MNEMO_DTYPE_BF16)
    return write(path, dtype, shape, rank, data, bytes, error);
  size_t n = bytes / 2;
  std::vector<uint32_t> widened(n);
  for (size_t k = 0; k < n; ++k) {
    uint16_t h;
    std::memcpy(&h, static_cast<const uint8_t *>(data) + 2 * k, 2);
    widened[k] = uint32_t(h) << 16;
  }
  return write(path, MNEMO_DTYPE_F32, shape, rank, widened.data(), n * 4,
               error);
}

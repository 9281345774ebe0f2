//===- NpyTest.cpp - mnemo-run's .npy reader and writer ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "npy.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace mnemo;

namespace {

bool parseString(const std::string &file, npy::Array &out, std::string &error) {
  return npy::parse(reinterpret_cast<const uint8_t *>(file.data()), file.size(),
                    out, error);
}

/// A version 1.0 file with `header` (padded like NumPy) and `data`.
std::string makeFile(const std::string &dict, const std::string &data,
                     int major = 1) {
  std::string header = dict;
  size_t preamble = major == 1 ? 10 : 12;
  header.append((64 - (preamble + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string file = std::string("\x93NUMPY", 6);
  file += static_cast<char>(major);
  file += '\0';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    file += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return file + header + data;
}

std::string parseError(const std::string &file) {
  npy::Array a;
  std::string error;
  EXPECT_FALSE(parseString(file, a, error));
  return error;
}

TEST(Npy, MatchesNumPyBytes) {
  // np.save(np.arange(6, dtype=np.float32).reshape(2, 3)), NumPy 1.24.
  float values[] = {0, 1, 2, 3, 4, 5};
  int64_t shape[] = {2, 3};
  std::string out, error;
  ASSERT_TRUE(npy::serialize(MNEMO_DTYPE_F32, shape, 2, values, sizeof(values),
                             out, error));
  std::string expected = std::string("\x93NUMPY\x01\x00v\x00", 10) +
                         "{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (2, 3), }";
  expected.resize(6 + 2 + 2 + 0x76 - 1, ' ');
  expected += '\n';
  expected.append(reinterpret_cast<const char *>(values), sizeof(values));
  EXPECT_EQ(out, expected);
}

TEST(Npy, RoundTripEveryDtype) {
  const mnemo_dtype_t dtypes[] = {
      MNEMO_DTYPE_F32, MNEMO_DTYPE_F16, MNEMO_DTYPE_F64, MNEMO_DTYPE_I64,
      MNEMO_DTYPE_I32, MNEMO_DTYPE_I8,  MNEMO_DTYPE_U8,  MNEMO_DTYPE_BOOL};
  const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3}, {1, 0, 4}};
  for (mnemo_dtype_t dtype : dtypes) {
    for (const auto &shape : shapes) {
      size_t count = 1;
      for (int64_t d : shape)
        count *= d;
      std::vector<uint8_t> data(count * mnemo_dtype_size(dtype));
      for (size_t i = 0; i < data.size(); ++i)
        data[i] = dtype == MNEMO_DTYPE_BOOL ? i % 2 : static_cast<uint8_t>(i);
      std::string file, error;
      ASSERT_TRUE(npy::serialize(dtype, shape.data(), shape.size(), data.data(),
                                 data.size(), file, error));
      EXPECT_EQ(file.size() % 64, data.size() % 64);
      npy::Array a;
      ASSERT_TRUE(parseString(file, a, error)) << error;
      EXPECT_EQ(a.dtype, dtype);
      EXPECT_EQ(a.shape, shape);
      ASSERT_EQ(a.bytes, data.size());
      EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data.get()) % 64, 0u);
      if (!data.empty())
        EXPECT_EQ(std::memcmp(a.data.get(), data.data(), data.size()), 0);
    }
  }
}

TEST(Npy, Version2AndVariants) {
  npy::Array a;
  std::string error;
  std::string data(8, '\x01');
  ASSERT_TRUE(parseString(
      makeFile("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
               data, 2),
      a, error))
      << error;
  EXPECT_EQ(a.dtype, MNEMO_DTYPE_I32);
  EXPECT_EQ(a.shape, std::vector<int64_t>{2});
  // Key order, double quotes, no trailing comma, '<' on a one-byte type.
  ASSERT_TRUE(parseString(
      makeFile("{\"shape\": (3,1), \"fortran_order\": False, \"descr\": "
               "\"<u1\"}",
               std::string(3, 'x')),
      a, error))
      << error;
  EXPECT_EQ(a.dtype, MNEMO_DTYPE_U8);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 1}));
}

TEST(Npy, Errors) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, ";
  EXPECT_EQ(parseError("hello"), "not a .npy file (bad magic)");
  EXPECT_EQ(parseError(""), "not a .npy file (bad magic)");
  std::string v3 = makeFile(f4 + "'shape': (1,), }", std::string(4, '\0'));
  v3[6] = 3;
  EXPECT_NE(parseError(v3).find("unsupported .npy format version 3.0"),
            std::string::npos);
  EXPECT_NE(
      parseError(makeFile("{'descr': '<f4', 'fortran_order': True, 'shape': "
                          "(2, 2), }",
                          std::string(16, '\0')))
          .find("Fortran-order"),
      std::string::npos);
  EXPECT_NE(
      parseError(makeFile("{'descr': '>f4', 'fortran_order': False, 'shape': "
                          "(1,), }",
                          std::string(4, '\0')))
          .find("big-endian data ('>f4') is not supported"),
      std::string::npos);
  EXPECT_NE(
      parseError(makeFile("{'descr': '<c8', 'fortran_order': False, 'shape': "
                          "(1,), }",
                          std::string(8, '\0')))
          .find("unsupported dtype '<c8'"),
      std::string::npos);
  EXPECT_NE(
      parseError(makeFile(f4 + "'shape': (2, 3), }", std::string(20, '\0')))
          .find("truncated data: 20 bytes of data, the header's shape "
                "needs 24"),
      std::string::npos);
  EXPECT_NE(parseError(makeFile(f4 + "'shape': (1,), }", std::string(8, '\0')))
                .find("size mismatch"),
            std::string::npos);
  EXPECT_NE(parseError(makeFile(f4 + "'shape': (-1,), }", ""))
                .find("'shape' is not a tuple"),
            std::string::npos);
  EXPECT_NE(parseError(makeFile("{'descr': '<f4', 'shape': (1,), }",
                                std::string(4, '\0')))
                .find("needs 'descr', 'fortran_order' and 'shape'"),
            std::string::npos);
  EXPECT_NE(parseError(makeFile("[1, 2]", "")).find("malformed header"),
            std::string::npos);
  EXPECT_NE(parseError(makeFile(f4 + "'shape': (1,), }", "").substr(0, 20))
                .find("truncated header"),
            std::string::npos);
  EXPECT_NE(parseError(makeFile(f4 + "'shape': (99999999999, 99999999999, "
                                     "99999999999), }",
                                ""))
                .find("too large"),
            std::string::npos);
}

TEST(Npy, Bf16HasNoDescr) {
  int64_t shape[] = {1};
  uint16_t v = 0;
  std::string out, error;
  EXPECT_FALSE(npy::serialize(MNEMO_DTYPE_BF16, shape, 1, &v, 2, out, error));
  EXPECT_EQ(error, "dtype bf16 has no .npy equivalent");
}

} // namespace

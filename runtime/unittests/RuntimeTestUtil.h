//===- RuntimeTestUtil.h - C API helpers for the unit tests -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_RUNTIME_UNITTESTS_RUNTIMETESTUTIL_H
#define MNEMO_RUNTIME_UNITTESTS_RUNTIMETESTUTIL_H

#include "mnemo/runtime.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace mnemo::test {

/// Owns a status; gives its code and message.
class Status {
public:
  Status(mnemo_status_t s = nullptr) : s(s) {}
  Status(Status &&other) : s(other.s) { other.s = nullptr; }
  Status(const Status &) = delete;
  Status &operator=(const Status &) = delete;
  ~Status() { mnemo_status_free(s); }
  bool ok() const { return !s; }
  mnemo_status_code_t code() const { return mnemo_status_code(s); }
  std::string message() const { return mnemo_status_message(s); }

private:
  mnemo_status_t s;
};

/// Loads `bytes` from memory; the bytes must outlive the model.
inline Status loadMemory(const std::string &bytes, mnemo_model_t **model) {
  return Status(mnemo_model_load_memory(bytes.data(), bytes.size(), model));
}

inline std::vector<float> floats(const mnemo_tensor_t &t) {
  const auto *p = static_cast<const float *>(t.data);
  return std::vector<float>(p, p + t.size_bytes / sizeof(float));
}

inline std::vector<int64_t> shapeOf(const mnemo_tensor_t &t) {
  return std::vector<int64_t>(t.shape, t.shape + t.rank);
}

} // namespace mnemo::test

#define ASSERT_MNEMO_OK(expr)                                                  \
  do {                                                                         \
    ::mnemo::test::Status status_(expr);                                       \
    ASSERT_TRUE(status_.ok()) << status_.message();                            \
  } while (false)

#define EXPECT_MNEMO_ERROR(expr, expectedCode, fragment)                       \
  do {                                                                         \
    ::mnemo::test::Status status_(expr);                                       \
    EXPECT_EQ(status_.code(), expectedCode) << status_.message();              \
    EXPECT_NE(status_.message().find(fragment), std::string::npos)             \
        << status_.message();                                                  \
  } while (false)

#endif // MNEMO_RUNTIME_UNITTESTS_RUNTIMETESTUTIL_H

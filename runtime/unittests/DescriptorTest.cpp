//===- DescriptorTest.cpp - descriptors, strided copies, CRC ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "descriptor.h"
#include "crc32.h"

#include "gtest/gtest.h"

#include <vector>

using namespace mnemo::rt;

namespace {

TEST(Descriptor, FillIsRowMajor) {
  float data[24];
  int64_t shape[] = {2, 3, 4};
  std::vector<int64_t> d(descriptorWords(3));
  fillDescriptor(d.data(), 3, data, shape);
  EXPECT_EQ(descriptorAllocated(d.data()), data);
  EXPECT_EQ(descriptorAligned(d.data()), data);
  EXPECT_EQ(descriptorOffset(d.data()), 0);
  EXPECT_EQ(std::vector<int64_t>(descriptorSizes(d.data()),
                                 descriptorSizes(d.data()) + 3),
            (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(std::vector<int64_t>(descriptorStrides(d.data(), 3),
                                 descriptorStrides(d.data(), 3) + 3),
            (std::vector<int64_t>{12, 4, 1}));
}

TEST(Descriptor, Contiguity) {
  int64_t sizes[] = {2, 3};
  int64_t rowMajor[] = {3, 1}, transposed[] = {1, 2}, padded[] = {4, 1};
  EXPECT_TRUE(isContiguous(sizes, rowMajor, 2));
  EXPECT_FALSE(isContiguous(sizes, transposed, 2));
  EXPECT_FALSE(isContiguous(sizes, padded, 2));
  // Unit dims may have any stride; empty tensors are trivially dense.
  int64_t unit[] = {1, 3}, unitStrides[] = {99, 1};
  EXPECT_TRUE(isContiguous(unit, unitStrides, 2));
  int64_t empty[] = {0, 3};
  EXPECT_TRUE(isContiguous(empty, transposed, 2));
  EXPECT_TRUE(isContiguous(nullptr, nullptr, 0));
}

TEST(Descriptor, CopyTransposed) {
  // a is 2x3 row-major; its transpose 3x2 has strides {1, 3}.
  float a[] = {0, 1, 2, 3, 4, 5};
  int64_t sizes[] = {3, 2}, strides[] = {1, 3};
  float out[6] = {};
  copyStrided(reinterpret_cast<const uint8_t *>(a), sizes, strides, 2,
              sizeof(float), reinterpret_cast<uint8_t *>(out));
  EXPECT_EQ(std::vector<float>(out, out + 6),
            (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(Descriptor, CopyRank3WithNegativeStride) {
  // Reverse the last dim of a 2x2x3 tensor.
  std::vector<int32_t> a(12);
  for (int i = 0; i < 12; ++i)
    a[i] = i;
  int64_t sizes[] = {2, 2, 3}, strides[] = {6, 3, -1};
  std::vector<int32_t> out(12);
  copyStrided(reinterpret_cast<const uint8_t *>(a.data() + 2), sizes, strides,
              3, sizeof(int32_t), reinterpret_cast<uint8_t *>(out.data()));
  EXPECT_EQ(out, (std::vector<int32_t>{2, 1, 0, 5, 4, 3, 8, 7, 6, 11, 10, 9}));
}

TEST(Descriptor, CopyScalarAndEmpty) {
  double x = 2.5, y = 0;
  copyStrided(reinterpret_cast<const uint8_t *>(&x), nullptr, nullptr, 0,
              sizeof(double), reinterpret_cast<uint8_t *>(&y));
  EXPECT_EQ(y, 2.5);
  int64_t sizes[] = {0, 4}, strides[] = {4, 1};
  copyStrided(nullptr, sizes, strides, 2, 4, nullptr); // copies nothing
}

TEST(Crc32, KnownValues) {
  const auto *digits = reinterpret_cast<const uint8_t *>("123456789");
  EXPECT_EQ(crc32(0, digits, 9), 0xcbf43926u);
  EXPECT_EQ(crc32(crc32(0, digits, 4), digits + 4, 5), 0xcbf43926u);
  EXPECT_EQ(crc32(0, digits, 0), 0u);
}

} // namespace

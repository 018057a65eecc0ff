#include "runner/engine/host/cpu_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/datagen.h"

namespace vmm::host {
namespace {

std::vector<float> Filled(uint64_t count, uint64_t seed) {
  std::vector<float> v(count);
  for (uint64_t i = 0; i < count; ++i) v[i] = datagen::FillValue(seed, i);
  return v;
}

// The matmul contract written as plainly as possible.
std::vector<float> NaiveMatmul(const std::vector<float>& a, const std::vector<float>& b, uint32_t m,
                               uint32_t n, uint32_t k) {
  std::vector<float> c(static_cast<size_t>(m) * n);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (uint32_t p = 0; p < k; ++p) acc = std::fmaf(a[i * k + p], b[p * n + j], acc);
      c[i * n + j] = acc;
    }
  }
  return c;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(CpuKernels, FillMatchesFillValueAndStopsAtCount) {
  std::vector<float> buf(1001, 123.0f);
  FillF32(buf.data(), 1000, 42);
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(Bits(buf[i]), Bits(datagen::FillValue(42, i))) << i;
  EXPECT_EQ(buf[1000], 123.0f);
}

TEST(CpuKernels, MatmulIsBitIdenticalToTheNaiveFmaLoop) {
  struct Dims {
    uint32_t m, n, k;
  };
  for (Dims d : {Dims{37, 53, 29}, Dims{1, 1, 1}, Dims{5, 3, 300}, Dims{64, 64, 64}}) {
    std::vector<float> a = Filled(uint64_t{d.m} * d.k, 1), b = Filled(uint64_t{d.k} * d.n, 2);
    std::vector<float> c(uint64_t{d.m} * d.n, -1.0f);
    MatmulF32(a.data(), b.data(), c.data(), d.m, d.n, d.k);
    std::vector<float> want = NaiveMatmul(a, b, d.m, d.n, d.k);
    for (size_t i = 0; i < c.size(); ++i) {
      ASSERT_EQ(Bits(c[i]), Bits(want[i]))
          << "element " << i << " of " << d.m << "x" << d.n << "x" << d.k;
    }
  }
}

TEST(CpuKernels, MatmulIsCloseToAnFp64Reference) {
  const uint32_t m = 37, n = 53, k = 29;
  std::vector<float> a = Filled(m * k, 5), b = Filled(k * n, 6), c(m * n);
  MatmulF32(a.data(), b.data(), c.data(), m, n, k);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      double ref = 0, magnitude = 0;
      for (uint32_t p = 0; p < k; ++p) {
        ref += double{a[i * k + p]} * b[p * n + j];
        magnitude += std::fabs(double{a[i * k + p]} * b[p * n + j]);
      }
      // Each fmaf rounds once: |error| <= k * 2^-24 * sum |a*b|.
      ASSERT_LE(std::fabs(c[i * n + j] - ref), k * 0x1p-24 * magnitude) << i << "," << j;
    }
  }
}

TEST(CpuKernels, MatmulWithEmptyInnerDimensionWritesZeros) {
  std::vector<float> c(6, 7.0f);
  MatmulF32(nullptr, nullptr, c.data(), 2, 3, 0);
  for (float x : c) EXPECT_EQ(Bits(x), 0u);  // +0.0f exactly
}

TEST(CpuKernels, ChecksumIsTheOrderIndependentSumOfHashWords) {
  std::vector<uint32_t> words = {1, 0x3f800000, 0xdeadbeef, 0, 7};
  uint64_t backwards = 0;
  for (size_t i = words.size(); i-- > 0;) backwards += datagen::HashWord(words[i], i);
  EXPECT_EQ(ChecksumWords(words.data(), words.size()), backwards);
  // The hash is position-sensitive: swapping two different words changes it.
  std::vector<uint32_t> swapped = {0x3f800000, 1, 0xdeadbeef, 0, 7};
  EXPECT_NE(ChecksumWords(swapped.data(), swapped.size()), backwards);
  EXPECT_EQ(ChecksumWords(words.data(), 0), 0u);
}

}  // namespace
}  // namespace vmm::host

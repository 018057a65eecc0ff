#include "runner/engine/matmul_verify.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/datagen.h"

namespace vmm {
namespace {

struct Problem {
  uint32_t m, n, k;
  std::vector<float> a, b, c;
};

// C computed exactly as the engine contract says (fmaf in p order).
Problem MakeProblem(uint32_t m, uint32_t n, uint32_t k) {
  Problem p{m, n, k, {}, {}, {}};
  p.a.resize(static_cast<size_t>(m) * k);
  p.b.resize(static_cast<size_t>(k) * n);
  p.c.resize(static_cast<size_t>(m) * n);
  for (size_t i = 0; i < p.a.size(); ++i) p.a[i] = datagen::FillValue(1, i);
  for (size_t i = 0; i < p.b.size(); ++i) p.b[i] = datagen::FillValue(2, i);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (uint32_t q = 0; q < k; ++q) acc = std::fmaf(p.a[i * k + q], p.b[q * n + j], acc);
      p.c[i * n + j] = acc;
    }
  return p;
}

MatmulCheckResult Verify(const Problem& p, uint64_t limit = kFullReferenceLimit) {
  return VerifyMatmul(p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k, 4, limit);
}

TEST(VerifyMatmul, CorrectProductPassesEveryElement) {
  Problem p = MakeProblem(37, 53, 29);
  MatmulCheckResult v = Verify(p);
  EXPECT_FALSE(v.freivalds);
  EXPECT_STREQ(v.method(), "fp64 reference");
  EXPECT_EQ(v.elements, 37u * 53u);
  EXPECT_EQ(v.mismatches, 0u);
  EXPECT_LE(v.max_error_ratio, 1.0);
  EXPECT_GT(v.max_error_ratio, 0.0);  // fp32 rounding is visible against fp64
}

TEST(VerifyMatmul, ReportsPerturbedElementsWithIndexWantGot) {
  Problem p = MakeProblem(16, 16, 16);
  p.c[5] += 0.01f;
  p.c[200] = -p.c[200] + 1.0f;
  MatmulCheckResult v = Verify(p);
  EXPECT_EQ(v.mismatches, 2u);
  ASSERT_EQ(v.first.size(), 2u);
  EXPECT_EQ(v.first[0].index, 5u);
  EXPECT_EQ(v.first[1].index, 200u);
  EXPECT_NE(v.first[0].want, static_cast<double>(v.first[0].got));
  EXPECT_EQ(v.first[0].got, p.c[5]);
}

TEST(VerifyMatmul, NanIsAMismatch) {
  Problem p = MakeProblem(8, 8, 8);
  p.c[9] = NAN;
  EXPECT_EQ(Verify(p).mismatches, 1u);
}

TEST(VerifyMatmul, OneUlpOffIsWithinTheBound) {
  Problem p = MakeProblem(32, 32, 64);
  p.c[3] = std::nextafter(p.c[3], 10.0f);
  EXPECT_EQ(Verify(p).mismatches, 0u);
}

TEST(VerifyMatmul, FreivaldsPassesCorrectAndCatchesWrongRows) {
  Problem p = MakeProblem(64, 48, 40);
  MatmulCheckResult ok = Verify(p, 0);
  EXPECT_STREQ(ok.method(), "freivalds");
  EXPECT_EQ(ok.rows_recomputed, 0u);
  EXPECT_EQ(ok.mismatches, 0u);
  p.c[10 * 48 + 7] += 0.5f;
  MatmulCheckResult bad = Verify(p, 0);
  EXPECT_EQ(bad.mismatches, 1u);
  ASSERT_EQ(bad.first.size(), 1u);
  EXPECT_EQ(bad.first[0].index, 10u * 48u + 7u);
  EXPECT_EQ(bad.rows_recomputed, 1u);
  EXPECT_EQ(bad.first[0].got, p.c[10 * 48 + 7]);
}

}  // namespace
}  // namespace vmm

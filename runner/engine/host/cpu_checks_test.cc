#include "runner/engine/host/cpu_checks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/datagen.h"
#include "runner/engine/host/cpu_kernels.h"

namespace vmm::host {
namespace {

std::vector<uint32_t> Words(const std::vector<float>& v) {
  std::vector<uint32_t> w(v.size());
  std::memcpy(w.data(), v.data(), v.size() * 4);
  return w;
}

TEST(CpuChecks, CompareIsBitwiseWithWantAndGotAndCapsTheReport) {
  const float nan = std::nanf("");
  const std::vector<uint32_t> a = Words({0.0f, 1.0f, nan, 2.0f, 3.0f, 4.0f});
  const std::vector<uint32_t> b = Words({-0.0f, 1.0f, nan, 2.5f, 3.0f, 4.5f});
  CompareOptions options;
  options.max_report = 2;
  DataCompareResult r = CompareWordsRef(a.data(), b.data(), a.size(), options);
  EXPECT_EQ(r.mismatches, 3u);  // +0 vs -0 differ in bits; identical NaNs are equal
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0], (WordMismatch{0, b[0], a[0]}));
  EXPECT_EQ(r.first[1], (WordMismatch{3, b[3], a[3]}));
  EXPECT_EQ(r.hash, ChecksumWords(a.data(), a.size()));
  EXPECT_EQ(r.other_hash, ChecksumWords(b.data(), b.size()));
  EXPECT_EQ(CompareWordsRef(a.data(), a.data(), a.size(), options).mismatches, 0u);
  options.max_report = 1000;  // capped at kMaxCompareReport
  std::vector<uint32_t> zeros(200, 0), ones(200, 1);
  EXPECT_EQ(CompareWordsRef(zeros.data(), ones.data(), 200, options).first.size(),
            kMaxCompareReport);
}

TEST(CpuChecks, AKnownOtherHashIsTakenAsGiven) {
  const std::vector<uint32_t> a = {1, 2, 3}, b = {1, 5, 3};
  CompareOptions options;
  options.other_hash_known = true;
  options.other_hash = 0x1234;
  DataCompareResult r = CompareWordsRef(a.data(), b.data(), 3, options);
  EXPECT_EQ(r.other_hash, 0x1234u);
  EXPECT_EQ(r.hash, ChecksumWords(a.data(), 3));
}

TEST(CpuChecks, ValueCheckNamesEveryDifferentWord) {
  std::vector<uint32_t> a(1000, 0xA5A5A5A5u);
  a[17] = 0xA5A5A5A4u;
  a[999] = 0;
  DataCompareResult r = CompareValueRef(a.data(), 0xA5A5A5A5u, a.size(), 8);
  EXPECT_EQ(r.mismatches, 2u);
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0], (WordMismatch{17, 0xA5A5A5A5u, 0xA5A5A5A4u}));
  EXPECT_EQ(r.first[1], (WordMismatch{999, 0xA5A5A5A5u, 0u}));
  EXPECT_EQ(r.hash, ChecksumWords(a.data(), a.size()));
  EXPECT_EQ(r.other_hash, 0u);
  EXPECT_EQ(CompareValueRef(a.data(), 0xA5A5A5A5u, 17, 8).mismatches, 0u);
}

// The corruption the device kernels are tested with (runner/engine/cuda/cuda_data_test.cc), at
// 2^28 words (1 GiB per side): one flipped bit is found and named, and the checked buffer's hash
// equals the reference's plus the mismatches' hash differences (what the device derives).
TEST(CpuChecks, OneFlippedBitAmong2To28WordsIsFoundAndNamed) {
  const uint64_t count = 1ull << 28;
  std::vector<uint32_t> reference(count);
  for (uint64_t i = 0; i < count; ++i) reference[i] = static_cast<uint32_t>(i * 2654435761u);
  std::vector<uint32_t> checked = reference;
  const uint64_t at = count - 4097;  // inside the last full 4096-word chunk
  checked[at] ^= 1u << 13;
  CompareOptions options;
  const DataCompareResult r = CompareWordsRef(checked.data(), reference.data(), count, options);
  EXPECT_EQ(r.mismatches, 1u);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0], (WordMismatch{at, reference[at], reference[at] ^ (1u << 13)}));
  EXPECT_EQ(
      r.other_hash + datagen::HashWord(checked[at], at) - datagen::HashWord(reference[at], at),
      r.hash);
  EXPECT_NE(r.hash, r.other_hash);
}

}  // namespace
}  // namespace vmm::host

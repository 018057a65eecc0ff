#include "runner/base/small_vector.h"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

namespace vmm {
namespace {

// Strings longer than any small-string buffer, so a lost or doubled element shows as a leak or a
// double free under a sanitizer, and as a wrong value here.
std::string Long(int i) { return std::string(40, 'x') + std::to_string(i); }

std::vector<std::string> Items(const SmallVector<std::string, 2>& v) {
  return std::vector<std::string>(v.begin(), v.end());
}

TEST(SmallVectorTest, KeepsElementsInlineUntilItOutgrowsThem) {
  SmallVector<std::string, 2> v;
  EXPECT_TRUE(v.empty());
  v.push_back(Long(0));
  v.emplace_back(Long(1));
  EXPECT_EQ(v.capacity(), 2u);
  const std::string* inline_data = v.data();
  v.emplace_back(Long(2));  // the third moves all three to the heap
  EXPECT_NE(v.data(), inline_data);
  EXPECT_GE(v.capacity(), 3u);
  EXPECT_EQ(Items(v), (std::vector<std::string>{Long(0), Long(1), Long(2)}));
  for (int i = 3; i < 40; ++i) v.push_back(Long(i));
  ASSERT_EQ(v.size(), 40u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(v[i], Long(i));
  EXPECT_EQ(v.front(), Long(0));
  EXPECT_EQ(v.back(), Long(39));
}

TEST(SmallVectorTest, AnElementOfItselfCanBeAppendedWhileItGrows) {
  SmallVector<std::string, 2> v{Long(0), Long(1)};
  v.push_back(v[0]);  // full: the copy is taken before the elements move
  EXPECT_EQ(Items(v), (std::vector<std::string>{Long(0), Long(1), Long(0)}));
}

TEST(SmallVectorTest, CopiesAreDeepAndMovesLeaveTheSourceEmpty) {
  for (int n : {1, 2, 5}) {  // inline, full, on the heap
    SmallVector<std::string, 2> a;
    for (int i = 0; i < n; ++i) a.push_back(Long(i));
    SmallVector<std::string, 2> copy = a;
    copy[0] = "changed";
    EXPECT_EQ(a[0], Long(0)) << n;
    SmallVector<std::string, 2> moved = std::move(a);
    EXPECT_TRUE(a.empty()) << n;  // NOLINT(bugprone-use-after-move): the contract says empty
    ASSERT_EQ(moved.size(), static_cast<size_t>(n));
    EXPECT_EQ(moved[n - 1], Long(n - 1));
    SmallVector<std::string, 2> assigned{Long(7), Long(8), Long(9)};
    assigned = std::move(moved);
    ASSERT_EQ(assigned.size(), static_cast<size_t>(n));
    EXPECT_EQ(assigned[0], Long(0));
    assigned = copy;
    EXPECT_EQ(assigned, copy);
    assigned = assigned;  // NOLINT: self-assignment keeps the elements
    EXPECT_EQ(assigned, copy);
  }
}

TEST(SmallVectorTest, EraseShiftsTheRestAndComparisonSeesOrder) {
  SmallVector<std::string, 2> v{Long(0), Long(1), Long(2), Long(3)};
  const std::string* next = v.erase(v.begin());
  EXPECT_EQ(*next, Long(1));
  v.erase(v.begin() + 1, v.end());
  EXPECT_EQ(Items(v), std::vector<std::string>{Long(1)});
  SmallVector<std::string, 2> w{Long(1)};
  EXPECT_EQ(v, w);
  w.push_back(Long(2));
  EXPECT_FALSE(v == w);
  v.clear();
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.erase(v.begin(), v.end()), v.end());
}

TEST(SmallVectorTest, IsAContiguousRangeForSpan) {
  SmallVector<int, 3> v{1, 2, 3, 4};
  std::span<const int> s = v;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[3], 4);
  v.reserve(100);
  EXPECT_GE(v.capacity(), 100u);
  EXPECT_EQ(v[2], 3);
}

}  // namespace
}  // namespace vmm

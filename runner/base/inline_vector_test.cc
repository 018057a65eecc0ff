#include "runner/base/inline_vector.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace vmm {
namespace {

// Counts live instances, so a leaked or twice-destroyed element shows; copies can be told to throw.
struct Tracked {
  static inline int live = 0;
  static inline int copies_before_throw = -1;  // < 0: never throw

  std::string text;  // long enough to live on the heap: a leak shows under the sanitizers too
  explicit Tracked(std::string t) : text(std::move(t)) { ++live; }
  Tracked(const Tracked& other) : text(other.text) {
    if (copies_before_throw == 0) throw std::runtime_error("copy failed");
    if (copies_before_throw > 0) --copies_before_throw;
    ++live;
  }
  Tracked(Tracked&& other) noexcept : text(std::move(other.text)) { ++live; }
  Tracked& operator=(const Tracked&) = default;
  Tracked& operator=(Tracked&&) noexcept = default;
  ~Tracked() { --live; }
  bool operator==(const Tracked& other) const { return text == other.text; }
};

std::string Long(int i) { return "element number " + std::to_string(i) + " of the test vector"; }

class InlineVectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Tracked::live = 0;
    Tracked::copies_before_throw = -1;
  }
  void TearDown() override { EXPECT_EQ(Tracked::live, 0) << "an element leaked or died twice"; }
};

using Small = InlineVector<Tracked, 2>;

std::vector<std::string> Texts(const Small& v) {
  std::vector<std::string> out;
  for (const Tracked& t : v) out.push_back(t.text);
  return out;
}

TEST_F(InlineVectorTest, HoldsTheFirstElementsInsideAndSpillsToTheHeap) {
  Small v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), 2u);
  const Tracked* const inside = v.data();
  v.emplace_back(Long(0));
  v.push_back(Tracked(Long(1)));
  EXPECT_EQ(v.data(), inside) << "two elements fit inside";
  v.emplace_back(Long(2));
  EXPECT_NE(v.data(), inside) << "the third moved them all to the heap";
  EXPECT_GE(v.capacity(), 3u);
  EXPECT_EQ(Texts(v), (std::vector<std::string>{Long(0), Long(1), Long(2)}));
  EXPECT_EQ(Tracked::live, 3);
  EXPECT_EQ(v.front().text, Long(0));
  EXPECT_EQ(v.back().text, Long(2));
  v.pop_back();
  EXPECT_EQ(Tracked::live, 2);
  v.clear();
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(Tracked::live, 0);
  v.emplace_back(Long(7));  // reusable after clear, on the heap block it kept
  EXPECT_EQ(Texts(v), std::vector<std::string>{Long(7)});
}

TEST_F(InlineVectorTest, GrowthMayTakeAnElementOfItself) {
  Small v{Tracked(Long(0)), Tracked(Long(1))};
  v.push_back(v[0]);  // full: the copy is made before the old elements move
  v.push_back(v[2]);
  EXPECT_EQ(Texts(v), (std::vector<std::string>{Long(0), Long(1), Long(0), Long(0)}));
}

TEST_F(InlineVectorTest, CopiesAreDeepInsideAndOnTheHeap) {
  for (int n : {0, 1, 2, 5}) {
    Small a;
    for (int i = 0; i < n; ++i) a.emplace_back(Long(i));
    Small b = a;
    EXPECT_EQ(Texts(b), Texts(a)) << n;
    EXPECT_TRUE(a == b);
    if (n > 0) {
      b[0].text = "changed";
      EXPECT_EQ(a[0].text, Long(0)) << n;
      EXPECT_FALSE(a == b);
    }
    Small c{Tracked("x"), Tracked("y"), Tracked("z")};
    c = a;
    EXPECT_EQ(Texts(c), Texts(a)) << n;
    c = c;  // NOLINT: self-assignment keeps the elements
    EXPECT_EQ(Texts(c), Texts(a)) << n;
  }
}

TEST_F(InlineVectorTest, MovesTransferAndLeaveTheSourceEmptyAndUsable) {
  for (int n : {0, 1, 2, 5}) {
    Small a;
    for (int i = 0; i < n; ++i) a.emplace_back(Long(i));
    const std::vector<std::string> want = Texts(a);
    Small b = std::move(a);
    EXPECT_EQ(Texts(b), want) << n;
    EXPECT_TRUE(a.empty()) << n;  // NOLINT(bugprone-use-after-move): the contract says so
    a.emplace_back("again");
    EXPECT_EQ(a.size(), 1u);
    Small c{Tracked("x")};
    c = std::move(b);
    EXPECT_EQ(Texts(c), want) << n;
    EXPECT_TRUE(b.empty()) << n;  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(Tracked::live, n + 1) << n;
  }
}

TEST_F(InlineVectorTest, AFailedCopyLeavesTheTargetAsItWas) {
  Small source;
  for (int i = 0; i < 4; ++i) source.emplace_back(Long(i));
  Small target{Tracked("kept")};
  Tracked::copies_before_throw = 2;  // the third copy throws
  EXPECT_THROW(target = source, std::runtime_error);
  EXPECT_EQ(Texts(target), std::vector<std::string>{"kept"});
  Tracked::copies_before_throw = 1;
  EXPECT_THROW(Small copy(source), std::runtime_error);
  Tracked::copies_before_throw = -1;
  Small full{Tracked("a"), Tracked("b")};
  Tracked::copies_before_throw = 0;  // a full vector's growth: the element cannot be built
  EXPECT_THROW(full.push_back(source[0]), std::runtime_error);
  EXPECT_EQ(Texts(full), (std::vector<std::string>{"a", "b"}));
  Tracked::copies_before_throw = -1;
  EXPECT_EQ(Tracked::live, 4 + 1 + 2);
}

TEST_F(InlineVectorTest, EraseKeepsTheOrderOfTheRest) {
  Small v;
  for (int i = 0; i < 5; ++i) v.emplace_back(Long(i));
  auto next = v.erase(v.begin() + 1, v.begin() + 3);
  EXPECT_EQ(next->text, Long(3));
  EXPECT_EQ(Texts(v), (std::vector<std::string>{Long(0), Long(3), Long(4)}));
  v.erase(v.begin());
  EXPECT_EQ(Texts(v), (std::vector<std::string>{Long(3), Long(4)}));
  v.erase(v.begin(), v.end());
  EXPECT_TRUE(v.empty());
}

TEST_F(InlineVectorTest, ReserveMovesOnceAndKeepsTheElements) {
  Small v{Tracked(Long(0))};
  v.reserve(1);  // fits inside: nothing moves
  EXPECT_EQ(v.capacity(), 2u);
  v.reserve(10);
  EXPECT_EQ(v.capacity(), 10u);
  const Tracked* const block = v.data();
  for (int i = 1; i < 10; ++i) v.emplace_back(Long(i));
  EXPECT_EQ(v.data(), block) << "no growth within the reserved room";
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(v[9].text, Long(9));
}

// Random operations on an InlineVector and on std::vector (the reference) side by side.
TEST_F(InlineVectorTest, AgreesWithStdVectorUnderRandomOperations) {
  std::mt19937 random(20261201);
  Small v;
  std::vector<std::string> want;
  for (int step = 0; step < 20000; ++step) {
    const int text_id = static_cast<int>(random() % 1000);
    switch (random() % 9) {
      case 0:
      case 1:
      case 2:
        v.emplace_back(Long(text_id));
        want.push_back(Long(text_id));
        break;
      case 3:
        if (!want.empty()) {
          v.pop_back();
          want.pop_back();
        }
        break;
      case 4:
        if (!want.empty()) {
          const size_t at = random() % want.size();
          v.erase(v.begin() + static_cast<std::ptrdiff_t>(at));
          want.erase(want.begin() + static_cast<std::ptrdiff_t>(at));
        }
        break;
      case 5: {
        Small copy = v;
        v = std::move(copy);
        break;
      }
      case 6:
        if (random() % 8 == 0) {
          v.clear();
          want.clear();
        }
        break;
      case 7:
        if (!want.empty()) v.push_back(v[random() % v.size()]), want.push_back(v.back().text);
        break;
      case 8: {
        Small moved(std::move(v));
        v = moved;
        break;
      }
    }
    ASSERT_EQ(Texts(v), want) << "after step " << step;
    ASSERT_EQ(Tracked::live, static_cast<int>(want.size()));
  }
}

}  // namespace
}  // namespace vmm

#include "runner/base/unique_handle.h"

#include <gtest/gtest.h>

#include <map>
#include <type_traits>
#include <vector>

namespace vmm {
namespace {

// Every Release call, in order.
std::vector<int> g_released;
std::vector<int>& Released() { return g_released; }

// A plain value with a sentinel, like a file descriptor (-1 = empty).
struct IntTraits {
  using Value = int;
  static constexpr Value kNull = -1;
  static void Release(const Value& v) noexcept { Released().push_back(v); }
};
using IntHandle = UniqueHandle<IntTraits>;

// A struct value where every field value is legal and emptiness is a separate flag, like a driver
// handle for which 0 is a valid value.
struct Slot {
  bool live = false;
  int id = 0;
  bool operator==(const Slot&) const = default;
};
struct SlotTraits {
  using Value = Slot;
  static constexpr Value kNull{};
  static bool IsNull(const Value& v) noexcept { return !v.live; }
  static void Release(const Value& v) noexcept { Released().push_back(v.id); }
};
using SlotHandle = UniqueHandle<SlotTraits>;

static_assert(!std::is_copy_constructible_v<IntHandle>);
static_assert(!std::is_copy_assignable_v<IntHandle>);
static_assert(std::is_nothrow_move_constructible_v<IntHandle>);
static_assert(std::is_nothrow_move_assignable_v<IntHandle>);
static_assert(std::is_nothrow_destructible_v<IntHandle>);
static_assert(!std::is_convertible_v<int, IntHandle>, "taking ownership must be explicit");
static_assert(sizeof(IntHandle) == sizeof(int), "no overhead over the raw value");
static_assert(sizeof(SlotHandle) == sizeof(Slot));

class UniqueHandleTest : public ::testing::Test {
 protected:
  void SetUp() override { Released().clear(); }
};

TEST_F(UniqueHandleTest, DefaultIsEmptyAndReleasesNothing) {
  {
    IntHandle h;
    EXPECT_FALSE(h);
    EXPECT_EQ(h.get(), -1);
    IntHandle null(-1);  // owning kNull is being empty
    EXPECT_FALSE(null);
  }
  EXPECT_TRUE(Released().empty());
}

TEST_F(UniqueHandleTest, DestructorReleasesExactlyOnce) {
  {
    IntHandle h(7);
    EXPECT_TRUE(h);
    EXPECT_EQ(h.get(), 7);
    EXPECT_TRUE(Released().empty());
  }
  EXPECT_EQ(Released(), std::vector<int>{7});
}

TEST_F(UniqueHandleTest, MoveConstructionTransfersOwnership) {
  {
    IntHandle a(3);
    IntHandle b(std::move(a));
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    EXPECT_EQ(a.get(), -1);
    EXPECT_EQ(b.get(), 3);
    IntHandle c = std::move(b);
    EXPECT_EQ(c.get(), 3);
    EXPECT_TRUE(Released().empty());
  }
  EXPECT_EQ(Released(), std::vector<int>{3});
}

TEST_F(UniqueHandleTest, MoveAssignmentReleasesTheOldValueFirst) {
  IntHandle a(1);
  IntHandle b(2);
  a = std::move(b);
  EXPECT_EQ(Released(), std::vector<int>{1});
  EXPECT_EQ(a.get(), 2);
  EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move)
  a = IntHandle();  // assigning an empty handle releases
  EXPECT_EQ(Released(), (std::vector<int>{1, 2}));
  EXPECT_FALSE(a);
  a = IntHandle();  // and assigning empty to empty releases nothing
  EXPECT_EQ(Released().size(), 2u);
}

TEST_F(UniqueHandleTest, SelfMoveKeepsTheValue) {
  IntHandle h(9);
  IntHandle& alias = h;  // hides the self-move from -Wself-move
  h = std::move(alias);
  EXPECT_TRUE(h);
  EXPECT_EQ(h.get(), 9);
  EXPECT_TRUE(Released().empty());
  h.reset();
  EXPECT_EQ(Released(), std::vector<int>{9});
}

TEST_F(UniqueHandleTest, ReleaseGivesUpOwnershipWithoutReleasing) {
  int raw = 0;
  {
    IntHandle h(5);
    raw = h.release();
    EXPECT_FALSE(h);
    EXPECT_EQ(h.release(), -1);  // nothing left to give
  }
  EXPECT_EQ(raw, 5);
  EXPECT_TRUE(Released().empty());
}

TEST_F(UniqueHandleTest, ResetReleasesAndOptionallyTakesANewValue) {
  IntHandle h(1);
  h.reset(2);
  EXPECT_EQ(Released(), std::vector<int>{1});
  EXPECT_EQ(h.get(), 2);
  h.reset();
  EXPECT_EQ(Released(), (std::vector<int>{1, 2}));
  EXPECT_FALSE(h);
  h.reset();  // empty: no call
  EXPECT_EQ(Released().size(), 2u);
  h.reset(4);
  h.reset(-1);  // taking kNull is emptying
  EXPECT_EQ(Released(), (std::vector<int>{1, 2, 4}));
}

TEST_F(UniqueHandleTest, CustomIsNullLetsEveryFieldValueBeLive) {
  {
    SlotHandle zero(Slot{true, 0});  // id 0 is a live value here
    EXPECT_TRUE(zero);
    EXPECT_EQ(zero->id, 0);
    SlotHandle moved = std::move(zero);
    EXPECT_FALSE(zero);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(moved.get(), (Slot{true, 0}));
    SlotHandle dead(Slot{false, 8});  // not live: never released
    EXPECT_FALSE(dead);
  }
  EXPECT_EQ(Released(), std::vector<int>{0});
}

TEST_F(UniqueHandleTest, ContainersMoveWithoutReleasing) {
  {
    std::vector<IntHandle> v;
    for (int i = 0; i < 100; ++i) v.emplace_back(i);  // reallocations move every element
    EXPECT_TRUE(Released().empty());
    v.erase(v.begin() + 10);
    EXPECT_EQ(Released(), std::vector<int>{10});
    std::map<int, IntHandle> m;
    m.emplace(1, IntHandle(1000));
    m.erase(1);
    EXPECT_EQ(Released(), (std::vector<int>{10, 1000}));
    Released().clear();
    while (!v.empty()) v.pop_back();  // newest first
  }
  ASSERT_EQ(Released().size(), 99u);
  EXPECT_EQ(Released().front(), 99);
  EXPECT_EQ(Released().back(), 0);
}

}  // namespace
}  // namespace vmm

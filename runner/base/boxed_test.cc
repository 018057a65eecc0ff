#include "runner/base/boxed.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace vmm {
namespace {

TEST(BoxedTest, StartsEmptyAndBehavesLikeOptional) {
  Boxed<std::string> b;
  EXPECT_FALSE(b.has_value());
  EXPECT_TRUE(b == std::nullopt);
  b = std::string("x");
  ASSERT_TRUE(b);
  EXPECT_EQ(*b, "x");
  EXPECT_EQ(b->size(), 1u);
  b = std::nullopt;
  EXPECT_FALSE(b);
  b.emplace(3, 'y');
  EXPECT_EQ(*b, "yyy");
  b.reset();
  EXPECT_FALSE(b);
}

TEST(BoxedTest, CopiesAreDeepAndMovesTransfer) {
  Boxed<std::string> a = std::string("one");
  Boxed<std::string> copy = a;
  *copy = "two";
  EXPECT_EQ(*a, "one");
  EXPECT_EQ(*copy, "two");
  a = copy;
  EXPECT_EQ(*a, "two");
  Boxed<std::string> moved = std::move(copy);
  EXPECT_EQ(*moved, "two");
  Boxed<std::string> empty;
  a = empty;
  EXPECT_FALSE(a);
}

TEST(BoxedTest, AssignsFromStdOptional) {
  Boxed<int> b;
  b = std::optional<int>(4);
  ASSERT_TRUE(b);
  EXPECT_EQ(*b, 4);
  b = std::optional<int>();
  EXPECT_FALSE(b);
}

}  // namespace
}  // namespace vmm

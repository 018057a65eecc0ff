#include "runner/scenario/duration.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

TEST(DurationTest, IntegersWithAUnit) {
  EXPECT_EQ(ParseDuration("200ms"), 200000000u);
  EXPECT_EQ(ParseDuration("5s"), 5000000000u);
  EXPECT_EQ(ParseDuration("1500 us"), 1500000u);
  EXPECT_EQ(ParseDuration("7ns"), 7u);
  EXPECT_EQ(ParseDuration("2min"), 120000000000u);
  EXPECT_EQ(ParseDuration("0s"), 0u);
}

TEST(DurationTest, RefusesWhatIsNotOne) {
  for (const char* bad : {"", "5", "s", "5 s ", "5sec", "1.5s", "-1s", "5  s", "5S"})
    EXPECT_FALSE(ParseDuration(bad).has_value()) << bad;
  bool overflow = false;
  EXPECT_FALSE(ParseDuration("99999999999999999999s", &overflow).has_value());
  EXPECT_TRUE(overflow);
  EXPECT_FALSE(ParseDuration("18446744073709551615s", &overflow).has_value());
  EXPECT_TRUE(overflow);
  EXPECT_EQ(ParseDuration("18446744073709551615ns", &overflow), 18446744073709551615u);
  EXPECT_FALSE(overflow);
}

}  // namespace
}  // namespace vmm

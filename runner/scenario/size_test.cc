#include "runner/scenario/size.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

TEST(ParseSizeTest, IntegersAndBinaryUnits) {
  EXPECT_EQ(ParseSize("0"), 0u);
  EXPECT_EQ(ParseSize("4096"), 4096u);
  EXPECT_EQ(ParseSize("12B"), 12u);
  EXPECT_EQ(ParseSize("256KiB"), 256u << 10);
  EXPECT_EQ(ParseSize("2 MiB"), 2u << 20);
  EXPECT_EQ(ParseSize("3GiB"), 3ull << 30);
  EXPECT_EQ(ParseSize("16777215TiB"), 16777215ull << 40);
}

TEST(ParseSizeTest, RejectsOtherForms) {
  for (const char* bad :
       {"", "MiB", "2MB", "2 mib", "2  MiB", "1.5GiB", "-1", "+1", "2MiB ", "0x10"})
    EXPECT_FALSE(ParseSize(bad).has_value()) << bad;
}

TEST(ParseSizeTest, OverflowIsFlagged) {
  bool overflow = false;
  EXPECT_FALSE(ParseSize("16777216TiB", &overflow).has_value());
  EXPECT_TRUE(overflow);
  EXPECT_FALSE(ParseSize("18446744073709551616", &overflow).has_value());
  EXPECT_TRUE(overflow);
  EXPECT_EQ(ParseSize("18446744073709551615", &overflow), UINT64_MAX);
  EXPECT_FALSE(overflow);
  EXPECT_FALSE(ParseSize("2MB", &overflow).has_value());
  EXPECT_FALSE(overflow);
}

TEST(SuggestSizeTest, FixesUnitSpelling) {
  EXPECT_EQ(SuggestSize("2MB"), "2MiB");
  EXPECT_EQ(SuggestSize("2 mb"), "2 MiB");
  EXPECT_EQ(SuggestSize("4k"), "4KiB");
  EXPECT_EQ(SuggestSize("1gib"), "1GiB");
  EXPECT_EQ(SuggestSize("8 bytes"), "8 B");
  EXPECT_EQ(SuggestSize("2MiB"), "");   // already right
  EXPECT_EQ(SuggestSize("1.5GB"), "");  // no integer to keep
  EXPECT_EQ(SuggestSize("2 parsecs"), "");
}

}  // namespace
}  // namespace vmm

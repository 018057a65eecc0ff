#include "runner/base/format.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

TEST(Excerpt, LongValuesAreCutAtACharacterAndSayHowLongTheyWere) {
  EXPECT_EQ(Excerpt("short"), "short");
  EXPECT_EQ(Excerpt(std::string(80, 'a')), std::string(80, 'a'));
  EXPECT_EQ(Excerpt(std::string(81, 'a')), std::string(80, 'a') + "... (81 bytes)");
  // "é" is two bytes: a cut inside it keeps the character out.
  EXPECT_EQ(Excerpt("abé", 3), "ab... (4 bytes)");
}

}  // namespace
}  // namespace vmm

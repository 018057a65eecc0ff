#include "runner/base/control_chars.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

TEST(ControlChars, FindsC0DelAndC1ButNotTabOrText) {
  EXPECT_FALSE(FirstControlCharacter("plain\ttext, é and ☃", false));
  EXPECT_FALSE(FirstControlCharacter("two\nlines", true));
  std::optional<ControlCharacter> nl = FirstControlCharacter("two\nlines", false);
  ASSERT_TRUE(nl);
  EXPECT_EQ(nl->offset, 3u);
  EXPECT_EQ(DescribeControlCharacter(nl->code_point), "U+000A (LF)");
  std::optional<ControlCharacter> esc = FirstControlCharacter("ok \x1b[2J", true);
  ASSERT_TRUE(esc);
  EXPECT_EQ(esc->offset, 3u);
  EXPECT_EQ(DescribeControlCharacter(esc->code_point), "U+001B (ESC)");
  std::optional<ControlCharacter> del = FirstControlCharacter("a\x7f", true);
  ASSERT_TRUE(del);
  EXPECT_EQ(DescribeControlCharacter(del->code_point), "U+007F (DEL)");
  // U+009B (CSI) is an escape sequence on its own in some terminals; U+00A0 is text.
  std::optional<ControlCharacter> csi = FirstControlCharacter(
      "a\xc2\x9b"
      "2J",
      true);
  ASSERT_TRUE(csi);
  EXPECT_EQ(csi->offset, 1u);
  EXPECT_EQ(DescribeControlCharacter(csi->code_point), "U+009B");
  EXPECT_FALSE(
      FirstControlCharacter("no\xc2\xa0"
                            "break",
                            true));
}

}  // namespace
}  // namespace vmm

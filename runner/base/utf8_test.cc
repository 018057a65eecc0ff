#include "runner/base/utf8.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

TEST(Utf8Test, ValidTextHasNoBadByte) {
  EXPECT_EQ(FirstInvalidUtf8(""), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8("name: reuse\n"), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8("a \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8("\xf4\x8f\xbf\xbf"), std::nullopt);  // U+10FFFF
}

TEST(Utf8Test, FindsTheFirstBadByte) {
  EXPECT_EQ(FirstInvalidUtf8("ab\xff"), 2u);
  EXPECT_EQ(FirstInvalidUtf8("\x80"), 0u);              // continuation without a lead
  EXPECT_EQ(FirstInvalidUtf8("x\xc0\xaf"), 1u);         // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8("\xe0\x80\xaf"), 0u);      // overlong, 3 bytes
  EXPECT_EQ(FirstInvalidUtf8("\xed\xa0\x80"), 0u);      // surrogate U+D800
  EXPECT_EQ(FirstInvalidUtf8("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("ok \xe2\x82"), 3u);       // cut short
  EXPECT_EQ(FirstInvalidUtf8("\xc3\xa9\xc3("), 2u);
}

TEST(Utf8Test, PositionCountsLinesAndCharacters) {
  const std::string text = "a: 1\nb: \xc3\xa9x\xff";
  const TextPosition p = PositionOfOffset(text, *FirstInvalidUtf8(text));
  EXPECT_EQ(p.line, 2);
  EXPECT_EQ(p.column, 6);  // 'b', ':', ' ', 'é', 'x', then the bad byte
  EXPECT_EQ(PositionOfOffset(text, 0).line, 1);
  EXPECT_EQ(PositionOfOffset(text, 0).column, 1);
}

}  // namespace
}  // namespace vmm

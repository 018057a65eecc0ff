#include "runner/base/diagnostic.h"

#include <gtest/gtest.h>

#include "runner/base/format.h"

namespace vmm {
namespace {

TEST(Diagnostic, FormatsFileLineColumn) {
  Diagnostic d{{"scenarios/x.yaml", 12, 7}, "unknown key 'sizee'"};
  EXPECT_EQ(FormatDiagnostic(d), "scenarios/x.yaml:12:7: error: unknown key 'sizee'");
}

TEST(Diagnostic, OmitsUnknownPosition) {
  EXPECT_EQ(FormatDiagnostic({{"a.yaml", 0, 0}, "empty file"}), "a.yaml: error: empty file");
}

TEST(ClosestMatch, SuggestsNearNamesOnly) {
  std::vector<std::string> keys = {"size", "offset", "alloc_offset", "buffer"};
  EXPECT_EQ(ClosestMatch("sizee", keys), "size");
  EXPECT_EQ(ClosestMatch("bufer", keys), "buffer");
  EXPECT_EQ(ClosestMatch("zzzzzz", keys), "");
}

TEST(Format, HexAndBytes) {
  EXPECT_EQ(Hex(0x7f3a00000000ull), "0x7f3a00000000");
  EXPECT_EQ(FormatBytes(2ull << 20), "2 MiB");
  EXPECT_EQ(FormatBytes(3000), "3000 B");
  EXPECT_EQ(FormatBytes(0), "0 B");
}

}  // namespace
}  // namespace vmm

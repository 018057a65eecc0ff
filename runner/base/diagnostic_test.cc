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

TEST(Diagnostic, AppendsTheExpansionContext) {
  Diagnostic d{{"s.yaml", 9, 11, "for i = 37"}, "unknown alloc 'p37'"};
  EXPECT_EQ(FormatDiagnostic(d), "s.yaml:9:11: error: unknown alloc 'p37' (in for i = 37)");
}

TEST(Diagnostic, CollapsesRepeatsFromLoops) {
  std::vector<Diagnostic> ds = {{{"s.yaml", 9, 11, "for i = 0"}, "unknown alloc 'q0'"},
                                {{"s.yaml", 3, 1}, "plain"},
                                {{"s.yaml", 9, 11, "for i = 1"}, "unknown alloc 'q1'"},
                                {{"s.yaml", 9, 11, "for i = 2"}, "unknown alloc 'q2'"}};
  CollapseRepeats(&ds);
  EXPECT_EQ(FormatDiagnostics(ds),
            "s.yaml:9:11: error: unknown alloc 'q0' (in for i = 0; 2 more like it)\n"
            "s.yaml:3:1: error: plain\n");
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

#include "runner/base/sha256.h"

namespace vmm {
namespace {

// FIPS 180-4 / NIST example vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace vmm

#include "runner/report/json_limits.h"

#include <gtest/gtest.h>

#include "runner/report/report_io.h"

namespace vmm::report {
namespace {

TEST(JsonLimitsTest, AcceptsOrdinaryJson) {
  EXPECT_TRUE(
      CheckJsonLimits(R"({"a": [1, -2.5e3, {"b": "[[[[ 1e999"}], "c": "\"{"})", "r.json").ok());
  EXPECT_TRUE(CheckJsonLimits(std::string(64, '[') + std::string(64, ']'), "r.json").ok());
}

TEST(JsonLimitsTest, RefusesDeepNestingWithItsPosition) {
  Status s = CheckJsonLimits(std::string(65, '['), "r.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidInput);
  EXPECT_EQ(s.message(),
            "r.json:1:65: invalid JSON: arrays and objects are nested deeper than 64 levels");
}

TEST(JsonLimitsTest, RefusesNumbersOutOfRange) {
  Status s = CheckJsonLimits("{\n  \"wall_us\": 6e906\n}", "r.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "r.json:2:14: invalid JSON: number '6e906' is out of range (larger than 1.8e308)");
  EXPECT_FALSE(CheckJsonLimits("[-1e400]", "r.json").ok());
  EXPECT_TRUE(CheckJsonLimits("[1e-400, 1.7e308]", "r.json").ok());  // underflow reads as 0
}

TEST(JsonLimitsTest, RefusesControlCharactersInStrings) {
  Status esc = CheckJsonLimits("{\n  \"name\": \"ok \\u001b[2J\"\n}", "r.json");
  ASSERT_FALSE(esc.ok());
  EXPECT_EQ(esc.message(),
            "r.json:2:15: invalid JSON: a string holds the control character U+001B (ESC) "
            "(reports hold no control characters other than tab and newline: they would reach "
            "terminals)");
  EXPECT_FALSE(CheckJsonLimits(R"(["a\rb"])", "r.json").ok());
  EXPECT_FALSE(CheckJsonLimits("[\"a\x7f\"]", "r.json").ok());
  EXPECT_FALSE(CheckJsonLimits("[\"a\xc2\x9b\"]", "r.json").ok());
  // Text: newline and tab escapes, an escaped backslash before an r, a non-control escape.
  EXPECT_TRUE(CheckJsonLimits(R"(["a\nb\tc", "\\r", "\u00e9\u00a0", "\""])", "r.json").ok());
}

TEST(JsonLimitsTest, TheWriterReplacesWhatTheReaderRefuses) {
  EXPECT_EQ(ReplaceControlCharacters(R"({"a\u001bb": "x\ry\\r\n"})"),
            R"({"a\ufffdb": "x\ufffdy\\r\n"})");
  EXPECT_EQ(ReplaceControlCharacters("[\"\xc2\x85\x7f\"]"), R"(["\ufffd\ufffd"])");
  // A report whose scenario name holds ESC and CR is written readable.
  Report r;
  r.schema_version = "1.0";
  r.scenario_name = "evil\x1b]52;c;AAAA\x07\r";
  StatusOr<Report> back = ParseReportJson(ReportToJson(r), "r.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->scenario_name, "evil\xef\xbf\xbd]52;c;AAAA\xef\xbf\xbd\xef\xbf\xbd");
}

// The reader refuses both as bad input (exit 2), never crashing or throwing: a 200 KB `[[[[...`
// used to overflow the stack, and 6e906 escaped as an internal error.
TEST(JsonLimitsTest, ReportReaderRefusesHostileDocuments) {
  StatusOr<Report> deep = ParseReportJson(std::string(200000, '['), "deep.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), Code::kInvalidInput);
  EXPECT_EQ(deep.status().message(),
            "deep.json:1:65: invalid JSON: arrays and objects are nested deeper than 64 levels");
  StatusOr<Report> big = ParseReportJson(R"({"schema_version": "1.0", "x": 6e906})", "big.json");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), Code::kInvalidInput);
  EXPECT_EQ(big.status().message(),
            "big.json:1:32: invalid JSON: number '6e906' is out of range (larger than 1.8e308)");
}

}  // namespace
}  // namespace vmm::report

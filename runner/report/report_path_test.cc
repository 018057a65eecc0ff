#include "runner/report/report_path.h"

#include <gtest/gtest.h>

namespace vmm::report {
namespace {

TEST(ReportPathTest, SafeNamesAreKept) {
  EXPECT_EQ(SafeFileName("reuse"), "reuse");
  EXPECT_EQ(SafeFileName("graph_update-2.v1"), "graph_update-2.v1");
}

TEST(ReportPathTest, NamesCannotLeaveTheDirectory) {
  EXPECT_EQ(SafeFileName("../../x"), "_._.._x");
  EXPECT_EQ(SafeFileName("/etc/passwd"), "_etc_passwd");
  EXPECT_EQ(SafeFileName(".."), "_.");
  EXPECT_EQ(SafeFileName("."), "_");
  EXPECT_EQ(SafeFileName(".hidden"), "_hidden");
  EXPECT_EQ(SafeFileName("a\\b c\td\n"), "a_b_c_d_");
  EXPECT_EQ(SafeFileName("caf\xc3\xa9"), "caf__");
  EXPECT_EQ(SafeFileName(""), "_");
}

TEST(ReportPathTest, LongNamesAreCut) {
  const std::string cut = SafeFileName(std::string(5000, 'a'));
  EXPECT_EQ(cut.size(), kMaxReportNameBytes);
  EXPECT_EQ(cut.substr(0, 92), std::string(91, 'a') + "~");
  // Names equal in their first 100 bytes (sweep points with long values) still differ.
  const std::string point = "s.label=" + std::string(120, 'x');
  EXPECT_NE(SafeFileName(point + "1"), SafeFileName(point + "2"));
  EXPECT_EQ(SafeFileName(point + "1"), SafeFileName(point + "1"));
  EXPECT_EQ(SafeFileName(std::string(100, 'b')), std::string(100, 'b'));  // at the bound: kept
}

TEST(ReportPathTest, DefaultFileName) {
  EXPECT_EQ(DefaultReportFileName("reuse", "host"), "reuse.host.json");
  EXPECT_EQ(DefaultReportFileName("../x", "cuda"), "_._x.cuda.json");
}

}  // namespace
}  // namespace vmm::report

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
  EXPECT_EQ(SafeFileName(std::string(5000, 'a')), std::string(kMaxReportNameBytes, 'a'));
}

TEST(ReportPathTest, DefaultFileName) {
  EXPECT_EQ(DefaultReportFileName("reuse", "host"), "reuse.host.json");
  EXPECT_EQ(DefaultReportFileName("../x", "cuda"), "_._x.cuda.json");
}

}  // namespace
}  // namespace vmm::report

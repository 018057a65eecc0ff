#include "runner/report/junit.h"

#include <gtest/gtest.h>

#include "runner/report/report_test_util.h"

namespace vmm::report {
namespace {

StepRecord Step(int index, std::string op, std::string name, int line, double wall_us,
                StepStatus status = StepStatus::kOk) {
  StepRecord s;
  s.index = index;
  s.op = std::move(op);
  s.name = std::move(name);
  s.named = true;
  s.line = line;
  s.wall_us = wall_us;
  s.status = status;
  return s;
}

Report SmallReport() {
  Report r;
  r.scenario_path = "scenarios/a&b.yaml";
  r.scenario_name = "a<b>";
  r.backend = "host";
  r.device.name = "host (x86_64)";
  r.device.driver_version = "6.1";
  r.tool_version = "0.1.0";
  r.started_at = "2025-01-02T03:04:05Z";
  r.summary.duration_ms = 1.5;

  r.steps.push_back(Step(0, "reserve", "reserve #0", 3, 2.0));  // not a check: not listed
  StepRecord same = Step(1, "check_address", "A kept \"its\" address", 4, 0.5);
  same.check = CheckRecord{"same", "same", Verdict::kPass, 0, {}};
  r.steps.push_back(same);
  StepRecord mm = Step(2, "check_matmul", "C = A·B", 5, 1500, StepStatus::kFailed);
  mm.check = CheckRecord{"pass", "2 mismatches", Verdict::kFail, 2, {{7, "1.5", "0"}}};
  r.steps.push_back(mm);
  StepRecord unmap = Step(3, "unmap", "unmap #3", 6, 10, StepStatus::kFailed);
  unmap.error = "range <0x10, +2 MiB) is not mapped\x01";
  r.steps.push_back(unmap);
  r.steps.push_back(Step(4, "update", "update e1", 7, 0, StepStatus::kSkipped));
  return r;
}

TEST(JUnitTest, ExactXmlForASmallReport) {
  EXPECT_EQ(ReportToJUnit(SmallReport()),
            R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="vmm-run" tests="4" failures="1" errors="1" skipped="1" time="0.001500">
  <testsuite name="a&lt;b&gt;" tests="4" failures="1" errors="1" skipped="1" time="0.001500" timestamp="2025-01-02T03:04:05Z">
    <properties>
      <property name="scenario" value="scenarios/a&amp;b.yaml"/>
      <property name="backend" value="host"/>
      <property name="device" value="host (x86_64)"/>
      <property name="driver_version" value="6.1"/>
      <property name="tool_version" value="0.1.0"/>
    </properties>
    <testcase classname="a&lt;b&gt;" name="A kept &quot;its&quot; address" file="scenarios/a&amp;b.yaml" line="4" time="0.000000"/>
    <testcase classname="a&lt;b&gt;" name="C = A·B" file="scenarios/a&amp;b.yaml" line="5" time="0.001500">
      <failure message="expected pass, got 2 mismatches" type="check_matmul">scenarios/a&amp;b.yaml:5: C = A·B
expected: pass
actual: 2 mismatches
mismatches: 2
  [7] want 1.5, got 0
</failure>
    </testcase>
    <testcase classname="a&lt;b&gt;" name="unmap #3" file="scenarios/a&amp;b.yaml" line="6" time="0.000010">
      <error message="range &lt;0x10, +2 MiB) is not mapped�" type="unmap">scenarios/a&amp;b.yaml:6: unmap #3
range &lt;0x10, +2 MiB) is not mapped�
</error>
    </testcase>
    <testcase classname="a&lt;b&gt;" name="update e1" file="scenarios/a&amp;b.yaml" line="7" time="0.000000">
      <skipped message="skipped"/>
    </testcase>
  </testsuite>
</testsuites>
)xml");
}

TEST(JUnitTest, AnInterruptedRunIsAnErrorTestcase) {
  Report r = SmallReport();
  r.summary.interrupted = true;
  r.summary.signal = 15;
  r.summary.stopped_at_step = 4;
  const std::string xml = ReportToJUnit(r);
  EXPECT_NE(xml.find(R"(<testsuite name="a&lt;b&gt;" tests="5" failures="1" errors="2" )"),
            std::string::npos)
      << xml;
  EXPECT_NE(
      xml.find(
          R"xml(    <testcase classname="a&lt;b&gt;" name="interrupted" file="scenarios/a&amp;b.yaml" time="0.000000">
      <error message="interrupted by SIGTERM before step 4; the later steps did not run" type="interrupted">scenarios/a&amp;b.yaml: interrupted by SIGTERM before step 4; the later steps did not run
</error>
    </testcase>
)xml"),
      std::string::npos)
      << xml;
}

TEST(JUnitTest, OneSuitePerReportAndTotals) {
  const Report a = SmallReport();
  const Report b = testutil::SampleReport();
  const std::string xml = ReportsToJUnit({&a, &b});
  EXPECT_NE(xml.find(R"(<testsuite name="a&lt;b&gt;")"), std::string::npos);
  EXPECT_NE(
      xml.find(R"(<testsuite name="graph_update" tests="7" failures="2" errors="1" skipped="0" )"),
      std::string::npos)
      << xml;
  EXPECT_NE(
      xml.find(R"(<testsuites name="vmm-run" tests="11" failures="3" errors="2" skipped="1" )"),
      std::string::npos)
      << xml;
}

TEST(JUnitTest, WriteJUnitWritesTheFile) {
  const std::string dir = testutil::TempDir("junit");
  ASSERT_TRUE(WriteJUnit(SmallReport(), dir + "/junit.xml").ok());
  EXPECT_EQ(testutil::ReadAll(dir + "/junit.xml"), ReportToJUnit(SmallReport()));
  const std::vector<Report> both = {SmallReport(), testutil::SampleReport()};
  ASSERT_TRUE(WriteJUnit(both, dir + "/both.xml").ok());
  EXPECT_EQ(testutil::ReadAll(dir + "/both.xml"), ReportsToJUnit({&both[0], &both[1]}));
  EXPECT_EQ(WriteJUnit(SmallReport(), dir + "/no/junit.xml").message(),
            "cannot write '" + dir + "/no/junit.xml': No such file or directory");
}

}  // namespace
}  // namespace vmm::report

#include "runner/cli/sweep_summary.h"

#include <gtest/gtest.h>

namespace vmm {
namespace {

report::StepRecord Step(const std::string& op, double wall_us, report::StepStatus status) {
  report::StepRecord s;
  s.op = op;
  s.wall_us = wall_us;
  s.status = status;
  return s;
}

TEST(SweepSummary, SkippedStepsAreNotCountedAsFast) {
  report::Report stopped;
  stopped.sweep_point = {{"page", "2MiB"}};
  stopped.summary.result = "fail";
  stopped.steps = {
      Step("map", 10, report::StepStatus::kOk), Step("map", 30, report::StepStatus::kFailed),
      Step("map", 0, report::StepStatus::kSkipped), Step("map", 0, report::StepStatus::kSkipped),
      Step("unmap", 0, report::StepStatus::kSkipped)};
  const auto rows = SweepTable({&stopped});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"page", "result", "map_us", "unmap_us"}));
  // The median of 10 and 30, not of 10, 30, 0, 0; no unmap ran.
  EXPECT_EQ(rows[1], (std::vector<std::string>{"2MiB", "fail", "20.0", ""}));
}

// The files' table: per op the calls timed, min and max over every call, p50 and p99 over the
// steps (a repeated step with its median), skipped steps left out (#29 item 6).
TEST(SweepSummary, TheFilesGiveCountMinPercentilesAndMaxPerOp) {
  report::Report point;
  point.sweep_point = {{"pages", "4"}};
  point.summary.result = "pass";
  report::StepRecord repeated = Step("map", 0, report::StepStatus::kOk);
  repeated.wall_stats = report::TimingStats{10, 1.5, 4.0, 9.0, 12.0};
  point.steps = {Step("map", 2.0, report::StepStatus::kOk), repeated,
                 Step("map", 3.0, report::StepStatus::kOk),
                 Step("map", 0, report::StepStatus::kSkipped),
                 Step("unmap", 0, report::StepStatus::kSkipped)};
  const auto rows = SweepTable({&point}, /*full=*/true);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"pages", "result", "map_n", "map_min_us", "map_p50_us",
                                      "map_p99_us", "map_max_us", "unmap_n", "unmap_min_us",
                                      "unmap_p50_us", "unmap_p99_us", "unmap_max_us"}));
  // 12 calls; min 1.5 and max 12 from the repeated step; p50 and p99 over 2, 4 and 3.
  EXPECT_EQ(rows[1], (std::vector<std::string>{"4", "pass", "12", "1.5", "3.0", "4.0", "12.0", "",
                                               "", "", "", ""}));
  EXPECT_EQ(SweepTable({&point})[0],
            (std::vector<std::string>{"pages", "result", "map_us", "unmap_us"}));
}

TEST(SweepSummary, CellsFromTheScenarioCannotBreakATable) {
  const std::vector<std::vector<std::string>> rows = {{"label", "result"},
                                                      {"a|b\n<script>x</script>", "pass"}};
  EXPECT_EQ(SweepTableMarkdown(rows),
            "| label | result |\n|---|---|\n| a\\|b &lt;script&gt;x&lt;/script&gt; | pass |\n");
  EXPECT_EQ(FormatSweepTable(rows),
            "label                   result\na|b <script>x</script>  pass\n");
  EXPECT_EQ(SweepTableCsv(rows), "label,result\n\"a|b\n<script>x</script>\",pass\n");
}

}  // namespace
}  // namespace vmm

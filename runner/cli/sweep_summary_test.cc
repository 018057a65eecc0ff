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

#include "runner/cli/progress_line.h"

#include <gtest/gtest.h>

#include <sstream>

#include "runner/scenario/parse.h"

namespace vmm {
namespace {

struct Recorder : StepObserver {
  std::ostream* out = nullptr;
  void OnStep(const PlanStep& step, const report::StepRecord&) override {
    *out << "[" << step.label << "]\n";
  }
};

TEST(ProgressLine, RedrawsBelowTheLogAndClearsAtTheEnd) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(
      "name: p\nbuffers: {A: {shape: [4]}}\n"
      "steps: [{op: reserve, buffer: A}, {op: synchronize}, {op: free, buffer: A}]\n",
      "p.yaml", &d);
  ASSERT_TRUE(s.has_value()) << FormatDiagnostics(d);
  Plan plan = BuildPlan(*s, &d);
  ASSERT_EQ(FormatDiagnostics(d), "");
  std::ostringstream out;
  Recorder log;
  log.out = &out;
  double now = 0;
  ProgressLine progress(plan, &log, out, [&] { return now; });
  report::StepRecord record;
  for (const PlanStep& step : plan.steps) {
    now += 1000000;
    progress.OnStep(step, record);
  }
  EXPECT_EQ(out.str(),
            "[reserve A]\n"
            "step 1 of 3 · next: synchronize · 1.00 s elapsed · about 2.00 s left"
            "\r\x1b[K[synchronize]\n"
            "step 2 of 3 · next: free A · 2.00 s elapsed · about 1.00 s left"
            "\r\x1b[K[free A]\n");
}

}  // namespace
}  // namespace vmm

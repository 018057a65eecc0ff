// PrepareRun's memory contract: the scenario's steps are freed once planned (a long scenario's
// steps weigh as much as its plan) unless check_record reads them at run time, and what runs after
// that is the same.
#include "runner/pipeline/run_scenario.h"

#include <gtest/gtest.h>

#include <string>

namespace vmm {
namespace {

constexpr const char* kLoop = R"(version: 1
name: loop
granularity: 2MiB
report: {fold_loops: true}
buffers:
  A: {shape: [524288]}
steps:
  - {op: reserve, buffer: A}
  - for: i
    in: [1, 2, 3]
    steps:
      - {op: create, alloc: p, size: 2MiB}
      - {op: map, buffer: A, alloc: p}
      - {op: set_access, buffer: A}
      - {op: memset, buffer: A, value: "${i}"}
      - {op: check_value, buffer: A, value: "${i}"}
      - {op: unmap, buffer: A}
      - {op: release, alloc: p}
  - {op: free, buffer: A}
)";

RunRequest Request(const std::string& text) {
  RunRequest r;
  r.path = "loop.yaml";
  r.text = text;
  r.backend = BackendKind::kHost;
  return r;
}

TEST(PrepareRun, FreesTheScenarioStepsOncePlannedAndTheRunFoldsAsBefore) {
  PrepareOutcome prepared = PrepareRun(Request(kLoop));
  ASSERT_TRUE(prepared.run) << prepared.error;
  EXPECT_TRUE(prepared.run->scenario.steps.empty());
  ASSERT_EQ(prepared.run->plan.steps.size(), 23u);
  for (const PlanStep& s : prepared.run->plan.steps) EXPECT_EQ(s.src, nullptr) << s.label;
  EXPECT_EQ(prepared.run->templates.size(), 23u);
  EXPECT_EQ(prepared.run->templates[1], prepared.run->templates[8]);  // create, cycles 1 and 2
  EXPECT_NE(prepared.run->templates[1], prepared.run->templates[2]);
  const report::Report report = ExecuteRun(*prepared.run, nullptr);
  EXPECT_EQ(report.summary.exit_code, 0);
  EXPECT_EQ(report.steps.size(), 9u);  // reserve, the 7 of the cycle folded, free
  EXPECT_TRUE(prepared.run->plan.steps.empty()) << "consumed by ExecuteRun";
}

TEST(PrepareRun, KeepsTheScenarioStepsForCheckRecord) {
  std::string text = kLoop;
  text.replace(text.find("  - {op: free, buffer: A}"), 0,
               "  - {op: check_record, step: the reserve, equals: {status: ok}}\n");
  text.replace(text.find("{op: reserve, buffer: A}"), 24,
               "{op: reserve, name: the reserve, buffer: A}");
  PrepareOutcome prepared = PrepareRun(Request(text));
  ASSERT_TRUE(prepared.run) << prepared.error << FormatDiagnostics(prepared.diagnostics);
  EXPECT_EQ(prepared.run->scenario.steps.size(), 24u);  // expanded: the loop made 21
  EXPECT_NE(prepared.run->plan.steps.back().src, nullptr);
  const report::Report report = ExecuteRun(*prepared.run, nullptr);
  EXPECT_EQ(report.summary.exit_code, 0);
}

}  // namespace
}  // namespace vmm

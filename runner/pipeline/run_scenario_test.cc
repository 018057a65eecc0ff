// PrepareRun's memory contract: the scenario's steps are freed once planned (a long scenario's
// steps weigh as much as its plan) unless check_record reads them at run time, and what runs after
// that is the same.
#include "runner/pipeline/run_scenario.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kernels/datagen.h"
#include "runner/scenario/parse.h"

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
  EXPECT_EQ(report.data_hash_scheme, datagen::kHashScheme);  // names how its hashes were made
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

// Sizes relative to the device: device_memory and device_free are read from the device the run
// uses (here the twin, whose memory VMMRUN_HOST_MEMORY sets), before the scenario is expanded.
TEST(PrepareRun, ReadsTheDeviceFactsAScenarioNames) {
  const std::string text = R"(version: 1
name: beyond
granularity: 2MiB
buffers: {A: {shape: [4]}}
steps:
  - {op: create, alloc: big, size: "${(device_memory / 2MiB + 1) * 2MiB}", expect_error: CUDA_ERROR_OUT_OF_MEMORY}
  - {op: create, alloc: half, size: "${device_free / 2}"}
  - {op: release, alloc: half}
)";
  ASSERT_EQ(setenv("VMMRUN_HOST_MEMORY", "4GiB", 1), 0);
  PrepareOutcome prepared = PrepareRun(Request(text));
  unsetenv("VMMRUN_HOST_MEMORY");
  ASSERT_TRUE(prepared.run) << prepared.error << FormatDiagnostics(prepared.diagnostics);
  const std::vector<std::pair<std::string, ExprValue>>& facts = prepared.run->request.expand.facts;
  ASSERT_EQ(facts.size(), 2u);
  EXPECT_EQ(facts[0].first, "device_memory");
  EXPECT_EQ(facts[0].second.number, int64_t{4} << 30);
  EXPECT_EQ(facts[1].first, "device_free");
  EXPECT_EQ(facts[1].second.number, int64_t{4} << 30);
  const report::Report report = ExecuteRun(*prepared.run, nullptr);
  EXPECT_EQ(report.summary.exit_code, 0);
  ASSERT_GE(report.vars.size(), 2u);
  EXPECT_EQ(report.vars[0], (std::pair<std::string, std::string>{"device_memory", "4294967296"}));

  // Without a device to read them from (as a sweep's axes are read), naming one says so.
  std::vector<Diagnostic> d;
  EXPECT_FALSE(ParseScenario(text, "beyond.yaml", ExpandOptions{}, &d));
  ASSERT_FALSE(d.empty());
  EXPECT_NE(d[0].message.find("'device_memory' is a device fact, read from the device when "
                              "vmm-run runs, validates or expands a scenario"),
            std::string::npos)
      << d[0].message;
}

}  // namespace
}  // namespace vmm

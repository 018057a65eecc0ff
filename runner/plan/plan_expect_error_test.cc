// expect_error in the validator: which rule violations it lets through, which it never does, and
// that such a step leaves the simulated state as it was.
#include <gtest/gtest.h>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"
#include "runner/vocab/vmm_rules.h"

namespace vmm {
namespace {

constexpr char kHeader[] =
    "name: t\n"
    "buffers:\n"
    "  A: {shape: [524288]}\n"
    "  B: {shape: [524288]}\n"
    "steps:\n";

std::string PlanErrors(const std::string& steps, Plan* plan = nullptr) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(kHeader + steps, "t.yaml", &d);
  EXPECT_TRUE(s.has_value()) << FormatDiagnostics(d);
  if (!s) return "parse failed";
  Plan p = BuildPlan(*s, &d);
  if (plan != nullptr) *plan = std::move(p);
  return FormatDiagnostics(d);
}

TEST(PlanExpectErrorTest, LetsThroughARefusalAndForgetsItsEffect) {
  Plan plan;
  ASSERT_EQ(
      PlanErrors("  - {op: reserve, buffer: A, size: 4MiB}\n"
                 "  - {op: create, alloc: p, size: 2MiB}\n"
                 "  - {op: create, alloc: q, size: 2MiB}\n"
                 "  - {op: map, buffer: A, alloc: p}\n"
                 "  - {op: map, buffer: A, alloc: q, expect_error: CUDA_ERROR_INVALID_VALUE}\n"
                 // q was not mapped: it maps beside p, and [0, 2 MiB) is p's alone.
                 "  - {op: map, buffer: A, alloc: q, offset: 2MiB}\n"
                 "  - {op: unmap, buffer: A, size: 2MiB}\n"
                 "  - {op: unmap, buffer: A, offset: 2MiB}\n"
                 "  - {op: free, buffer: A}\n",
                 &plan),
      "");
  const PlanStep& refused = plan.steps[4];
  EXPECT_STREQ(refused.expect_error, "CUDA_ERROR_INVALID_VALUE");
  ASSERT_NE(refused.broken_rule, nullptr);
  EXPECT_EQ(refused.broken_rule->id, "map_over_live_mapping");
  EXPECT_EQ(refused.alloc, 1);
  EXPECT_EQ(refused.size, 2u << 20);
  EXPECT_EQ(plan.steps[3].expect_error, nullptr);
}

TEST(PlanExpectErrorTest, EveryRefusedRuleOfTheTableIsLetThrough) {
  for (const VmmRule& rule : VmmRules()) {
    SCOPED_TRACE(std::string(rule.id));
    std::string steps(rule.steps);
    steps.insert(steps.size() - 2, ", expect_error: CUDA_ERROR_INVALID_VALUE");  // before "}\n"
    std::vector<Diagnostic> d;
    std::optional<Scenario> s =
        ParseScenario(std::string(kVmmRuleScenarioHeader) + steps, "rule.yaml", &d);
    ASSERT_TRUE(s.has_value()) << FormatDiagnostics(d);
    Plan plan = BuildPlan(*s, &d);
    if (rule.LetThrough(false)) {
      EXPECT_EQ(FormatDiagnostics(d), "");
      ASSERT_NE(plan.steps.back().broken_rule, nullptr);
      EXPECT_EQ(plan.steps.back().broken_rule->id, rule.id);
    } else {
      // Still the row's message, and why expect_error cannot help.
      ASSERT_EQ(d.size(), 1u) << FormatDiagnostics(d);
      EXPECT_EQ(d[0].message.rfind(std::string(rule.validator_message), 0), 0u) << d[0].message;
      EXPECT_NE(d[0].message.find(rule.blocks_only
                                      ? "; expect_error lets this step through only inside an "
                                        "isolate block"
                                      : "; expect_error cannot let this step through: "),
                std::string::npos)
          << d[0].message;
    }
  }
}

TEST(PlanExpectErrorTest, AFailedCreateMakesNoLiveAlloc) {
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: create, alloc: big, size: 1TiB, expect_error: "
                       "CUDA_ERROR_OUT_OF_MEMORY}\n"
                       "  - {op: map, buffer: A, alloc: big}\n"),
            "t.yaml:8:33: error: unknown alloc 'big'; no alloc is live at this step\n");
}

TEST(PlanExpectErrorTest, ALegalStepMayExpectAnError) {
  Plan plan;
  ASSERT_EQ(PlanErrors("  - {op: reserve, buffer: A, expect_error: CUDA_ERROR_OUT_OF_MEMORY}\n"
                       "  - {op: reserve, buffer: A}\n",
                       &plan),
            "");
  EXPECT_EQ(plan.steps[0].broken_rule, nullptr);
}

TEST(PlanExpectErrorTest, ASecondFreeIsNeverSent) {
  // The driver refuses it only until its VA allocator hands the range out again; then it frees
  // what lives there (vmm_rules.h, double_free).
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A, size: 4MiB}\n"
                       "  - {op: free, buffer: A}\n"
                       "  - {op: free, buffer: A, expect_error: CUDA_ERROR_INVALID_VALUE}\n"),
            "t.yaml:8:24: error: buffer 'A' is not reserved: it was freed at line 7; expect_error "
            "cannot let this step through: the CUDA "
            "driver (580) accepts this call against its documentation instead of refusing it, so "
            "there is no refusal to expect and vmm-run never sends it\n");
}

TEST(PlanExpectErrorTest, ScenarioMistakesStayErrors) {
  // An unknown buffer is not something a driver refuses.
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: X, expect_error: CUDA_ERROR_INVALID_VALUE}\n"),
            "t.yaml:6:27: error: unknown buffer 'X'; declared buffers: A, B\n");
}

}  // namespace
}  // namespace vmm

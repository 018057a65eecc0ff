#include <gtest/gtest.h>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace vmm {
namespace {

constexpr char kHeader[] =
    "name: t\n"
    "buffers:\n"
    "  A: {shape: [256, 256]}\n"
    "  B: {shape: [256, 256]}\n"
    "  C: {shape: [256, 256]}\n"
    "steps:\n";

// Parses kHeader + `steps` and plans it; returns the plan diagnostics (parse must succeed).
std::string PlanErrors(const std::string& steps, Plan* plan = nullptr) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(kHeader + steps, "t.yaml", &d);
  EXPECT_TRUE(s.has_value()) << FormatDiagnostics(d);
  if (!s) return "parse failed";
  Plan p = BuildPlan(*s, &d);
  if (plan != nullptr) *plan = std::move(p);
  return FormatDiagnostics(d);
}

TEST(BuildPlanTest, ScenarioIsReady) {
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: create, alloc: p, size: 2MiB}\n"
                       "  - {op: map, buffer: A, alloc: p}\n"
                       "  - {op: set_access, buffer: A}\n"
                       "  - {op: fill, buffer: A, seed: 1}\n"
                       "  - {op: unmap, buffer: A}\n"
                       "  - {op: release, alloc: p}\n"
                       "  - {op: free, buffer: A}\n"),
            "");
}

TEST(BuildPlanTest, NewMappingHasNoAccess) {
  EXPECT_EQ(PlanErrors("  - {op: reserve, buffer: A}\n"
                       "  - {op: create, alloc: p, size: 2MiB}\n"
                       "  - {op: map, buffer: A, alloc: p}\n"
                       "  - {op: fill, buffer: A, seed: 1}\n"),
            "t.yaml:10:24: error: fill writes buffer 'A', which has no access yet (a new mapping "
            "has none until set_access)\n");
}

}  // namespace
}  // namespace vmm

// export and import in the validator: slots, sizes, handle types, and an import that is expected
// to fail making no live alloc.
#include <gtest/gtest.h>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace vmm {
namespace {

std::string PlanErrors(const std::string& steps, Plan* plan) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s =
      ParseScenario("name: t\nbuffers:\n  A: {shape: [524288]}\nsteps:\n" + steps, "t.yaml", &d);
  EXPECT_TRUE(s.has_value()) << FormatDiagnostics(d);
  if (!s) return "parse failed";
  *plan = BuildPlan(*s, &d);
  return FormatDiagnostics(d);
}

TEST(PlanSharingTest, AnImportIsANewAllocOfTheExportedSize) {
  Plan plan;
  ASSERT_EQ(PlanErrors("  - {op: create, alloc: p, size: 4MiB, handle_types: [posix_fd]}\n"
                       "  - {op: export, alloc: p, handle: h}\n"
                       "  - {op: import, handle: h, alloc: q}\n"
                       "  - {op: release, alloc: q}\n"
                       "  - {op: import, handle: h, alloc: q}\n",
                       &plan),
            "");
  EXPECT_EQ(plan.alloc_specs[0].props.handle_types, 0x1u);
  EXPECT_EQ(plan.handles, (std::vector<std::string>{"h"}));
  EXPECT_EQ(plan.steps[1].handle, 0);
  EXPECT_EQ(plan.steps[1].alloc, 0);
  EXPECT_EQ(plan.steps[2].handle, 0);
  EXPECT_EQ(plan.steps[2].alloc, 1);
  EXPECT_EQ(plan.steps[2].size, 4u << 20);
  EXPECT_EQ(plan.steps[4].alloc, 2);  // a new slot for the second import
  EXPECT_EQ(plan.alloc_sizes, (std::vector<uint64_t>{4u << 20, 4u << 20, 4u << 20}));
}

TEST(PlanSharingTest, AnImportExpectedToFailMakesNoLiveAlloc) {
  Plan plan;
  EXPECT_EQ(
      PlanErrors("  - {op: create, alloc: p, size: 2MiB, handle_types: [posix_fd, fabric]}\n"
                 "  - {op: export, alloc: p, handle: h}\n"
                 "  - {op: import, handle: h, alloc: q, expect_error: CUDA_ERROR_INVALID_VALUE}\n"
                 "  - {op: release, alloc: q}\n",
                 &plan),
      "t.yaml:8:26: error: unknown alloc 'q'; live allocs: p\n");
  EXPECT_EQ(plan.alloc_specs[0].props.handle_types, 0x9u);
}

}  // namespace
}  // namespace vmm

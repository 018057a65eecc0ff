// repeat on a VMM call (runner/plan/plan_repeat.cc): the calls that undo each repetition, what
// the record keeps, and that undoing never waits for work in flight.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/engine/fake_engine.h"
#include "runner/engine/host/host_engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/planned_test_util.h"

namespace vmm {
namespace {

// repeat on a VMM call: each next call is preceded by the calls that undo the last one, and the
// step leaves the state one call leaves (the later steps use the last handle made).
TEST(ExecutorRepeat, RepeatedVmmCallsAreUndoneBetweenRepetitions) {
  Planned p(R"(version: 1
name: repeat_vmm
buffers: {A: {shape: [1048576]}}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: a, size: 2MiB, repeat: 2}
  - {op: create, alloc: b, size: 2MiB}
  - {op: map, buffer: A, alloc: a, repeat: 2}
  - {op: map, buffer: A, alloc: b, offset: 2MiB}
  - {op: set_access, buffer: A, size: 2MiB, repeat: 2}
  - {op: set_access, buffer: A, offset: 2MiB, access: read}
  - {op: unmap, buffer: A, repeat: 2}
  - {op: release, alloc: a, repeat: 2}
  - {op: release, alloc: b}
  - {op: free, buffer: A}
)");
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 0);
  const std::vector<std::string> expected = {
      "Reserve(size=0x400000, align=0x200000) -> 0x100000000",
      "Create(size=0x200000) -> 0x1",
      "Release(handle=0x1)",  // undoes the create
      "Create(size=0x200000) -> 0x2",
      "Create(size=0x200000) -> 0x3",
      "Map(va=0x100000000, size=0x200000, offset=0x0, handle=0x2)",  // the last handle of 'a'
      "Unmap(va=0x100000000, size=0x200000)",
      "Map(va=0x100000000, size=0x200000, offset=0x0, handle=0x2)",
      "Map(va=0x100200000, size=0x200000, offset=0x0, handle=0x3)",
      "SetAccess(va=0x100000000, size=0x200000, access=read_write)",
      "SetAccess(va=0x100000000, size=0x200000, access=read_write)",  // nothing to undo
      "SetAccess(va=0x100200000, size=0x200000, access=read)",
      "Unmap(va=0x100000000, size=0x400000)",
      // Undone: both mappings, then each run of access as it was.
      "Map(va=0x100000000, size=0x200000, offset=0x0, handle=0x2)",
      "Map(va=0x100200000, size=0x200000, offset=0x0, handle=0x3)",
      "SetAccess(va=0x100000000, size=0x200000, access=read_write)",
      "SetAccess(va=0x100200000, size=0x200000, access=read)",
      "Unmap(va=0x100000000, size=0x400000)",
      "Release(handle=0x2)",
      "Create(size=0x200000) -> 0x4",  // undoes the release
      "Release(handle=0x4)",
      "Release(handle=0x3)",
      "Free(va=0x100000000, size=0x400000)",
  };
  EXPECT_EQ(engine.calls(), expected);
  ASSERT_EQ(out.steps.size(), 11u);
  const report::StepRecord& create = out.steps[1];
  ASSERT_EQ(create.op, "create");
  ASSERT_TRUE(create.wall_stats.has_value());
  EXPECT_EQ(create.wall_stats->count, 2u);
  ASSERT_NE(report::FindDetail(create.details, "undone_by"), nullptr);
  EXPECT_EQ(report::ScalarText(*report::FindDetail(create.details, "undone_by")), "release");
  ASSERT_EQ(create.addresses.size(), 1u);
  EXPECT_EQ(report::ScalarText(create.addresses[0].second), "0x2");  // the handle left live
  ASSERT_NE(report::FindDetail(out.steps[7].details, "undone_by"), nullptr);
  EXPECT_EQ(report::ScalarText(*report::FindDetail(out.steps[7].details, "undone_by")),
            "map + set_access");
  ASSERT_EQ(out.steps[5].op, "set_access");
  EXPECT_EQ(report::FindDetail(out.steps[5].details, "undone_by"), nullptr);
}

// The calls that undo a repetition never wait for work in flight: a map repeated beside a busy
// kernel that runs until a flag is set ends at once, and the flag stops the kernel in time.
TEST(ExecutorRepeat, UndoingARepetitionDoesNotWaitForWorkInFlight) {
  Planned p(R"(version: 1
name: repeat_beside_busy
granularity: 2MiB
buffers:
  W: {shape: [524288]}
  X: {shape: [524288]}
steps:
  - {op: reserve, buffer: W}
  - {op: create, alloc: w, size: 2MiB}
  - {op: map, buffer: W, alloc: w}
  - {op: set_access, buffer: W}
  - {op: reserve, buffer: X}
  - {op: create, alloc: x, size: 2MiB, repeat: 3}
  - {op: busy, buffer: W, touch: write, value: 5, until: go, duration: 10s, async: true}
  - {op: map, buffer: X, alloc: x, repeat: 3}
  - {op: set_flag, name: go, flag: go}
)");
  ASSERT_EQ(p.errors, "");
  for (const PlanStep& undo : p.plan.steps[7].body) EXPECT_FALSE(undo.wait);
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine({2 << 20});
  ASSERT_TRUE(engine.ok());
  RunOutcome out = RunPlan(p.plan, **engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 0) << out.steps.back().error;
  EXPECT_LT(out.steps[7].wall_stats->max_us, 5e6) << "an undo waited for the busy kernel";
}

// A refused call changes nothing: repeated with expect_error, it has nothing to undo.
TEST(ExecutorRepeat, RepeatedRefusedVmmCallHasNoUndoSteps) {
  Planned p(R"(version: 1
name: repeat_refused
buffers: {A: {shape: [524288]}}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: a, size: 2MiB}
  - {op: map, buffer: A, alloc: a}
  - {op: map, buffer: A, alloc: a, expect_error: CUDA_ERROR_INVALID_VALUE, repeat: 3}
  - {op: unmap, buffer: A}
  - {op: release, alloc: a}
  - {op: free, buffer: A}
)");
  ASSERT_EQ(p.errors, "");
  ASSERT_EQ(p.plan.steps[3].repeat, 3u);
  EXPECT_TRUE(p.plan.steps[3].body.empty());
}

}  // namespace
}  // namespace vmm

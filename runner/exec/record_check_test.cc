// check_record on the host twin: it judges an earlier step's facts (details, status, wall_us),
// finds a step nested in a threads group, bounds numbers, and fails, naming what the record has,
// on a fact the record lacks.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "runner/engine/host/host_test_util.h"
#include "runner/exec/executor.h"
#include "runner/plan/planned_test_util.h"

namespace vmm {
namespace {

const char* kScenario = R"(version: 1
name: record_checks
granularity: 2MiB
buffers:
  K: {shape: [524288]}
steps:
  - {op: reserve, buffer: K}
  - {op: create, alloc: page, size: 2MiB}
  - {op: map, buffer: K, alloc: page}
  - {op: set_access, buffer: K}
  - threads:
      - thread: compute
        steps:
          - {op: busy, name: reader, buffer: K, duration: 50ms, touch: read, async: true}
          - {op: signal, point: launched}
      - thread: allocator
        steps:
          - {op: wait_for, point: launched}
          - {op: unmap, name: the free, buffer: K}
    name: group
  - {op: check_record, name: waited, step: the free, equals: {waited_for_work: true, status: ok},
     at_least: {wait_us: 10000}}
  - {op: check_record, name: too long, step: the free, at_least: {wait_us: 60000000}}
  - {op: check_record, name: absent, step: reader, equals: {touched: read}}
  - {op: check_record, name: text, step: reader, equals: {touch: read}, at_most: {wall_us: 60000000}}
  - {op: release, alloc: page}
  - {op: free, buffer: K}
)";

TEST(RecordCheck, JudgesAnEarlierStepsFactsNestedOrNot) {
  Planned p(kScenario);
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> engine = TestTwin();
  RunOutcome out = RunPlan(p.plan, *engine, nullptr);
  ASSERT_EQ(out.steps.size(), 11u);
  auto check = [&](size_t i) {
    return out.steps[i].check ? *out.steps[i].check : report::CheckRecord{};
  };
  EXPECT_EQ(check(5).verdict, report::Verdict::kPass) << check(5).actual;
  EXPECT_EQ(check(5).expected, "waited_for_work = true, status = ok, wait_us >= 10000");
  EXPECT_EQ(check(6).verdict, report::Verdict::kFail);
  EXPECT_EQ(check(7).verdict, report::Verdict::kFail);
  EXPECT_NE(check(7).actual.find("touched = absent; did you mean 'touch'?"), std::string::npos)
      << check(7).actual;
  EXPECT_EQ(check(8).verdict, report::Verdict::kPass) << check(8).actual;
  EXPECT_EQ(out.summary.checks_failed, 2);
}

// An empty text fact (an update that names no error node) is asserted as "" and shown so.
TEST(RecordCheck, AnEmptyTextIsWrittenAsTwoQuotes) {
  Planned p(R"(version: 1
name: empty_fact
buffers: {K: {shape: [1024]}}
steps:
  - {op: reserve, buffer: K}
  - {op: create, alloc: page, size: 2MiB}
  - {op: map, buffer: K, alloc: page}
  - {op: set_access, buffer: K}
  - {op: capture, graph: g1, steps: [{op: fill, buffer: K, seed: 1}]}
  - {op: instantiate, exec: e, graph: g1}
  - {op: capture, graph: g2, steps: [{op: fill, buffer: K, seed: 2}]}
  - {op: update, name: same shape, exec: e, graph: g2}
  - {op: check_record, name: none, step: same shape, equals: {error_node: ""}}
  - {op: check_record, name: some, step: same shape, equals: {error_node: x}}
  - {op: unmap, buffer: K}
  - {op: release, alloc: page}
  - {op: free, buffer: K}
)");
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> engine = TestTwin();
  RunOutcome out = RunPlan(p.plan, *engine, nullptr);
  ASSERT_TRUE(out.steps[8].check.has_value());
  EXPECT_EQ(out.steps[8].check->verdict, report::Verdict::kPass) << out.steps[8].check->actual;
  EXPECT_EQ(out.steps[8].check->expected, "error_node = \"\"");
  ASSERT_TRUE(out.steps[9].check.has_value());
  EXPECT_EQ(out.steps[9].check->verdict, report::Verdict::kFail);
  EXPECT_EQ(out.steps[9].check->actual, "error_node = \"\"");
}

}  // namespace
}  // namespace vmm

// check_record on the host twin: it judges an earlier step's facts (details, status, wall_us),
// finds a step nested in a threads group, bounds numbers, and fails, naming what the record has,
// on a fact the record lacks.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "runner/engine/host/host_engine.h"
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
  HostEngineOptions options;
  options.granularity = 2 << 20;
  std::unique_ptr<Engine> engine = std::move(CreateHostEngine(options)).value();
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

}  // namespace
}  // namespace vmm

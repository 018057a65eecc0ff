// Steps with expect_error, run: on the host twin (the driver's refusals, the proof that the state
// is unchanged, a wrong code, a call that succeeds) and on the fake engine (a state that changes).
#include <gtest/gtest.h>

#include <string>

#include "runner/engine/fake_engine.h"
#include "runner/engine/host/host_engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/planned_test_util.h"

namespace vmm {
namespace {

constexpr char kHeader[] =
    "name: t\n"
    "buffers:\n"
    "  A: {shape: [1048576]}\n"
    "steps:\n";

RunOutcome RunOnHost(const std::string& steps, std::string* errors = nullptr) {
  Planned p(kHeader + steps);
  if (errors != nullptr) *errors = p.errors;
  EXPECT_EQ(p.errors, "");
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine({2 << 20});
  EXPECT_TRUE(engine.ok());
  return RunPlan(p.plan, **engine, nullptr);
}

const report::StepRecord* Step(const RunOutcome& out, const std::string& name) {
  for (const report::StepRecord& r : out.steps)
    if (r.name == name) return &r;
  ADD_FAILURE() << "no step " << name;
  return nullptr;
}

std::string Detail(const report::StepRecord& r, const std::string& key) {
  for (const auto& [k, v] : r.details) {
    if (k != key) continue;
    if (const std::string* s = std::get_if<std::string>(&v)) return *s;
    if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
    if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  }
  return "";
}

// A filled, readable mapping at [0, 2 MiB), then every refusal of the driver over it; the data
// and the mapping are still there at the end.
constexpr char kRefusals[] =
    "  - {op: reserve, buffer: A, size: 8MiB}\n"
    "  - {op: create, alloc: p, size: 4MiB}\n"
    "  - {op: create, alloc: q, size: 2MiB}\n"
    "  - {op: map, buffer: A, alloc: p}\n"
    "  - {op: set_access, buffer: A, size: 4MiB}\n"
    "  - {op: fill, buffer: A, seed: 7}\n"
    "  - {op: snapshot, buffer: A, snapshot: before}\n"
    "  - {op: map, name: over, buffer: A, alloc: q, offset: 2MiB,"
    " expect_error: CUDA_ERROR_INVALID_VALUE}\n"
    "  - {op: map, name: part, buffer: A, alloc: p, offset: 4MiB, size: 2MiB,"
    " expect_error: CUDA_ERROR_NOT_SUPPORTED}\n"
    "  - {op: set_access, name: half, buffer: A, size: 2MiB, access: read,"
    " expect_error: CUDA_ERROR_INVALID_VALUE}\n"
    "  - {op: unmap, name: split, buffer: A, size: 2MiB, expect_error: CUDA_ERROR_INVALID_VALUE}\n"
    "  - {op: free, name: busy, buffer: A, expect_error: CUDA_ERROR_INVALID_VALUE}\n"
    "  - {op: create, name: huge, alloc: h, size: 1024TiB, expect_error: "
    "CUDA_ERROR_OUT_OF_MEMORY}\n"
    "  - {op: check_equal, name: same data, buffer: A, snapshot: before, expect: equal}\n"
    "  - {op: unmap, buffer: A, size: 4MiB}\n"
    "  - {op: free, buffer: A}\n";

TEST(ExpectErrorTest, TheHostTwinRefusesAsTheDriverAndTheStateIsProvenUnchanged) {
  RunOutcome out = RunOnHost(kRefusals);
  EXPECT_EQ(out.summary.exit_code, 0) << out.summary.result;
  for (const char* name : {"over", "part", "half", "split", "busy", "huge"}) {
    SCOPED_TRACE(name);
    const report::StepRecord* r = Step(out, name);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->status, report::StepStatus::kOk) << r->error;
    EXPECT_EQ(r->expected_error, r->actual_error);
    ASSERT_TRUE(r->check);
    EXPECT_EQ(r->check->verdict, report::Verdict::kPass);
    EXPECT_EQ(Detail(*r, "state_unchanged"), "true");
  }
  EXPECT_EQ(Detail(*Step(out, "over"), "rule"), "map_over_live_mapping");
  EXPECT_EQ(Detail(*Step(out, "huge"), "rule"), "");  // breaks no rule: only the device says no
  // The mapping the refused calls touched was readable: its bytes were checksummed.
  EXPECT_EQ(Detail(*Step(out, "half"), "bytes_checksummed"), std::to_string(2 << 20));
  EXPECT_EQ(Detail(*Step(out, "busy"), "bytes_checksummed"), std::to_string(4 << 20));
  EXPECT_EQ(Detail(*Step(out, "over"), "bytes_checksummed"), std::to_string(2 << 20));
  EXPECT_EQ(Step(out, "same data")->check->verdict, report::Verdict::kPass);
}

TEST(ExpectErrorTest, AnotherErrorFailsTheStepAndStopsTheRun) {
  RunOutcome out = RunOnHost(
      "  - {op: reserve, buffer: A, size: 4MiB}\n"
      "  - {op: create, alloc: p, size: 2MiB}\n"
      "  - {op: map, buffer: A, alloc: p}\n"
      "  - {op: map, name: over, buffer: A, alloc: p, expect_error: CUDA_ERROR_NOT_SUPPORTED}\n"
      "  - {op: unmap, buffer: A, size: 2MiB}\n");
  EXPECT_EQ(out.summary.exit_code, 4);
  const report::StepRecord* r = Step(out, "over");
  EXPECT_EQ(r->status, report::StepStatus::kFailed);
  EXPECT_EQ(r->actual_error, "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(r->check->verdict, report::Verdict::kFail);
  EXPECT_EQ(r->error.rfind("expected CUDA_ERROR_NOT_SUPPORTED, driver returned "
                           "CUDA_ERROR_INVALID_VALUE: cuMemMap: CUDA_ERROR_INVALID_VALUE: ",
                           0),
            0u)
      << r->error;
  EXPECT_EQ(out.steps.back().status, report::StepStatus::kSkipped);
}

TEST(ExpectErrorTest, ACallThatSucceedsFailsTheStep) {
  // The driver skips unmapped space (vmm_rules.h unmap_not_mapped): the expected refusal never
  // comes, and the run stops.
  RunOutcome out = RunOnHost(
      "  - {op: reserve, buffer: A}\n"
      "  - {op: unmap, name: nothing, buffer: A, expect_error: CUDA_ERROR_INVALID_VALUE}\n"
      "  - {op: free, buffer: A}\n");
  EXPECT_EQ(out.summary.exit_code, 4);
  const report::StepRecord* r = Step(out, "nothing");
  EXPECT_EQ(r->actual_error, "CUDA_SUCCESS");
  EXPECT_EQ(Detail(*r, "rule"), "unmap_not_mapped");
  EXPECT_EQ(r->error.rfind("expected CUDA_ERROR_INVALID_VALUE, the call succeeded", 0), 0u)
      << r->error;
  EXPECT_EQ(out.summary.checks_failed, 1);
}

TEST(ExpectErrorTest, AStateThatChangesFailsTheStep) {
  Planned p(
      std::string(kHeader) +
      "  - {op: reserve, buffer: A}\n"
      "  - {op: create, alloc: p, size: 2MiB}\n"
      "  - {op: map, name: m, buffer: A, alloc: p, expect_error: CUDA_ERROR_INVALID_VALUE}\n");
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  engine.FailAt(
      "Map", 1,
      Status(Code::kRuntime, "cuMemMap: CUDA_ERROR_INVALID_VALUE: no", "CUDA_ERROR_INVALID_VALUE"));
  EngineInventory before;
  before.reservations.push_back({FakeEngine::kFirstVa, 2 << 20});
  engine.QueueInventory(before);  // read before the call; afterwards the fake holds nothing
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 4);
  EXPECT_EQ(out.steps[2].error,
            "the call failed as expected, but the state changed: reservations 1 → 0");
  EXPECT_EQ(out.steps[2].actual_error, "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(out.steps[2].check->verdict, report::Verdict::kFail);
}

TEST(ExpectErrorTest, AnErrorWithoutACudaNameIsNone) {
  Planned p(std::string(kHeader) +
            "  - {op: reserve, name: r, buffer: A, expect_error: CUDA_ERROR_OUT_OF_MEMORY}\n");
  FakeEngine engine;
  engine.FailAt("Reserve", 1, RuntimeError("something else went wrong"));
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.steps[0].actual_error, "none");
  EXPECT_EQ(out.steps[0].error,
            "expected CUDA_ERROR_OUT_OF_MEMORY, driver returned none: something else went wrong");
}

// expect_error: observe records what the call returned and passes; the run goes on where the
// plan's assumption holds (a refused rule breaker changed nothing, a legal call succeeded) and
// stops, naming what to pin, where a legal call failed.
TEST(ExpectError, ObserveRecordsWhatTheCallReturned) {
  RunOutcome out = RunOnHost(
      "  - {op: reserve, buffer: A, size: 4MiB}\n"
      "  - {op: create, alloc: p, size: 4MiB}\n"
      "  - {op: map, buffer: A, alloc: p}\n"
      "  - {op: map, name: over, buffer: A, alloc: p, expect_error: observe}\n"
      "  - {op: create, name: legal, alloc: q, size: 2MiB, expect_error: observe}\n"
      "  - {op: release, alloc: q}\n"
      "  - {op: unmap, buffer: A}\n"
      "  - {op: release, alloc: p}\n"
      "  - {op: free, buffer: A}\n");
  EXPECT_EQ(out.summary.exit_code, 0);
  const report::StepRecord* over = Step(out, "over");
  ASSERT_NE(over, nullptr);
  EXPECT_EQ(over->expected_error, "observe");
  EXPECT_EQ(over->actual_error, "CUDA_ERROR_INVALID_VALUE");
  ASSERT_TRUE(over->check.has_value());
  EXPECT_EQ(over->check->verdict, report::Verdict::kPass);
  EXPECT_EQ(Detail(*over, "state_unchanged"), "true");
  const report::StepRecord* legal = Step(out, "legal");
  ASSERT_NE(legal, nullptr);
  EXPECT_EQ(legal->actual_error, "CUDA_SUCCESS");

  RunOutcome stopped = RunOnHost(
      "  - {op: inject_error, call: create, error: CUDA_ERROR_OUT_OF_MEMORY}\n"
      "  - {op: create, name: refused, alloc: q, size: 2MiB, expect_error: observe}\n"
      "  - {op: release, alloc: q}\n");
  EXPECT_EQ(stopped.summary.exit_code, 4);
  const report::StepRecord* refused = Step(stopped, "refused");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->actual_error, "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(refused->status, report::StepStatus::kFailed);
  EXPECT_NE(refused->error.find("writes expect_error: CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos)
      << refused->error;
  EXPECT_EQ(stopped.steps.back().status, report::StepStatus::kSkipped);
}

}  // namespace
}  // namespace vmm

// Executor tests: the call sequence and failure handling against the recording FakeEngine, and the
// checks' verdicts against the real host engine.
#include "runner/exec/executor.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "kernels/datagen.h"
#include "runner/base/format.h"
#include "runner/engine/fake_engine.h"
#include "runner/engine/host/host_engine.h"
#include "runner/plan/planned_test_util.h"
#include "runner/scenario/parse.h"

namespace vmm {
namespace {

const char* kRemap = R"(version: 1
name: remap
buffers: {A: {shape: [64]}}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: p1, size: 2MiB}
  - {op: map, name: first, buffer: A, alloc: p1}
  - {op: unmap, buffer: A}
  - {op: release, alloc: p1}
  - {op: create, alloc: p2, size: 2MiB}
  - {op: map, name: second, buffer: A, alloc: p2}
  - {op: check_address, name: kept, of: [first, second], expect: same}
  - {op: unmap, buffer: A}
  - {op: release, alloc: p2}
  - {op: free, buffer: A}
)";

TEST(Executor, MakesOneEngineCallPerVmmStepInOrder) {
  Planned p(kRemap);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 0);
  EXPECT_EQ(out.summary.checks_passed, 1);
  std::vector<std::string> expected = {
      "Reserve(size=0x200000, align=0x200000) -> 0x100000000",
      "Create(size=0x200000) -> 0x1",
      "Map(va=0x100000000, size=0x200000, offset=0x0, handle=0x1)",
      "Unmap(va=0x100000000, size=0x200000)",
      "Release(handle=0x1)",
      "Create(size=0x200000) -> 0x2",
      "Map(va=0x100000000, size=0x200000, offset=0x0, handle=0x2)",
      "Unmap(va=0x100000000, size=0x200000)",
      "Release(handle=0x2)",
      "Free(va=0x100000000, size=0x200000)",
  };
  EXPECT_EQ(engine.calls(), expected);
  ASSERT_EQ(out.steps.size(), 11u);
  EXPECT_EQ(out.steps[7].check->actual, "same");
  ASSERT_EQ(out.steps[7].addresses.size(), 2u);
}

TEST(Executor, RuntimeFailureStopsTheRunAndNamesTheStep) {
  Planned p(kRemap);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  engine.FailAt("Map", 2, RuntimeError("cuMemMap: CUDA_ERROR_OUT_OF_MEMORY: injected"));
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 4);
  EXPECT_EQ(out.summary.result, "error");
  EXPECT_EQ(out.summary.failed_step, 6);
  EXPECT_EQ(out.steps[6].status, report::StepStatus::kFailed);
  EXPECT_EQ(out.steps[6].error, "cuMemMap: CUDA_ERROR_OUT_OF_MEMORY: injected");
  for (size_t i = 7; i < out.steps.size(); ++i)
    EXPECT_EQ(out.steps[i].status, report::StepStatus::kSkipped) << i;
  EXPECT_EQ(out.summary.skipped, 4);
  // Nothing after the failure reached the engine.
  EXPECT_EQ(engine.calls().back(),
            "Map(va=0x100000000, size=0x200000, offset=0x0, handle=0x2) -> error: "
            "cuMemMap: CUDA_ERROR_OUT_OF_MEMORY: injected");
}

// Collects the records the observer sees, as it sees them.
class RecordingObserver final : public StepObserver {
 public:
  void OnStep(const PlanStep& step, const report::StepRecord& record) override {
    seen.push_back(step.index);
    records.push_back(record);
  }
  std::vector<int> seen;
  std::vector<report::StepRecord> records;
};

std::string Describe(const report::StepRecord& r) {
  std::string text = std::to_string(r.index) + " " + r.name + " " + r.op + " line " +
                     std::to_string(r.line) + " " + report::StepStatusName(r.status) + " [" +
                     r.error + "]";
  for (const auto& [key, value] : r.addresses)
    text += " " + key + "=" + std::get<std::string>(value);
  for (const auto& detail : r.details) text += " " + detail.first;
  return text;
}

TEST(Executor, VmmRecordsAreCompleteWhetherBuiltLiveOrAfterTheRun) {
  Planned p(kRemap);
  ASSERT_EQ(p.errors, "");
  FakeEngine quiet_engine, observed_engine;
  quiet_engine.FailAt("Map", 2, RuntimeError("injected"));
  observed_engine.FailAt("Map", 2, RuntimeError("injected"));
  RunOutcome quiet = RunPlan(p.plan, quiet_engine, nullptr);
  RecordingObserver observer;
  RunOutcome observed = RunPlan(p.plan, observed_engine, &observer);
  ASSERT_EQ(quiet.steps.size(), observed.steps.size());
  for (size_t i = 0; i < quiet.steps.size(); ++i) {
    EXPECT_EQ(Describe(quiet.steps[i]), Describe(observed.steps[i]));
    EXPECT_EQ(Describe(observer.records[i]), Describe(observed.steps[i]));
  }
  EXPECT_EQ(observer.seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(Describe(quiet.steps[1]), "1 create p1 create line 6 ok [] handle=0x1 size_bytes");
  EXPECT_EQ(Describe(quiet.steps[2]),
            "2 first map line 7 ok [] va=0x100000000 offset_bytes size_bytes alloc_offset_bytes");
  EXPECT_EQ(Describe(quiet.steps[3]), "3 unmap A unmap line 8 ok [] waited_for_work wait_us");
  EXPECT_EQ(Describe(quiet.steps[6]), "6 second map line 11 failed [injected]");
  EXPECT_EQ(Describe(quiet.steps[9]), "9 release p2 release line 14 skipped []");
  EXPECT_EQ(quiet.summary.ok, 6);
  EXPECT_EQ(quiet.summary.failed, 1);
  EXPECT_EQ(quiet.summary.skipped, 4);
}

const char* kGraph = R"(version: 1
name: graph
buffers: {A: {shape: [8, 8]}, B: {shape: [8, 8]}, C: {shape: [8, 8]}}
steps:
  - {op: reserve, buffer: A}
  - {op: reserve, buffer: B}
  - {op: reserve, buffer: C}
  - {op: create, alloc: pA, size: 2MiB}
  - {op: create, alloc: pB, size: 2MiB}
  - {op: create, alloc: pC, size: 2MiB}
  - {op: map, buffer: A, alloc: pA}
  - {op: map, buffer: B, alloc: pB}
  - {op: map, buffer: C, alloc: pC}
  - {op: set_access, buffer: A}
  - {op: set_access, buffer: B}
  - {op: set_access, buffer: C}
  - {op: fill, buffer: A, seed: 1}
  - {op: fill, buffer: B, seed: 2}
  - op: capture
    graph: g
    steps:
      - {op: matmul, a: A, b: B, c: C}
  - {op: instantiate, graph: g, exec: e}
  - {op: replay, name: replay, exec: e, repeat: 5}
  - {op: check_matmul, name: product, a: A, b: B, c: C}
  - {op: update, name: update, exec: e, graph: g, expect: success}
)";

TEST(Executor, UpdateVerdictComparesResultCodes) {
  Planned p(kGraph);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  UpdateResult refused;
  refused.code = UpdateCode::kErrorTopologyChanged;
  refused.error_node = "matmul C";
  engine.SetUpdateResult(refused);
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  const report::StepRecord& update = out.steps.back();
  ASSERT_TRUE(update.check.has_value());
  EXPECT_EQ(update.check->expected, "success");
  EXPECT_EQ(update.check->actual, "error_topology_changed at 'matmul C'");
  EXPECT_EQ(update.check->verdict, report::Verdict::kFail);
  EXPECT_EQ(update.status, report::StepStatus::kFailed);
  EXPECT_EQ(out.summary.exit_code, 1);
}

TEST(Executor, RepeatedStepGetsTimingStatistics) {
  Planned p(kGraph);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  const report::StepRecord& replay = out.steps[16];
  ASSERT_EQ(replay.op, "replay");
  ASSERT_TRUE(replay.wall_stats.has_value());
  EXPECT_EQ(replay.wall_stats->count, 5u);
  ASSERT_TRUE(replay.gpu_stats.has_value());
  EXPECT_EQ(replay.gpu_stats->median_us, 1.0);  // the fake reports 1 µs per node
  int replays = 0;
  for (const std::string& call : engine.calls()) replays += call.rfind("Replay(", 0) == 0;
  EXPECT_EQ(replays, 5);
}

TEST(Executor, HostEngineComputesAndVerifiesTheProduct) {
  Planned p(kGraph);
  ASSERT_EQ(p.errors, "");
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine({2u << 20});
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  RunOutcome out = RunPlan(p.plan, **engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 0);
  const report::StepRecord& product = out.steps[17];
  ASSERT_EQ(product.op, "check_matmul");
  ASSERT_TRUE(product.check.has_value());
  EXPECT_EQ(product.check->verdict, report::Verdict::kPass);
  EXPECT_EQ(product.check->mismatch_count, 0u);
}

// With `verify: host`, a backend whose checksum disagrees with the bytes it returns is caught, not
// trusted.
TEST(Executor, HostVerificationCrossChecksTheChecksum) {
  std::string text = kGraph;
  const std::string product = "{op: check_matmul, name: product, a: A, b: B, c: C}";
  text.replace(text.find(product), product.size(),
               "{op: check_matmul, name: product, a: A, b: B, c: C, verify: host}");
  Planned p(text);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  engine.SetChecksum(0x1234);
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 4);
  EXPECT_EQ(out.steps[17].status, report::StepStatus::kFailed);
  EXPECT_NE(out.steps[17].error.find("differs from the hash of the same bytes on the host"),
            std::string::npos)
      << out.steps[17].error;
}

// check_elementwise recomputes every element on the CPU: an axpy result with one element
// changed afterwards fails at that element, with the value the CPU wanted.
TEST(Executor, ElementwiseCheckFindsOneChangedElement) {
  Planned p(R"(version: 1
name: ew
buffers: {A: {shape: [4096]}, B: {shape: [4096]}, C: {shape: [4096]}}
steps:
  - {for: x, in: [A, B, C], steps: [{op: reserve, buffer: "${x}"}, {op: create, alloc: "p${x}", size: 2MiB},
     {op: map, buffer: "${x}", alloc: "p${x}"}, {op: set_access, buffer: "${x}"}]}
  - {op: fill, buffer: A, seed: 1}
  - {op: fill, buffer: B, seed: 2}
  - {op: axpy, a: A, b: B, c: C, alpha: 0.25}
  - {op: check_elementwise, name: right, a: A, b: B, c: C, alpha: 0.25}
  - {op: write_value, buffer: C, offset: 4000, value: 0x3F800000}
  - {op: check_elementwise, name: one changed, a: A, b: B, c: C, alpha: 0.25}
)");
  ASSERT_EQ(p.errors, "");
  StatusOr<std::unique_ptr<Engine>> engine = CreateHostEngine({2u << 20});
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  RunOutcome out = RunPlan(p.plan, **engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 1);
  const report::StepRecord& right = out.steps[out.steps.size() - 3];
  const report::StepRecord& changed = out.steps.back();
  ASSERT_TRUE(right.check.has_value() && changed.check.has_value());
  EXPECT_EQ(right.check->verdict, report::Verdict::kPass);
  EXPECT_EQ(changed.check->verdict, report::Verdict::kFail);
  EXPECT_EQ(changed.check->mismatch_count, 1u);
  ASSERT_EQ(changed.check->mismatches.size(), 1u);
  EXPECT_EQ(changed.check->mismatches[0].index, 1000u);
  EXPECT_EQ(changed.check->mismatches[0].got, "1");
  EXPECT_NE(changed.check->mismatches[0].want, "1");
}

}  // namespace
}  // namespace vmm

namespace vmm {
namespace {

const char* kData = R"(version: 1
name: data
buffers: {A: {shape: [16]}, B: {shape: [16]}}
steps:
  - {op: reserve, buffer: A}
  - {op: reserve, buffer: B}
  - {op: create, alloc: pA, size: 2MiB}
  - {op: create, alloc: pB, size: 2MiB}
  - {op: map, buffer: A, alloc: pA}
  - {op: map, buffer: B, alloc: pB}
  - {op: set_access, buffer: A}
  - {op: set_access, buffer: B}
  - {op: snapshot, buffer: A, snapshot: s}
  - {op: snapshot, buffer: B, snapshot: h, to: host, pinned: false}
  - {op: copy, from: A, to: h}
  - {op: copy, from: h, to: B, async: true}
  - {op: check_equal, name: same, buffer: A, other: B, expect: equal}
  - {op: check_equal, name: kept, buffer: A, snapshot: s}
)";

// The data checks are the engine's: the executor reports the verdict, the count and the first
// mismatches (want, got) it returns, and passes a snapshot's hash so that nothing is re-hashed.
TEST(Executor, DataChecksReportWhatTheEngineFound) {
  Planned p(kData);
  ASSERT_EQ(p.errors, "");
  FakeEngine honest;  // zeros on both sides, no mismatch
  RunOutcome ok = RunPlan(p.plan, honest, nullptr);
  EXPECT_EQ(ok.summary.exit_code, 0);
  EXPECT_EQ(ok.steps[12].check->actual, "equal");
  EXPECT_EQ(ok.steps[13].check->actual, "equal");

  FakeEngine lying;
  DataCompareResult wrong;
  wrong.mismatches = 3;
  wrong.first = {{0, 0x3f800000, 0}, {1, 0x40000000, 0}, {2, 0, 0x3f800000}};
  wrong.hash = 0x11;
  wrong.other_hash = 0x22;
  lying.SetCompareResult(wrong);
  RunOutcome bad = RunPlan(p.plan, lying, nullptr);
  EXPECT_EQ(bad.summary.exit_code, 1);
  const report::StepRecord& same = bad.steps[12];
  ASSERT_TRUE(same.check.has_value());
  EXPECT_EQ(same.check->verdict, report::Verdict::kFail);
  EXPECT_EQ(same.check->mismatch_count, 3u);
  ASSERT_EQ(same.check->mismatches.size(), 3u);
  EXPECT_EQ(same.check->mismatches[1].index, 1u);
  EXPECT_EQ(same.check->mismatches[1].want, "2");
  EXPECT_EQ(same.check->mismatches[1].got, "0");
}

TEST(Executor, SnapshotsLiveWhereTheStepSaysAndCopiesGoAnyWay) {
  Planned p(kData);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  ASSERT_EQ(out.summary.exit_code, 0);
  auto detail = [](const report::StepRecord& r, const std::string& key) -> std::string {
    for (const auto& [k, v] : r.details) {
      if (k != key) continue;
      if (const auto* text = std::get_if<std::string>(&v)) return *text;
      if (const auto* flag = std::get_if<bool>(&v)) return *flag ? "true" : "false";
      return "<number>";
    }
    return "<none>";
  };
  uint64_t zeros_hash = 0;  // the fake engine's memory is zeros
  for (uint64_t i = 0; i < 16; ++i) zeros_hash += datagen::HashWord(0, i);
  const std::string zeros = Hex(zeros_hash);
  EXPECT_EQ(detail(out.steps[8], "to"), "device");
  EXPECT_EQ(detail(out.steps[8], "direction"), "device_to_device");
  EXPECT_EQ(detail(out.steps[8], "data_hash"), zeros);
  EXPECT_EQ(detail(out.steps[9], "to"), "host");
  EXPECT_EQ(detail(out.steps[9], "staging"), "pageable");
  EXPECT_EQ(detail(out.steps[10], "direction"), "device_to_host");
  EXPECT_EQ(detail(out.steps[10], "data_hash"), zeros);  // the snapshot's new contents
  EXPECT_EQ(detail(out.steps[11], "direction"), "host_to_device");
  EXPECT_EQ(detail(out.steps[11], "async"), "true");
  EXPECT_EQ(detail(out.steps[11], "gb_per_s"), "<none>");  // not waited for, not timed
  EXPECT_EQ(detail(out.steps[13], "other_hash"), zeros);   // the snapshot's, as taken
  const std::vector<std::string>& calls = engine.calls();
  auto called = [&](const std::string& prefix) {
    for (const std::string& c : calls)
      if (c.rfind(prefix, 0) == 0) return true;
    return false;
  };
  EXPECT_TRUE(called("AllocSnapshot(bytes=0x40, place=device)"));
  EXPECT_TRUE(called("AllocSnapshot(bytes=0x40, place=host_pageable)"));
  EXPECT_TRUE(called("CompareData(a=0x100000000, b=0x700000000000 device, count=16"));
}

// A reserve's expect_address is judged in its burst: a failing verdict fails that step (never
// fatal), the run goes on and ends with exit 1.
TEST(Executor, AReserveHintVerdictFailsItsStepAndTheRunGoesOn) {
  Planned p(R"(name: hints
buffers: {A: {shape: [64]}, B: {shape: [64]}}
steps:
  - {op: reserve, buffer: A}
  - {op: reserve, name: on A, buffer: B, address: {at: A}, expect_address: honoured}
  - {op: free, buffer: B}
  - {op: free, buffer: A}
)");
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> engine = std::move(CreateHostEngine({2 << 20})).value();
  RunOutcome out = RunPlan(p.plan, *engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 1);
  EXPECT_EQ(out.summary.checks_failed, 1);
  ASSERT_EQ(out.steps.size(), 4u);
  EXPECT_EQ(out.steps[1].status, report::StepStatus::kFailed);
  EXPECT_EQ(out.steps[1].check->expected, "honoured");
  EXPECT_EQ(out.steps[1].check->actual, "moved");
  EXPECT_EQ(out.steps[3].status, report::StepStatus::kOk) << "the run went on";
}

// A create's record: a plain one is its handle and size alone (the executor then reads nothing
// more); one with a location, a granularity rule or a read-back adds what it asked and was granted.
TEST(Executor, CreateRecordsCarryWhatTheCreateAskedAndWasGranted) {
  Planned p(R"(
name: creates
buffers: {A: {shape: [64]}}
steps:
  - {op: create, alloc: d, size: 2MiB}
  - {op: create, alloc: h, size: 2MiB, location: host, granularity: minimum}
  - {op: create, alloc: n, size: 2MiB, location: host_numa, numa_node: 0}
  - {op: release, alloc: d}
  - {op: release, alloc: h}
  - {op: release, alloc: n}
)");
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> engine = std::move(CreateHostEngine({2 << 20})).value();
  RunOutcome out = RunPlan(p.plan, *engine, nullptr);
  ASSERT_EQ(out.summary.exit_code, 0) << (out.steps.empty() ? "" : out.steps.back().error);
  auto keys = [](const report::StepRecord& r) {
    std::vector<std::string> k;
    for (const auto& [key, value] : r.details) k.push_back(key.str());
    return k;
  };
  EXPECT_EQ(keys(out.steps[0]), std::vector<std::string>{"size_bytes"});
  EXPECT_EQ(keys(out.steps[1]), (std::vector<std::string>{
                                    "size_bytes", "location", "granularity_bytes",
                                    "granted_location", "granted_numa_node", "granted_compression",
                                    "granted_gpudirect_rdma", "granted_handle_types"}));
  EXPECT_EQ(keys(out.steps[2]),
            (std::vector<std::string>{"size_bytes", "location", "granted_location",
                                      "granted_numa_node", "granted_compression",
                                      "granted_gpudirect_rdma", "granted_handle_types"}));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(out.steps[i].addresses.size(), 1u) << i;
  EXPECT_EQ(std::get<std::string>(out.steps[1].details[1].second), "host");
}

// The host twin's accounting is exact, so check_memory's verdicts are too.
TEST(Executor, CheckMemoryJudgesTheChangeSinceItsMark) {
  Planned p(R"(name: memory
steps:
  - {op: mark, name: start}
  - {op: create, alloc: p, size: 4MiB}
  - {op: check_memory, name: used, since: start, used: {about: 4MiB}}
  - {op: check_memory, name: not freed, since: start, freed: {at_least: 0}}
  - {op: release, alloc: p}
  - {op: check_memory, name: back, since: start, used: {at_most: 0}}
)");
  ASSERT_EQ(p.errors, "");
  std::unique_ptr<Engine> engine = std::move(CreateHostEngine({2 << 20})).value();
  RunOutcome out = RunPlan(p.plan, *engine, nullptr);
  EXPECT_EQ(out.summary.checks_passed, 2);
  EXPECT_EQ(out.summary.checks_failed, 1);
  EXPECT_EQ(out.steps[2].check->actual, "used 4 MiB");
  EXPECT_EQ(out.steps[3].check->expected, "freed at least 0 B");
  EXPECT_EQ(out.steps[3].check->actual, "freed -4 MiB");
  EXPECT_EQ(out.steps[3].check->verdict, report::Verdict::kFail);
  EXPECT_EQ(out.steps[5].check->verdict, report::Verdict::kPass);
}

}  // namespace
}  // namespace vmm

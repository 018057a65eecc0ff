// Executor tests for stopping early: stop requests (signals) at step boundaries and vmm-run
// running out of memory inside a step.
#include <gtest/gtest.h>
#include <signal.h>

#include <functional>
#include <new>
#include <string>
#include <vector>

#include "kernels/graph_kernels.h"
#include "runner/base/stop_signal.h"
#include "runner/engine/fake_engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/planned_test_util.h"
#include "runner/scenario/parse.h"

namespace vmm {
namespace {

const char* kFill = R"(version: 1
name: fill
buffers: {A: {shape: [64]}}
steps:
  - {op: reserve, buffer: A}
  - {op: create, alloc: p, size: 2MiB}
  - {op: map, buffer: A, alloc: p}
  - {op: set_access, buffer: A}
  - {op: fill, name: many, buffer: A, seed: 1, repeat: 1000}
  - {op: fill, name: once, buffer: A, seed: 2}
  - {op: unmap, buffer: A}
  - {op: release, alloc: p}
  - {op: free, buffer: A}
)";

// Requests a stop (as the signal handler does) when step `at` has been recorded.
class StopAfter final : public StepObserver {
 public:
  StopAfter(int at, int signal_number) : at_(at), signal_(signal_number) {}
  void OnStep(const PlanStep& step, const report::StepRecord&) override {
    if (step.index == at_) RequestStop(signal_);
  }

 private:
  int at_, signal_;
};

class ExecutorStopTest : public ::testing::Test {
 protected:
  void SetUp() override { ClearStopRequest(); }
  void TearDown() override { ClearStopRequest(); }
};

TEST_F(ExecutorStopTest, StopsAtTheNextStepBoundaryAndSkipsTheRest) {
  Planned p(kFill);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  StopAfter stop(2, SIGTERM);
  RunOutcome out = RunPlan(p.plan, engine, &stop);
  EXPECT_TRUE(out.summary.interrupted);
  EXPECT_EQ(out.summary.signal, SIGTERM);
  EXPECT_EQ(out.summary.stopped_at_step, 3);
  EXPECT_EQ(out.summary.exit_code, 143);
  EXPECT_EQ(out.summary.result, "interrupted");
  ASSERT_EQ(out.steps.size(), 9u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out.steps[i].status, report::StepStatus::kOk) << i;
  for (int i = 3; i < 9; ++i) EXPECT_EQ(out.steps[i].status, report::StepStatus::kSkipped) << i;
  EXPECT_EQ(out.summary.skipped, 6);
  EXPECT_EQ(out.summary.failed_step, -1);
  EXPECT_EQ(engine.calls().size(), 3u);  // reserve, create, map: nothing after the stop
}

TEST_F(ExecutorStopTest, AStopBeforeTheRunSkipsEveryStep) {
  Planned p(kFill);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  RequestStop(SIGINT);
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 130);
  EXPECT_EQ(out.summary.stopped_at_step, 0);
  EXPECT_EQ(out.summary.skipped, 9);
  EXPECT_TRUE(engine.calls().empty());
}

TEST_F(ExecutorStopTest, AStopDuringTheLastStepStillMarksTheRunInterrupted) {
  Planned p(kFill);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  StopAfter stop(8, SIGINT);
  RunOutcome out = RunPlan(p.plan, engine, &stop);
  EXPECT_TRUE(out.summary.interrupted);
  EXPECT_EQ(out.summary.stopped_at_step, 9);
  EXPECT_EQ(out.summary.skipped, 0);
  EXPECT_EQ(out.summary.exit_code, 130);
}

// FakeEngine, except that every fill kernel first calls `on_fill` (which may throw).
class HookedEngine final : public Engine {
 public:
  const DeviceInfo& info() const override { return fake.info(); }
  Status Reserve(uint64_t s, uint64_t a, DevicePtr hint, DevicePtr* va) override {
    return fake.Reserve(s, a, hint, va);
  }
  Status Free(DevicePtr va, uint64_t s) override { return fake.Free(va, s); }
  Status Create(const AllocProps& p, AllocHandle* h) override { return fake.Create(p, h); }
  Status Release(AllocHandle h, SyncNote* n) override { return fake.Release(h, n); }
  Status Map(DevicePtr va, uint64_t s, uint64_t o, AllocHandle h) override {
    return fake.Map(va, s, o, h);
  }
  Status SetAccess(DevicePtr va, uint64_t s, std::span<const DeviceAccess> a,
                   SyncNote* n) override {
    return fake.SetAccess(va, s, a, n);
  }
  Status Unmap(DevicePtr va, uint64_t s, SyncNote* n) override { return fake.Unmap(va, s, n); }
  Status LaunchKernel(const KernelNodeParams& p, OpTiming* t) override {
    if (p.function == kernels::kGraphKernels[kernels::row::vmm_fill_f32].name) on_fill();
    return fake.LaunchKernel(p, t);
  }
  Status BeginCapture() override { return fake.BeginCapture(); }
  Status EndCapture(GraphHandle* g) override { return fake.EndCapture(g); }
  Status CaptureLane(int lane) override { return fake.CaptureLane(lane); }
  Status NameCapturedNode(const std::string& n) override { return fake.NameCapturedNode(n); }
  Status DescribeGraph(GraphHandle g, GraphStructure* o) override {
    return fake.DescribeGraph(g, o);
  }
  Status InstantiateWith(GraphHandle g, const InstantiateOptions& o, ExecHandle* e,
                         InstantiateInfo* i) override {
    return fake.InstantiateWith(g, o, e, i);
  }
  Status Replay(ExecHandle e, OpTiming* t) override { return fake.Replay(e, t); }
  Status Update(ExecHandle e, GraphHandle g, UpdateResult* r) override {
    return fake.Update(e, g, r);
  }
  Status KernelNodes(GraphHandle g, std::vector<KernelNodeParams>* o) override {
    return fake.KernelNodes(g, o);
  }
  Status DestroyGraph(GraphHandle g) override { return fake.DestroyGraph(g); }
  Status DestroyExec(ExecHandle e) override { return fake.DestroyExec(e); }
  Status CopyToHost(DevicePtr s, uint64_t b, void* d) override { return fake.CopyToHost(s, b, d); }
  Status Checksum(DevicePtr s, uint64_t c, uint64_t* h) override { return fake.Checksum(s, c, h); }
  Status AllocSnapshot(uint64_t b, DataPlace p, SnapshotHandle* o) override {
    return fake.AllocSnapshot(b, p, o);
  }
  Status Copy(DataRef d, DataRef s, uint64_t b, OpTiming* t) override {
    return fake.Copy(d, s, b, t);
  }
  Status CompareData(DevicePtr a, DataRef b, uint64_t c, const CompareOptions& o,
                     DataCompareResult* r) override {
    return fake.CompareData(a, b, c, o, r);
  }
  Status CompareValue(DevicePtr a, uint32_t p, uint64_t c, uint32_t m,
                      DataCompareResult* r) override {
    return fake.CompareValue(a, p, c, m, r);
  }
  Status CheckMatmul(const MatmulArgs& a, uint32_t m, MatmulCheckResult* r) override {
    return fake.CheckMatmul(a, m, r);
  }
  Status Synchronize() override { return fake.Synchronize(); }

  FakeEngine fake;
  std::function<void()> on_fill = [] {};
};

// A stop during a repeated step ends its repetitions; the step keeps the statistics of those that
// ran and the next step is the first one skipped.
TEST_F(ExecutorStopTest, AStopEndsTheRepetitionsOfARepeatedStep) {
  Planned p(kFill);
  ASSERT_EQ(p.errors, "");
  HookedEngine engine;
  int fills = 0;
  engine.on_fill = [&] {
    if (++fills == 10) RequestStop(SIGHUP);
  };
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(fills, 10);
  EXPECT_EQ(out.summary.stopped_at_step, 5);
  EXPECT_EQ(out.summary.exit_code, 129);
  EXPECT_EQ(out.steps[4].status, report::StepStatus::kOk);
  ASSERT_TRUE(out.steps[4].wall_stats.has_value());
  EXPECT_EQ(out.steps[4].wall_stats->count, 10u);
  EXPECT_EQ(out.steps[5].status, report::StepStatus::kSkipped);
}

TEST_F(ExecutorStopTest, OutOfMemoryInAStepIsAStepFailure) {
  Planned p(kFill);
  ASSERT_EQ(p.errors, "");
  HookedEngine engine;
  engine.on_fill = [] { throw std::bad_alloc(); };
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 4);
  EXPECT_EQ(out.summary.result, "error");
  EXPECT_EQ(out.summary.failed_step, 4);
  EXPECT_EQ(out.steps[4].status, report::StepStatus::kFailed);
  EXPECT_EQ(out.steps[4].error, "vmm-run ran out of memory while running this step");
  for (size_t i = 5; i < out.steps.size(); ++i)
    EXPECT_EQ(out.steps[i].status, report::StepStatus::kSkipped) << i;
  EXPECT_FALSE(out.summary.interrupted);
}

}  // namespace
}  // namespace vmm

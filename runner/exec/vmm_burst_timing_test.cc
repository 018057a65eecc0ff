// The burst's per-step wall times (RunVmmSteps): counter ticks per step, the burst's steady_clock
// time shared out in proportion. What must hold: a slow call's step gets its time, the fast ones
// stay small, and the steps add up to the burst's real time (never more than the run took).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runner/engine/engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/planned_test_util.h"

namespace vmm {
namespace {

constexpr uint64_t kPage = 2ull << 20;

// VMM calls that succeed at once, except Map, which takes `map_delay` and then fails when
// `map_fails`.
class SlowMapEngine final : public Engine {
 public:
  SlowMapEngine() {
    info_.backend = "test";
    info_.granularity_min = info_.granularity_recommended = kPage;
  }
  const DeviceInfo& info() const override { return info_; }
  Status Reserve(uint64_t, uint64_t, DevicePtr, DevicePtr* va) override {
    *va = 0x100000000;
    return Status::Ok();
  }
  Status Free(DevicePtr, uint64_t) override { return Status::Ok(); }
  Status Create(const AllocProps&, AllocHandle* out) override {
    out->value = 1;
    return Status::Ok();
  }
  Status Release(AllocHandle, SyncNote*) override { return Status::Ok(); }
  Status Map(DevicePtr, uint64_t, uint64_t, AllocHandle) override {
    std::this_thread::sleep_for(map_delay);
    return map_fails ? RuntimeError("Map: refused by the test") : Status::Ok();
  }
  Status SetAccess(DevicePtr, uint64_t, std::span<const DeviceAccess>, SyncNote*) override {
    return Status::Ok();
  }
  Status Unmap(DevicePtr, uint64_t, SyncNote*) override { return Status::Ok(); }

  std::chrono::milliseconds map_delay{20};
  bool map_fails = false;

 private:
  DeviceInfo info_;
};

// The fast steps' bound is loose (10 ms against calls that return at once) so that a loaded
// machine (ctest -j) does not fail it; the slow step's 20 ms is a floor that cannot be beaten.
TEST(VmmBurstTimingTest, TheSlowCallGetsItsTimeAndTheStepsAddUp) {
  Planned p(PageCycleScenario(1));
  ASSERT_EQ(p.errors, "");
  SlowMapEngine engine;
  const auto start = std::chrono::steady_clock::now();
  RunOutcome out = RunPlan(p.plan, engine, nullptr);  // no observer: one burst of seven steps
  const double run_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(out.summary.exit_code, 0);
  ASSERT_EQ(out.steps.size(), 7u);
  double sum = 0;
  for (const report::StepRecord& r : out.steps) {
    EXPECT_GE(r.wall_us, 0) << r.name;
    sum += r.wall_us;
  }
  EXPECT_GE(out.steps[2].wall_us, 20000) << "map slept 20 ms";
  for (size_t i : {0, 1, 3, 4, 5, 6}) EXPECT_LT(out.steps[i].wall_us, 10000) << out.steps[i].name;
  EXPECT_LE(sum, run_us);
  EXPECT_GE(sum, 20000);
}

// A burst longer than a chunk (its times are shared out chunk by chunk, 32 steps each) and long
// enough to have its records built aside: every map still gets its own time, the other steps stay
// small, and the steps add up to the burst's time.
TEST(VmmBurstTimingTest, ALongBurstsStepsKeepTheirTimesChunkByChunk) {
  constexpr int kCycles = 70;  // 352 steps: 11 chunks
  Planned p(PageCycleScenario(kCycles));
  ASSERT_EQ(p.errors, "");
  SlowMapEngine engine;
  engine.map_delay = std::chrono::milliseconds(1);
  const auto start = std::chrono::steady_clock::now();
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  const double run_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(out.summary.exit_code, 0);
  ASSERT_EQ(out.steps.size(), p.plan.steps.size());
  double sum = 0;
  for (const report::StepRecord& r : out.steps) {
    if (r.op == "map") {
      EXPECT_GE(r.wall_us, 1000) << r.index << ": map slept 1 ms";
    } else {
      EXPECT_LT(r.wall_us, 1000) << r.index << " " << r.name;
    }
    EXPECT_GE(r.wall_us, 0) << r.index;
    sum += r.wall_us;
  }
  EXPECT_LE(sum, run_us);
  EXPECT_GE(sum, kCycles * 1000.0);
}

// A failed call ends the burst: the failed step still gets its time, the steps before it theirs,
// and the steps after it none (they are skipped).
TEST(VmmBurstTimingTest, TheFailedStepGetsItsTime) {
  Planned p(PageCycleScenario(1));
  ASSERT_EQ(p.errors, "");
  SlowMapEngine engine;
  engine.map_fails = true;
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 4);
  ASSERT_EQ(out.steps.size(), 7u);
  EXPECT_EQ(out.steps[2].status, report::StepStatus::kFailed);
  EXPECT_GE(out.steps[2].wall_us, 20000) << "map slept 20 ms before it failed";
  for (size_t i : {0, 1}) EXPECT_LT(out.steps[i].wall_us, 10000) << out.steps[i].name;
  for (size_t i = 3; i < 7; ++i) {
    EXPECT_EQ(out.steps[i].status, report::StepStatus::kSkipped) << i;
    EXPECT_EQ(out.steps[i].wall_us, 0) << i;
  }
}

}  // namespace
}  // namespace vmm

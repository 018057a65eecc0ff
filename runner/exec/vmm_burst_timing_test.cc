// The burst's per-step wall times (RunVmmSteps): counter ticks per step, the burst's steady_clock
// time shared out in proportion. What must hold: a slow call's step gets its time, the fast ones
// stay small, and the steps add up to the burst's real time (never more than the run took).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runner/engine/engine.h"
#include "runner/exec/executor.h"
#include "runner/exec/planned_test_util.h"

namespace vmm {
namespace {

constexpr uint64_t kPage = 2ull << 20;

// VMM calls that succeed at once, except Map, which takes `map_delay`.
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
    return Status::Ok();
  }
  Status SetAccess(DevicePtr, uint64_t, std::span<const DeviceAccess>) override {
    return Status::Ok();
  }
  Status Unmap(DevicePtr, uint64_t, SyncNote*) override { return Status::Ok(); }

  std::chrono::milliseconds map_delay{20};

 private:
  DeviceInfo info_;
};

TEST(VmmBurstTimingTest, TheSlowCallGetsItsTimeAndTheStepsAddUp) {
  Planned p(
      "name: t\ngranularity: 2MiB\nbuffers: {A: {shape: [1024]}}\nsteps:\n"
      "  - {op: reserve, buffer: A, size: 2MiB}\n"
      "  - {op: create, alloc: p, size: 2MiB}\n"
      "  - {op: map, buffer: A, alloc: p}\n"
      "  - {op: set_access, buffer: A}\n"
      "  - {op: unmap, buffer: A}\n"
      "  - {op: release, alloc: p}\n"
      "  - {op: free, buffer: A}\n");
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
  for (size_t i : {0, 1, 3, 4, 5, 6}) EXPECT_LT(out.steps[i].wall_us, 5000) << out.steps[i].name;
  EXPECT_LE(sum, run_us);
  EXPECT_GE(sum, 20000);
}

}  // namespace
}  // namespace vmm

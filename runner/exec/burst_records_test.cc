// Records of a long burst built on the BackgroundThread (burst_records.h) against the same records
// built on the run's own thread, one step at a time: the same records, in the same order, with the
// same summary, whether the burst ends or fails part-way.
#include "runner/exec/burst_records.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/base/background_thread.h"
#include "runner/engine/fake_engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/planned_test_util.h"
#include "runner/report/report.h"

namespace vmm {
namespace {

// Everything of a record but its times (wall_us, wait_us).
std::string Describe(const report::StepRecord& r) {
  std::string text = std::to_string(r.index) + " " + r.name + " " + r.op + " " +
                     report::StepStatusName(r.status) + " [" + r.error + "]";
  for (const auto& [key, value] : r.addresses) text += " " + key + "=" + report::ScalarText(value);
  for (const auto& [key, value] : r.details)
    text += " " + key + (key == "wait_us" ? "" : "=" + report::ScalarText(value));
  return text;
}

// Runs `plan` twice on fresh fake engines (the nth Map failing when `fail_map` > 0): once with the
// BackgroundThread held here, so the run builds every record itself, and once with it free.
void ExpectTheSameRecords(const Plan& plan, int fail_map) {
  FakeEngine here_engine, aside_engine;
  if (fail_map > 0) {
    here_engine.FailAt("Map", fail_map, RuntimeError("injected"));
    aside_engine.FailAt("Map", fail_map, RuntimeError("injected"));
  }
  BackgroundThread* held = BackgroundThread::TryAcquire();
  ASSERT_NE(held, nullptr) << "nothing else in this test process holds it";
  const uint64_t aside_before = BurstsRecordedAside();
  RunOutcome here = RunPlan(plan, here_engine, nullptr);
  EXPECT_EQ(BurstsRecordedAside(), aside_before) << "the thread was held: built on the run's";
  held->Wait();  // gives it back
  RunOutcome aside = RunPlan(plan, aside_engine, nullptr);
  EXPECT_EQ(BurstsRecordedAside(), aside_before + 1);

  ASSERT_EQ(here.steps.size(), plan.steps.size());
  ASSERT_EQ(aside.steps.size(), here.steps.size());
  for (size_t i = 0; i < here.steps.size(); ++i) {
    ASSERT_EQ(Describe(aside.steps[i]), Describe(here.steps[i])) << "step " << i;
    EXPECT_GE(aside.steps[i].wall_us, 0) << i;
  }
  EXPECT_EQ(aside.summary.steps, here.summary.steps);
  EXPECT_EQ(aside.summary.ok, here.summary.ok);
  EXPECT_EQ(aside.summary.failed, here.summary.failed);
  EXPECT_EQ(aside.summary.skipped, here.summary.skipped);
  EXPECT_EQ(aside.summary.failed_step, here.summary.failed_step);
  EXPECT_EQ(aside.summary.exit_code, here.summary.exit_code);
}

TEST(BurstRecords, ALongBurstHasTheRecordsItsOwnThreadWouldBuild) {
  Planned p(PageCycleScenario(200));
  ASSERT_EQ(p.errors, "");
  ASSERT_GE(p.plan.steps.size(), kRecordAsideMinSteps);
  ExpectTheSameRecords(p.plan, 0);
}

// Map 150 fails at step 747: the BackgroundThread has built records by then (it is woken every
// 128 steps), the run's thread builds the failed step's, and every later step is skipped.
TEST(BurstRecords, ABurstThatFailsPartWayHasTheSameRecordsAndSummary) {
  Planned p(PageCycleScenario(200));
  ASSERT_EQ(p.errors, "");
  ExpectTheSameRecords(p.plan, 150);
}

// Map 1 fails: the burst ends before a single chunk was published.
TEST(BurstRecords, ABurstThatFailsAtOnceHasTheSameRecordsAndSummary) {
  Planned p(PageCycleScenario(200));
  ASSERT_EQ(p.errors, "");
  ExpectTheSameRecords(p.plan, 1);
}

TEST(BackgroundThread, OneHolderAtATimeAndTheJobsWritesAreSeenAfterWait) {
  BackgroundThread* first = BackgroundThread::TryAcquire();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(BackgroundThread::TryAcquire(), nullptr) << "held";
  std::vector<int> written;
  for (int job = 0; job < 3; ++job) {
    if (job > 0) {
      ASSERT_EQ(BackgroundThread::TryAcquire(), first) << "the process has one";
    }
    first->Run([&written, job] { written.push_back(job); });
    first->Wait();
  }
  EXPECT_EQ(written, (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace vmm

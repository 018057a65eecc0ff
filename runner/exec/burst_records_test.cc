// Records of a long burst built on the BackgroundThread (burst_records.h), its later steps compiled
// there too, against the same records built on the run's own thread, one step at a time: the same
// records, in the same order, with the same summary, whether the burst ends or fails part-way,
// wherever another step cuts a burst short.
#include "runner/exec/burst_records.h"

#include <gtest/gtest.h>

#include <cstdint>
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

// Sees every step as it ends; a run with one runs every step alone (no burst).
class StepByStep final : public StepObserver {
 public:
  void OnStep(const PlanStep&, const report::StepRecord&) override {}
};

// The same records, but for their times, and the same summary.
void ExpectTheSame(const RunOutcome& run, const RunOutcome& reference, const char* which) {
  SCOPED_TRACE(which);
  ASSERT_EQ(run.steps.size(), reference.steps.size());
  for (size_t i = 0; i < reference.steps.size(); ++i) {
    ASSERT_EQ(Describe(run.steps[i]), Describe(reference.steps[i])) << "step " << i;
    EXPECT_GE(run.steps[i].wall_us, 0) << i;
  }
  EXPECT_EQ(run.summary.steps, reference.summary.steps);
  EXPECT_EQ(run.summary.ok, reference.summary.ok);
  EXPECT_EQ(run.summary.failed, reference.summary.failed);
  EXPECT_EQ(run.summary.skipped, reference.summary.skipped);
  EXPECT_EQ(run.summary.failed_step, reference.summary.failed_step);
  EXPECT_EQ(run.summary.exit_code, reference.summary.exit_code);
}

// Runs `plan` three times on fresh fake engines (the nth Map failing when `fail_map` > 0): the
// reference with an observer, so every step runs alone (compiled, called and recorded before the
// next); then in bursts with the BackgroundThread held here, so the run compiles every burst and
// builds every record itself; then with it free, when `aside_bursts` bursts should have their
// records built there, `ahead_bursts` of them with their later steps compiled there too.
void ExpectTheSameRecords(const Plan& plan, int fail_map, uint64_t aside_bursts = 1,
                          uint64_t ahead_bursts = 1) {
  FakeEngine alone_engine, here_engine, aside_engine;
  if (fail_map > 0) {
    for (FakeEngine* engine : {&alone_engine, &here_engine, &aside_engine})
      engine->FailAt("Map", fail_map, RuntimeError("injected"));
  }
  StepByStep observer;
  const RunOutcome alone = RunPlan(plan, alone_engine, &observer);
  ASSERT_EQ(alone.steps.size(), plan.steps.size());
  BackgroundThread* held = BackgroundThread::TryAcquire();
  ASSERT_NE(held, nullptr) << "nothing else in this test process holds it";
  const uint64_t aside_before = BurstsRecordedAside(), ahead_before = BurstsCompiledAhead();
  const RunOutcome here = RunPlan(plan, here_engine, nullptr);
  EXPECT_EQ(BurstsRecordedAside(), aside_before) << "the thread was held: built on the run's";
  EXPECT_EQ(BurstsCompiledAhead(), ahead_before);
  held->Wait();  // gives it back
  const RunOutcome aside = RunPlan(plan, aside_engine, nullptr);
  EXPECT_EQ(BurstsRecordedAside(), aside_before + aside_bursts);
  EXPECT_EQ(BurstsCompiledAhead(), ahead_before + ahead_bursts);
  ExpectTheSame(here, alone, "bursts, all on the run's thread");
  ExpectTheSame(aside, alone, "bursts, helped by the background thread");
  EXPECT_EQ(aside_engine.calls(), alone_engine.calls()) << "the same calls, in the same order";
}

TEST(BurstRecords, ALongBurstHasTheRecordsItsOwnThreadWouldBuild) {
  Planned p(PageCycleScenario(200));
  ASSERT_EQ(p.errors, "");
  ASSERT_GE(p.plan.steps.size(), kRecordAsideMinSteps);
  ExpectTheSameRecords(p.plan, 0);
}

// Map 150 fails at step 747: the BackgroundThread has compiled the whole burst and built records
// by then, the run's thread builds the failed step's, and every later step is skipped.
TEST(BurstRecords, ABurstThatFailsPartWayHasTheSameRecordsAndSummary) {
  Planned p(PageCycleScenario(200));
  ASSERT_EQ(p.errors, "");
  ExpectTheSameRecords(p.plan, 150);
}

// Map 1 fails: the burst ends before a single chunk was published, while the BackgroundThread may
// still be compiling (it stops there).
TEST(BurstRecords, ABurstThatFailsAtOnceHasTheSameRecordsAndSummary) {
  Planned p(PageCycleScenario(200));
  ASSERT_EQ(p.errors, "");
  ExpectTheSameRecords(p.plan, 1);
}

// A burst of exactly kRecordAsideMinSteps (the reserve and 51 cycles: its compile ahead finds the
// end at once), one of 400 cut short by a synchronize, one of 5 (built on the run's thread) and one
// that runs to the plan's end: each ends where the plan says, aside or not.
TEST(BurstRecords, BurstsCutShortByOtherStepsEndWhereThePlanSays) {
  static_assert(kRecordAsideMinSteps == 256, "the first run is the reserve and 51 cycles");
  Planned p(PageCycleRuns({51, 80, 1, 60}));
  ASSERT_EQ(p.errors, "");
  ExpectTheSameRecords(p.plan, 0, 3, 3);
  ExpectTheSameRecords(p.plan, 60, 2, 2);  // map 60 fails in the second run: the rest skipped
}

// A create that reads back its granularity is not bare: the plan's long bursts are compiled on the
// run's thread before their calls; the bare ones among them still have their records built aside.
// (The fake engine refuses that create, the plan's last step, in both runs.)
TEST(BurstRecords, APlanWithACreateThatIsNotBareCompilesItsBurstsBeforeTheirCalls) {
  Planned p(PageCycleRuns({60, 60},
                          "  - {op: synchronize}\n"
                          "  - {op: create, alloc: q, size: 2MiB, granularity: minimum}\n"));
  ASSERT_EQ(p.errors, "");
  ExpectTheSameRecords(p.plan, 0, 2, 0);
}

TEST(BurstProgress, AwaitCompiledReturnsTheCountOnceItPassesTheStepOrTheStepWhenTheBurstEnded) {
  BurstProgress compiled_before(10);  // all 10 compiled before the first call
  EXPECT_EQ(compiled_before.AwaitCompiled(10), 10u) << "no step 10";
  BurstProgress streamed(4, false);
  streamed.PublishCompiled(40, false);
  EXPECT_EQ(streamed.AwaitCompiled(4), 40u);
  streamed.PublishCompiled(41, true);
  EXPECT_EQ(streamed.AwaitCompiled(40), 41u);
  EXPECT_EQ(streamed.AwaitCompiled(41), 41u) << "ended at 41 steps";
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

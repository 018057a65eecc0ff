// Executor tests for blocks run elsewhere: isolate blocks and together groups go to the
// BlockRunner (here a scripted one), with their verdicts and timings; without a runner they fail
// and say why.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/engine/fake_engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/planned_test_util.h"

namespace vmm {
namespace {

const char* kBlock = R"(name: blocks
buffers: {A: {shape: [1024]}}
steps:
  - isolate: {expect: ok}
    name: blk
    steps: [{op: synchronize}]
  - {op: synchronize, name: after}
)";

// A BlockRunner that records what it was handed and answers with a fixed verdict.
class ScriptedBlocks final : public BlockRunner {
 public:
  Status RunBlock(const PlanStep& step, const BlockFds& fds, report::StepRecord& record) override {
    seen.push_back(step.label);
    fd_count += fds.size();
    record.check = report::CheckRecord{"ok", "exit 4", report::Verdict::kFail, 0, {}};
    return Status::Ok();
  }
  // Each block of the group passes except the one named "bad"; the children "overlap" as given.
  Status RunGroup(const PlanStep& group, const BlockFds& fds,
                  std::vector<report::StepRecord>& records) override {
    groups.push_back(group.label);
    fd_count += fds.size();
    for (size_t i = 0; i < records.size(); ++i) {
      const bool bad = group.body[i].label == "bad";
      records[i].check = report::CheckRecord{"ok",
                                             bad ? "exit 4" : "ok",
                                             bad ? report::Verdict::kFail : report::Verdict::kPass,
                                             0,
                                             {}};
      report::ChildRecord c;
      c.ready_ms = 10.0 * static_cast<double>(i);
      c.ended_ms = ended_ms + static_cast<double>(i);
      records[i].child = c;
    }
    return Status::Ok();
  }
  std::vector<std::string> seen, groups;
  double ended_ms = 100;
  size_t fd_count = 0;
};

TEST(Executor, IsolateBlocksGoToTheBlockRunner) {
  Planned p(kBlock);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  ScriptedBlocks blocks;
  RunOutcome out = RunPlan(p.plan, engine, nullptr, &blocks);
  EXPECT_EQ(blocks.seen, std::vector<std::string>{"blk"});
  EXPECT_EQ(blocks.fd_count, 0u);
  ASSERT_EQ(out.steps.size(), 2u);
  EXPECT_EQ(out.steps[0].op, "isolate");
  EXPECT_EQ(out.steps[0].status, report::StepStatus::kFailed);  // the verdict failed
  EXPECT_EQ(out.steps[1].status, report::StepStatus::kOk);      // and the run went on
  EXPECT_EQ(out.summary.exit_code, 1);
  EXPECT_EQ(out.summary.checks_failed, 1);
}

TEST(Executor, AnIsolateBlockWithoutABlockRunnerFailsAndSaysWhy) {
  Planned p(kBlock);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 4);
  EXPECT_EQ(out.steps[0].error,
            "this run cannot start child processes, so it cannot run an isolate block (vmm-run "
            "run can)");
  EXPECT_EQ(out.steps[1].status, report::StepStatus::kSkipped);
}

const char* kGroup = R"(name: group
buffers: {A: {shape: [1024]}}
steps:
  - together:
      - isolate: {expect: ok}
        name: good
        steps: [{op: synchronize}]
      - isolate: {expect: ok}
        name: bad
        steps: [{op: synchronize}]
    name: both
  - {op: synchronize, name: after}
)";

// The group's blocks are judged one by one: each verdict counts as a check, the group fails when
// one does, the run goes on; the group records how the children overlapped.
TEST(Executor, ATogetherGroupGoesToTheBlockRunnerWithOneRecordPerBlock) {
  Planned p(kGroup);
  ASSERT_EQ(p.errors, "");
  FakeEngine engine;
  ScriptedBlocks blocks;
  RunOutcome out = RunPlan(p.plan, engine, nullptr, &blocks);
  EXPECT_EQ(blocks.groups, std::vector<std::string>{"both"});
  EXPECT_TRUE(blocks.seen.empty());
  ASSERT_EQ(out.steps.size(), 2u);
  const report::StepRecord& group = out.steps[0];
  EXPECT_EQ(group.op, "together");
  EXPECT_EQ(group.status, report::StepStatus::kFailed);
  ASSERT_EQ(group.body.size(), 2u);
  EXPECT_EQ(group.body[0].name, "good");
  EXPECT_EQ(group.body[0].op, "isolate");
  EXPECT_EQ(group.body[0].status, report::StepStatus::kOk);
  EXPECT_EQ(group.body[1].name, "bad");
  EXPECT_EQ(group.body[1].status, report::StepStatus::kFailed);
  EXPECT_EQ(out.steps[1].status, report::StepStatus::kOk);
  EXPECT_EQ(out.summary.steps, 2);
  EXPECT_EQ(out.summary.checks_passed, 1);
  EXPECT_EQ(out.summary.checks_failed, 1);
  EXPECT_EQ(out.summary.exit_code, 1);
  // Ready at 0 and 10 ms, ended at 100 and 101 ms: all at once, for 90 ms.
  auto detail = [&](const std::string& key) -> const report::Scalar* {
    for (const auto& [k, v] : group.details)
      if (k == key) return &v;
    return nullptr;
  };
  ASSERT_NE(detail("all_ran_at_once"), nullptr);
  EXPECT_TRUE(std::get<bool>(*detail("all_ran_at_once")));
  EXPECT_DOUBLE_EQ(std::get<double>(*detail("overlap_ms")), 90.0);
  EXPECT_EQ(DescribeStepOutcome(p.plan, p.plan.steps[0], group),
            "2 children, all ran at once (overlap 90 ms): 1 of 2 as expected; not: bad (exit 4)");

  // A child that ended before the last one was ready: not all at once.
  blocks.ended_ms = 5;
  RunOutcome apart = RunPlan(p.plan, engine, nullptr, &blocks);
  EXPECT_FALSE(std::get<bool>(apart.steps[0].details[1].second));
}

TEST(Executor, ATogetherGroupWithoutABlockRunnerFailsAndSaysWhy) {
  Planned p(kGroup);
  FakeEngine engine;
  RunOutcome out = RunPlan(p.plan, engine, nullptr);
  EXPECT_EQ(out.summary.exit_code, 4);
  EXPECT_EQ(out.steps[0].error,
            "this run cannot start child processes, so it cannot run a together group (vmm-run "
            "run can)");
  ASSERT_EQ(out.steps[0].body.size(), 0u);
}

}  // namespace
}  // namespace vmm

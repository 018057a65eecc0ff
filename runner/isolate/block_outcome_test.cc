// How a child's end becomes the block's verdict, for every expectation, without a process.
#include "runner/isolate/block_outcome.h"

#include <gtest/gtest.h>

#include <csignal>

#include "runner/plan/plan.h"
#include "runner/scenario/parse.h"

namespace vmm::isolate {
namespace {

using report::ChildRecord;
using report::StepRecord;
using report::StepStatus;

BlockExpectation Expect(BlockExpect kind, const std::string& error = "", int signal = 0) {
  BlockExpectation e;
  e.kind = kind;
  e.error = error;
  e.signal = signal;
  e.limit_ns = 5000000000;
  return e;
}

ChildRecord Exited(int code, std::optional<std::string> error = std::nullopt) {
  ChildRecord c;
  c.exit_status = code;
  c.error = std::move(error);
  return c;
}

TEST(BlockOutcomeTest, EachExpectationPassesOnlyOnItsOutcome) {
  ChildRecord ok = Exited(0);
  ChildRecord fault = Exited(4, "CUDA_ERROR_ILLEGAL_ADDRESS");
  ChildRecord segv;
  segv.signal = "SIGSEGV";
  ChildRecord hung;
  hung.timed_out = true;
  hung.signal = "SIGKILL";
  ChildRecord stopped;
  stopped.stopped_by = "SIGTERM";
  stopped.signal = "SIGKILL";
  const std::vector<ChildRecord> outcomes = {ok, fault, segv, hung, stopped};
  const std::vector<std::string> texts = {"ok", "CUDA_ERROR_ILLEGAL_ADDRESS", "signal SIGSEGV",
                                          "timeout 5s", "interrupted"};
  const std::vector<BlockExpectation> expectations = {
      Expect(BlockExpect::kOk), Expect(BlockExpect::kError, "CUDA_ERROR_ILLEGAL_ADDRESS"),
      Expect(BlockExpect::kSignal, "", SIGSEGV), Expect(BlockExpect::kTimeout)};
  for (size_t o = 0; o < outcomes.size(); ++o) {
    for (size_t e = 0; e < expectations.size(); ++e) {
      report::CheckRecord check = Judge(expectations[e], outcomes[o], false);
      EXPECT_EQ(check.actual, texts[o]);
      EXPECT_EQ(check.verdict == report::Verdict::kPass, o == e) << texts[o] << " vs " << e;
    }
  }
  // Another error than the expected one fails, and says which.
  report::CheckRecord other = Judge(Expect(BlockExpect::kError, "CUDA_ERROR_ILLEGAL_ADDRESS"),
                                    Exited(4, "CUDA_ERROR_INVALID_VALUE"), false);
  EXPECT_EQ(other.actual, "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(other.verdict, report::Verdict::kFail);
  EXPECT_EQ(OutcomeText(Exited(1), true, Expect(BlockExpect::kOk)), "check failed");
  // A check failed first, then a step failed: the check is what the block sees first.
  EXPECT_EQ(OutcomeText(Exited(4, "CUDA_ERROR_ILLEGAL_ADDRESS"), true, Expect(BlockExpect::kOk)),
            "check failed");
  EXPECT_EQ(OutcomeText(Exited(4), false, Expect(BlockExpect::kOk)), "exit 4");
}

// With `at`, the block passes only when the named step is the one that failed (#29 item 4).
TEST(BlockOutcomeTest, AtNamesTheStepThatMustFail) {
  BlockExpectation at_write = Expect(BlockExpect::kError, "CUDA_ERROR_ILLEGAL_ADDRESS");
  at_write.at = "the write";
  EXPECT_EQ(at_write.Text(), "CUDA_ERROR_ILLEGAL_ADDRESS at 'the write'");
  ChildRecord fault = Exited(4, "CUDA_ERROR_ILLEGAL_ADDRESS");
  fault.failed_step = "the write";
  EXPECT_EQ(Judge(at_write, fault, false).verdict, report::Verdict::kPass);
  fault.failed_step = "the read";
  const report::CheckRecord other = Judge(at_write, fault, false);
  EXPECT_EQ(other.actual, "CUDA_ERROR_ILLEGAL_ADDRESS at 'the read'");
  EXPECT_EQ(other.verdict, report::Verdict::kFail);
  BlockExpectation segv_at = Expect(BlockExpect::kSignal, "", SIGSEGV);
  segv_at.at = "double release";
  ChildRecord killed;
  killed.signal = "SIGSEGV";
  killed.failed_step = "double release";
  EXPECT_EQ(Judge(segv_at, killed, false).verdict, report::Verdict::kPass);
  // Without `at`, the step is not part of the outcome.
  EXPECT_EQ(OutcomeText(fault, false, Expect(BlockExpect::kError, "CUDA_ERROR_ILLEGAL_ADDRESS")),
            "CUDA_ERROR_ILLEGAL_ADDRESS");
}

TEST(BlockOutcomeTest, TheFirstFailedStepNamesTheError) {
  std::vector<StepRecord> steps(3);
  steps[0].name = "map";
  steps[1].name = "write";
  steps[1].status = StepStatus::kFailed;
  steps[1].error = "vmm_fill_f32: CUDA_ERROR_ILLEGAL_ADDRESS: the kernel faulted: SIGSEGV (...)";
  steps[2].status = StepStatus::kSkipped;
  ChildRecord c;
  EXPECT_FALSE(FindChildError(steps, "", &c));
  EXPECT_EQ(c.error, "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(c.failed_step, "write");

  // A failed check first: no CUDA error, the block expecting one fails.
  steps[0].status = StepStatus::kFailed;
  steps[0].check = report::CheckRecord{};
  ChildRecord checked;
  EXPECT_TRUE(FindChildError(steps, "", &checked));
  EXPECT_FALSE(checked.error.has_value());
  EXPECT_EQ(checked.failed_step, "map");

  // No step failed, but the closing synchronize did: a fault of work left in flight.
  ChildRecord late;
  FindChildError({StepRecord{}}, "cudaStreamSynchronize(s) failed: cudaErrorIllegalAddress (x)",
                 &late);
  EXPECT_EQ(late.error, "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(late.failed_step, "");
}

// In a threads group the failed step is that of the first thread (in the order written) that
// failed, so that `at` can name a thread's step; the group's own error names the same.
TEST(BlockOutcomeTest, AFailedThreadsGroupNamesItsFirstFailedThreadsStep) {
  StepRecord group;
  group.op = "threads";
  group.name = "reader and pager";
  group.status = StepStatus::kFailed;
  group.error = "thread 'compute': 'the reader hits the hole' failed: ...";
  group.body.resize(2);
  group.body[0].name = "compute";
  group.body[0].status = StepStatus::kFailed;
  group.body[0].body.resize(2);
  group.body[0].body[0].name = "attention reads";
  group.body[0].body[1].name = "the reader hits the hole";
  group.body[0].body[1].status = StepStatus::kFailed;
  group.body[0].body[1].error = "Synchronize: failed: cudaErrorIllegalAddress (x)";
  group.body[1].name = "pager";
  group.body[1].body.resize(1);
  group.body[1].body[0].name = "unmap under it";
  ChildRecord c;
  EXPECT_FALSE(FindChildError({group}, "", &c));
  EXPECT_EQ(c.error, "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(c.failed_step, "the reader hits the hole");
}

TEST(BlockOutcomeTest, TheBodyListsEveryStepOfTheBlock) {
  std::vector<Diagnostic> d;
  std::optional<Scenario> s = ParseScenario(R"(name: b
buffers: {A: {shape: [1024]}}
steps:
  - isolate: {expect: {timeout: 1s}}
    steps:
      - {op: reserve, buffer: A}
      - {op: create, alloc: p, size: 2MiB}
      - {op: map, buffer: A, alloc: p}
      - {op: set_access, buffer: A}
      - {op: busy, name: hang, buffer: A, duration: 10s}
      - {op: synchronize}
)",
                                            "b.yaml", &d);
  ASSERT_TRUE(s.has_value()) << FormatDiagnostics(d);
  Plan plan = BuildPlan(*s, &d);
  ASSERT_TRUE(d.empty()) << FormatDiagnostics(d);
  const Plan& block = plan.steps[0].block->plan;
  std::vector<StepRecord> streamed(4);
  for (int i = 0; i < 4; ++i) {
    streamed[i].index = i;
    streamed[i].name = "streamed";
  }
  std::vector<StepRecord> body = CompleteBody(block, streamed, "killed at the limit");
  ASSERT_EQ(body.size(), 6u);
  EXPECT_EQ(body[3].name, "streamed");
  EXPECT_EQ(body[4].name, "hang");
  EXPECT_EQ(body[4].status, StepStatus::kFailed);
  EXPECT_EQ(body[4].error, "killed at the limit");
  EXPECT_EQ(body[5].status, StepStatus::kSkipped);
  EXPECT_EQ(body[5].op, "synchronize");
  // A child that reported everything keeps its records as they are.
  streamed.resize(6);
  streamed[4].index = 4;
  streamed[5].index = 5;
  EXPECT_EQ(CompleteBody(block, streamed, "").size(), 6u);
}

}  // namespace
}  // namespace vmm::isolate

// Observe, then pin: each observing block's recorded outcome replaces its `observe` (a flow map
// gains `at:` after it, a block map a line of its own; the step's name written as WriteYaml would),
// the rest of the file stays as written; an outcome no block can expect, runs that disagree, a
// missing record and a changed file are refused.
#include "runner/pipeline/pin_outcomes.h"

#include <gtest/gtest.h>

#include "runner/base/sha256.h"

namespace vmm {
namespace {

const char* kScenario = R"(name: pin  # a comment that stays
steps:
  - isolate: {expect: observe}
    name: first
    steps: [{op: synchronize}]
  - isolate:
      expect: observe
      kill_after: 30s
    name: second
    steps: [{op: synchronize}]
)";

report::StepRecord Block(int line, const std::string& actual) {
  report::StepRecord r;
  r.op = "isolate";
  r.line = line;
  report::CheckRecord check;
  check.expected = "observe";
  check.actual = actual;
  check.verdict = report::Verdict::kPass;
  r.check = check;
  return r;
}

report::Report ReportOf(std::vector<report::StepRecord> steps) {
  report::Report r;
  r.scenario_path = "pin.yaml";
  r.scenario_sha256 = Sha256Hex(kScenario);
  r.steps = std::move(steps);
  return r;
}

std::string Message(const StatusOr<PinResult>& r) { return r.ok() ? "ok" : r.status().message(); }

TEST(PinOutcomes, WritesEachOutcomeWhereObserveWas) {
  StatusOr<PinResult> r = PinObservedOutcomes(
      kScenario, ReportOf({Block(3, "CUDA_ERROR_ILLEGAL_ADDRESS at 'the \"read\"'"),
                           Block(6, "signal SIGSEGV at 'x'")}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->pinned, 2);
  EXPECT_EQ(r->text, R"(name: pin  # a comment that stays
steps:
  - isolate: {expect: CUDA_ERROR_ILLEGAL_ADDRESS, at: the "read"}
    name: first
    steps: [{op: synchronize}]
  - isolate:
      expect: {signal: SIGSEGV}
      at: x
      kill_after: 30s
    name: second
    steps: [{op: synchronize}]
)");
  r = PinObservedOutcomes(kScenario, ReportOf({Block(3, "ok"), Block(6, "ok")}));
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->text.find("  - isolate: {expect: ok}\n"), std::string::npos) << r->text;
}

TEST(PinOutcomes, RefusesWhatItCannotPin) {
  EXPECT_EQ(Message(PinObservedOutcomes(
                kScenario, ReportOf({Block(3, "check failed at 'c'"), Block(6, "ok")}))),
            "the block at line 3 ended with 'check failed at 'c'', which is not an expectation a "
            "block can state (ok, CUDA_ERROR_<NAME> or a signal): fix the block, or keep expect: "
            "observe");
  EXPECT_EQ(Message(PinObservedOutcomes(kScenario, ReportOf({Block(3, "ok")}))),
            "the report has no record of the block at line 6 (did the run reach it?)");
  EXPECT_EQ(Message(PinObservedOutcomes(
                kScenario, ReportOf({Block(3, "ok"), Block(6, "ok"), Block(6, "signal SIGBUS")}))),
            "the block at line 6 ended differently in its runs ('ok', 'signal SIGBUS'): a loop "
            "writes it; pin each iteration's block by hand");
  report::Report changed = ReportOf({Block(3, "ok"), Block(6, "ok")});
  changed.scenario_sha256 = Sha256Hex("another text");
  EXPECT_EQ(Message(PinObservedOutcomes(kScenario, changed)),
            "the scenario is not the one the report was made from (its SHA-256 differs): run it "
            "again, then pin from the new report");
  report::Report none = ReportOf({});
  none.scenario_sha256.clear();
  EXPECT_EQ(Message(PinObservedOutcomes("name: x\nsteps: [{op: synchronize}]\n", none)),
            "the scenario has no isolate block with expect: observe and no step with expect_error: "
            "observe; nothing to pin");
}

const char* kSteps = R"(name: steps
steps:
  - {op: map, buffer: A, alloc: p, expect_error: observe}  # stays
  - {op: create, alloc: q, size: 2MiB, expect_error: observe}
  - op: create
    alloc: r
    size: 2MiB
    expect_error: observe
  - {op: unmap, buffer: A, expect_error: "observe"}
)";

report::StepRecord Call(int line, const std::string& actual, const std::string& rule = "") {
  report::StepRecord r;
  r.op = "map";
  r.line = line;
  r.expected_error = "observe";
  r.actual_error = actual;
  if (!rule.empty()) r.details.emplace_back("rule", rule);
  return r;
}

// A step's observed error replaces `observe`; a call that succeeded loses the key, in a flow map
// and in a block map; a call inside an isolate block's record is found too.
TEST(PinOutcomes, WritesWhatEachObservingStepsCallReturned) {
  report::Report r = ReportOf(
      {Call(3, "CUDA_ERROR_INVALID_VALUE"), Call(4, "CUDA_SUCCESS"), Call(5, "CUDA_SUCCESS")});
  report::StepRecord block = Block(99, "ok");
  block.body.push_back(Call(9, "CUDA_ERROR_NOT_SUPPORTED"));
  r.steps.push_back(block);
  r.scenario_sha256 = Sha256Hex(kSteps);
  StatusOr<PinResult> pinned = PinObservedOutcomes(kSteps, r);
  ASSERT_TRUE(pinned.ok()) << pinned.status().message();
  EXPECT_EQ(pinned->pinned, 4);
  EXPECT_EQ(pinned->text, R"(name: steps
steps:
  - {op: map, buffer: A, alloc: p, expect_error: CUDA_ERROR_INVALID_VALUE}  # stays
  - {op: create, alloc: q, size: 2MiB}
  - op: create
    alloc: r
    size: 2MiB
  - {op: unmap, buffer: A, expect_error: CUDA_ERROR_NOT_SUPPORTED}
)");
}

TEST(PinOutcomes, KeepsObserveWhereTheValidatorNeedsIt) {
  report::Report r =
      ReportOf({Call(3, "CUDA_SUCCESS", "map_over_live_mapping"), Call(4, "CUDA_SUCCESS"),
                Call(5, "CUDA_SUCCESS"), Call(9, "CUDA_SUCCESS")});
  r.scenario_sha256 = Sha256Hex(kSteps);
  EXPECT_EQ(Message(PinObservedOutcomes(kSteps, r)),
            "the step at line 3 succeeded, but it breaks VMM rule 'map_over_live_mapping', which "
            "the validator refuses without expect_error: keep expect_error: observe");
  r.steps = {Call(3, "none"), Call(4, "CUDA_SUCCESS"), Call(5, "CUDA_SUCCESS"),
             Call(9, "CUDA_SUCCESS")};
  EXPECT_EQ(Message(PinObservedOutcomes(kSteps, r)),
            "the step at line 3 returned 'none', which expect_error cannot name: fix the step, or "
            "keep observe");
}

}  // namespace
}  // namespace vmm

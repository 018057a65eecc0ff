#include "runner/isolate/block_outcome.h"

#include <set>

#include "runner/exec/executor.h"

namespace vmm::isolate {

using report::StepRecord;
using report::StepStatus;

namespace {

// The record that failed: `s` itself, or in a threads group the failed step of its first thread
// (in the order written) that failed.
const StepRecord& FailedRecord(const StepRecord& s) {
  if (s.op != OpName(Op::kThreads)) return s;
  for (const StepRecord& thread : s.body)
    for (const StepRecord& t : thread.body)
      if (t.status == StepStatus::kFailed) return t;
  return s;
}

}  // namespace

bool FindChildError(const std::vector<StepRecord>& steps, const std::string& end_error,
                    report::ChildRecord* child) {
  for (const StepRecord& group_or_step : steps) {
    if (group_or_step.status != StepStatus::kFailed) continue;
    const StepRecord& s = FailedRecord(group_or_step);
    child->failed_step = s.name;
    const bool check_failed = s.check && s.check->verdict == report::Verdict::kFail;
    const std::string name = check_failed ? "" : CudaErrorNameIn(s.error);
    if (!name.empty()) child->error = name;
    return check_failed;
  }
  if (!end_error.empty()) {
    child->failed_step = "";
    const std::string name = CudaErrorNameIn(end_error);
    if (!name.empty()) child->error = name;
  }
  return false;
}

std::string OutcomeText(const report::ChildRecord& child, bool check_failed,
                        const BlockExpectation& expect) {
  if (!child.stopped_by.empty()) return "interrupted";
  if (child.timed_out) return "timeout " + DurationText(expect.limit_ns);
  // With `at` (or observe: what pin writes back), the step that failed is part of the outcome.
  const bool name_step = !expect.at.empty() || expect.kind == BlockExpect::kObserve;
  const std::string at = name_step ? AtText(child.failed_step) : "";
  if (!child.signal.empty()) return "signal " + child.signal + at;
  if (child.exit_status && *child.exit_status == 0) return "ok";
  if (check_failed) return "check failed" + at;
  if (child.error) return *child.error + at;
  return "exit " + (child.exit_status ? std::to_string(*child.exit_status) : std::string("?"));
}

report::CheckRecord Judge(const BlockExpectation& expect, const report::ChildRecord& child,
                          bool check_failed) {
  report::CheckRecord check;
  check.expected = expect.Text();
  check.actual = OutcomeText(child, check_failed, expect);
  // observe records the outcome (diffs compare it, pin writes it back) and never fails the run.
  const bool observed = expect.kind == BlockExpect::kObserve;
  check.verdict =
      observed || check.actual == check.expected ? report::Verdict::kPass : report::Verdict::kFail;
  return check;
}

std::vector<StepRecord> CompleteBody(const Plan& block, std::vector<StepRecord> streamed,
                                     const std::string& ended_why) {
  std::set<int> reported;
  for (const StepRecord& s : streamed) reported.insert(s.index);
  // Records of every step, all skipped, in plan order (the executor's own skipped records).
  std::vector<StepRecord> all = SkipPlan(block, "").steps;
  std::vector<StepRecord> out;
  out.reserve(all.size());
  size_t next = 0;  // streamed records arrive in plan order
  bool first_missing = true;
  for (StepRecord& record : all) {
    if (reported.count(record.index) != 0) {
      while (next < streamed.size() && streamed[next].index != record.index) ++next;
      if (next < streamed.size()) out.push_back(std::move(streamed[next++]));
      continue;
    }
    if (first_missing && !ended_why.empty()) {
      record.status = StepStatus::kFailed;
      record.error = ended_why;
    }
    first_missing = false;
    out.push_back(std::move(record));
  }
  return out;
}

}  // namespace vmm::isolate

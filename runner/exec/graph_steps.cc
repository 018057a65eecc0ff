// capture, instantiate, replay, update, destroy_graph, destroy_exec, synchronize.
#include "runner/base/stopwatch.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {
namespace {

using report::CheckRecord;
using report::StepRecord;
using report::Verdict;

}  // namespace

template <>
Status RunStep<Op::kCapture>(const PlanStep& step, RunState& state, StepRecord& record) {
  Engine& engine = state.engine;
  Stopwatch watch;
  VMM_RETURN_IF_ERROR(engine.BeginCapture());
  for (const PlanStep& inner : step.body) {
    StepRecord inner_record = NewStepRecord(inner);
    Status s = Dispatch(inner, state, inner_record);
    if (!s.ok()) {
      inner_record.status = report::StepStatus::kFailed;
      inner_record.error = s.message();
      record.body.push_back(std::move(inner_record));
      GraphHandle discarded;  // end the capture so the stream is usable again
      (void)engine.EndCapture(&discarded);
      if (discarded.value != 0) (void)engine.DestroyGraph(discarded);
      return s.WithContext("while capturing '" + inner.label + "'");
    }
    record.body.push_back(std::move(inner_record));
  }
  GraphHandle graph;
  VMM_RETURN_IF_ERROR(engine.EndCapture(&graph));
  record.wall_us = watch.ElapsedUs();
  state.graphs[step.graph] = graph;
  record.details.emplace_back("nodes", static_cast<int64_t>(step.body.size()));
  return Status::Ok();
}

template <>
Status RunStep<Op::kInstantiate>(const PlanStep& step, RunState& state, StepRecord& record) {
  ExecHandle exec;
  Status s =
      TimedCall(record, [&] { return state.engine.Instantiate(state.graphs[step.graph], &exec); });
  if (s.ok()) state.execs[step.exec] = exec;
  return s;
}

template <>
Status RunStep<Op::kReplay>(const PlanStep& step, RunState& state, StepRecord& record) {
  OpTiming timing;
  Status s =
      TimedCall(record, [&] { return state.engine.Replay(state.execs[step.exec], &timing); });
  if (timing.gpu_us >= 0) record.gpu_us = timing.gpu_us;
  return s;
}

template <>
Status RunStep<Op::kUpdate>(const PlanStep& step, RunState& state, StepRecord& record) {
  UpdateResult result;
  VMM_RETURN_IF_ERROR(TimedCall(record, [&] {
    return state.engine.Update(state.execs[step.exec], state.graphs[step.graph], &result);
  }));
  CheckRecord check;
  check.expected = UpdateCodeName(step.expect_update);
  check.actual = UpdateCodeName(result.code);
  check.verdict = result.code == step.expect_update ? Verdict::kPass : Verdict::kFail;
  record.check = std::move(check);
  record.details.emplace_back("result", std::string(UpdateCodeName(result.code)));
  record.details.emplace_back("error_node", static_cast<int64_t>(result.error_node));
  if (!result.api_error.empty()) record.details.emplace_back("api_error", result.api_error);
  return Status::Ok();
}

template <>
Status RunStep<Op::kDestroyGraph>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return state.engine.DestroyGraph(state.graphs[step.graph]); });
}

template <>
Status RunStep<Op::kDestroyExec>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return state.engine.DestroyExec(state.execs[step.exec]); });
}

template <>
Status RunStep<Op::kSynchronize>(const PlanStep&, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return state.engine.Synchronize(); });
}

template <>
std::string DescribeStep<Op::kCapture>(const Plan& plan, const PlanStep& step,
                                       const StepRecord& r) {
  return "graph " + plan.graphs[step.graph] + " · " + DetailText(r, "nodes") + " node(s)";
}
template <>
std::string DescribeStep<Op::kInstantiate>(const Plan& plan, const PlanStep& step,
                                           const StepRecord&) {
  return plan.graphs[step.graph] + " → exec " + plan.execs[step.exec];
}
template <>
std::string DescribeStep<Op::kReplay>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  return "exec " + plan.execs[step.exec];
}
template <>
std::string DescribeStep<Op::kUpdate>(const Plan&, const PlanStep&, const StepRecord& r) {
  if (!r.check) return "";
  return VerdictText(r) + "  result " + r.check->actual + " (expected " + r.check->expected + ")";
}
template <>
std::string DescribeStep<Op::kDestroyGraph>(const Plan& plan, const PlanStep& step,
                                            const StepRecord&) {
  return plan.graphs[step.graph];
}
template <>
std::string DescribeStep<Op::kDestroyExec>(const Plan& plan, const PlanStep& step,
                                           const StepRecord&) {
  return plan.execs[step.exec];
}
template <>
std::string DescribeStep<Op::kSynchronize>(const Plan&, const PlanStep&, const StepRecord&) {
  return "";
}

}  // namespace vmm

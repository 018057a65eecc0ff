// capture (with parallel branches), instantiate, replay, update, destroy_graph, destroy_exec,
// synchronize. The nodes a capture records are in graph_node_steps.cc.
#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {
namespace {

using report::CheckRecord;
using report::StepRecord;
using report::Verdict;

// "error_node_type_changed at 'k2'", or the result alone when no node is named.
std::string ResultText(UpdateCode code, const std::string& node) {
  std::string text = UpdateCodeName(code);
  if (!node.empty()) text += " at '" + node + "'";
  return text;
}

}  // namespace

Status CaptureSteps(const std::vector<PlanStep>& steps, RunState& state,
                    std::vector<StepRecord>& records) {
  for (const PlanStep& inner : steps) {
    StepRecord record = NewStepRecord(inner);
    Status s;
    if (inner.op != Op::kParallel && inner.lane != state.capture_lane) {
      s = state.engine.CaptureLane(inner.lane);
      if (s.ok()) state.capture_lane = inner.lane;
    }
    if (s.ok()) s = Dispatch(inner, state, record);
    // Every captured step but a parallel one made one node: name it after the step.
    if (s.ok() && inner.op != Op::kParallel) s = state.engine.NameCapturedNode(inner.node_name);
    const bool failed = !s.ok();
    if (failed) {
      record.status = report::StepStatus::kFailed;
      record.error = s.message();
    }
    records.push_back(std::move(record));
    if (failed) return s.WithContext("while capturing '" + inner.label + "'");
  }
  return Status::Ok();
}

template <>
Status RunStep<Op::kCapture>(const PlanStep& step, RunState& state, StepRecord& record) {
  Engine& engine = state.engine;
  Stopwatch watch;
  VMM_RETURN_IF_ERROR(engine.BeginCapture());
  state.capturing = true;
  state.capture_lane = 0;
  Status s = CaptureSteps(step.body, state, record.body);
  state.capturing = false;
  if (!s.ok()) {
    GraphHandle discarded;  // end the capture so the stream is usable again
    (void)engine.EndCapture(&discarded);
    if (discarded.value != 0) (void)engine.DestroyGraph(discarded);
    return s;
  }
  GraphHandle graph;
  VMM_RETURN_IF_ERROR(engine.EndCapture(&graph));
  record.wall_us = watch.ElapsedUs();
  state.graphs[step.graph] = graph;
  // The structure the backend holds, read back now (not timed): nodes, edges, buffers, DOT.
  GraphStructure structure;
  VMM_RETURN_IF_ERROR(
      engine.DescribeGraph(graph, &structure).WithContext("reading the graph back"));
  report::GraphRecord g = RecordGraph(structure, state);
  g.graph = state.plan.graphs[step.graph];
  g.capture_step = step.index;
  g.capture_name = step.label;
  int64_t edges = 0;
  for (const report::GraphNodeRecord& n : g.nodes)
    edges += static_cast<int64_t>(n.dependencies.size());
  record.details.emplace_back("nodes", static_cast<int64_t>(g.nodes.size()));
  record.details.emplace_back("edges", edges);
  record.details.emplace_back("structure_hash", g.structure_hash);
  if (state.graph_records != nullptr) state.graph_records->push_back(std::move(g));
  return Status::Ok();
}

// Fork every branch but the first onto its lane, record each branch, join them back.
template <>
Status RunStep<Op::kParallel>(const PlanStep& step, RunState& state, StepRecord& record) {
  Engine& engine = state.engine;
  const int lane = step.lane;
  for (size_t b = 1; b < step.branch_lanes.size(); ++b)
    VMM_RETURN_IF_ERROR(engine.ForkLane(lane, step.branch_lanes[b]));
  for (const std::vector<PlanStep>& branch : step.branches)
    VMM_RETURN_IF_ERROR(CaptureSteps(branch, state, record.body));
  for (size_t b = 1; b < step.branch_lanes.size(); ++b)
    VMM_RETURN_IF_ERROR(engine.JoinLane(step.branch_lanes[b], lane));
  record.details.emplace_back("branches", static_cast<int64_t>(step.branches.size()));
  return Status::Ok();
}

template <>
Status RunStep<Op::kInstantiate>(const PlanStep& step, RunState& state, StepRecord& record) {
  ExecHandle exec;
  InstantiateOptions options;
  options.upload = step.upload;
  options.auto_free_on_launch = step.auto_free_on_launch;
  options.device_launch = step.device_launch;
  InstantiateInfo info;
  Status s = TimedCall(record, [&] {
    return state.engine.InstantiateWith(state.graphs[step.graph], options, &exec, &info);
  });
  if (!s.ok()) return s;
  state.execs[step.exec] = exec;
  record.details.emplace_back("instantiate_us", info.instantiate_us);
  if (info.upload_us >= 0) record.details.emplace_back("upload_us", info.upload_us);
  record.details.emplace_back("flags", static_cast<int64_t>(info.flags));
  if (step.auto_free_on_launch) record.details.emplace_back("auto_free_on_launch", true);
  if (step.device_launch) record.details.emplace_back("device_launch", true);
  return Status::Ok();
}

template <>
Status RunStep<Op::kReplay>(const PlanStep& step, RunState& state, StepRecord& record) {
  OpTiming timing;
  const uint64_t host_calls = state.engine.host_calls();
  Status s =
      TimedCall(record, [&] { return state.engine.Replay(state.execs[step.exec], &timing); });
  if (timing.gpu_us >= 0) record.gpu_us = timing.gpu_us;
  if (const uint64_t ran = state.engine.host_calls() - host_calls; ran > 0)
    record.details.emplace_back("host_calls", static_cast<int64_t>(ran));
  return s;
}

template <>
Status RunStep<Op::kUpdate>(const PlanStep& step, RunState& state, StepRecord& record) {
  UpdateResult result;
  VMM_RETURN_IF_ERROR(TimedCall(record, [&] {
    return state.engine.Update(state.execs[step.exec], state.graphs[step.graph], &result);
  }));
  CheckRecord check;
  check.expected = ResultText(step.expect_update, step.node_name);
  check.actual = ResultText(result.code, result.error_node);
  const bool node_ok = step.node_name.empty() || step.node_name == result.error_node;
  check.verdict = result.code == step.expect_update && node_ok ? Verdict::kPass : Verdict::kFail;
  record.check = std::move(check);
  record.details.emplace_back("result", std::string(UpdateCodeName(result.code)));
  record.details.emplace_back("error_node", result.error_node);
  if (!result.error_from_node.empty())
    record.details.emplace_back("error_from_node", result.error_from_node);
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
  std::string text =
      "graph " + plan.graphs[step.graph] + " · " + DetailText(r, "nodes") + " node(s)";
  const std::string edges = DetailText(r, "edges");
  if (!edges.empty()) text += ", " + edges + " edge(s)";
  return text;
}
template <>
std::string DescribeStep<Op::kParallel>(const Plan&, const PlanStep& step, const StepRecord&) {
  return std::to_string(step.branches.size()) + " branches";
}
template <>
std::string DescribeStep<Op::kInstantiate>(const Plan& plan, const PlanStep& step,
                                           const StepRecord& r) {
  std::string text = plan.graphs[step.graph] + " → exec " + plan.execs[step.exec];
  if (step.auto_free_on_launch) text += " · auto_free_on_launch";
  if (step.device_launch) text += " · device_launch";
  const std::string upload = DetailText(r, "upload_us");
  if (!upload.empty()) text += " · uploaded in " + upload + " µs";
  return text;
}
template <>
std::string DescribeStep<Op::kReplay>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  const std::string calls = DetailText(r, "host_calls");
  return "exec " + plan.execs[step.exec] + (calls.empty() ? "" : " · " + calls + " host call(s)");
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

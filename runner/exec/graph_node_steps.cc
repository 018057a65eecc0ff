// The steps that make graph-only nodes or change an exec's nodes: host_func, record_event,
// wait_event, mem_alloc, mem_free, child_graph, if, while, set_node, trim.
#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {
namespace {

using report::StepRecord;

// The new parameters set_node gives a node, from the step that describes them.
NodeParams ParamsOf(const PlanStep& spec, const RunState& state) {
  NodeParams p;
  const PlanBuffer& target = state.plan.buffers[spec.buffer >= 0 ? spec.buffer : spec.c];
  if (spec.op == Op::kMatmul) {
    p.kind = NodeParams::Kind::kMatmul;
    p.matmul = {DataVa(state, spec.a),
                DataVa(state, spec.b),
                DataVa(state, spec.c),
                spec.m,
                spec.n,
                spec.k};
  } else if (spec.op == Op::kMemset) {
    p.kind = NodeParams::Kind::kMemset;
    p.dst = DataVa(state, spec.buffer);
    p.count = target.elements;
    p.pattern = spec.pattern;
  } else if (spec.op == Op::kCopy) {
    p.kind = NodeParams::Kind::kCopy;
    p.dst = DataVa(state, spec.buffer);
    p.src = DataVa(state, spec.other);
    p.count = target.bytes;
  } else {  // fill: the plan gives set_node only fill, matmul, memset and copy nodes
    p.kind = NodeParams::Kind::kFill;
    p.dst = DataVa(state, spec.buffer);
    p.count = target.elements;
    p.seed = spec.seed;
  }
  return p;
}

void Pool(const GraphMemoryUsage& u, const std::string& when, StepRecord& record) {
  record.details.emplace_back("used_" + when + "_bytes", static_cast<int64_t>(u.used_current));
  record.details.emplace_back("reserved_" + when + "_bytes",
                              static_cast<int64_t>(u.reserved_current));
}

}  // namespace

template <>
Status RunStep<Op::kHostFunc>(const PlanStep&, RunState& state, StepRecord& record) {
  OpTiming timing;
  Status s = TimedCall(record, [&] { return state.engine.HostFunction(&timing); });
  if (timing.gpu_us >= 0) record.gpu_us = timing.gpu_us;
  return s;
}

template <>
Status RunStep<Op::kRecordEvent>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return state.engine.RecordEvent(step.event); });
}

template <>
Status RunStep<Op::kWaitEvent>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return state.engine.WaitEvent(step.event); });
}

template <>
Status RunStep<Op::kMemAlloc>(const PlanStep& step, RunState& state, StepRecord& record) {
  const uint64_t bytes = state.plan.buffers[step.buffer].bytes;
  DevicePtr ptr = 0;
  VMM_RETURN_IF_ERROR(TimedCall(record, [&] { return state.engine.GraphAlloc(bytes, &ptr); }));
  state.buffer_va[step.buffer] = ptr;  // fixed for the graph's life
  record.addresses.emplace_back("va", Hex(ptr));
  record.details.emplace_back("bytes", static_cast<int64_t>(bytes));
  return Status::Ok();
}

template <>
Status RunStep<Op::kMemFree>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record, [&] { return state.engine.GraphFree(DataVa(state, step.buffer)); });
}

template <>
Status RunStep<Op::kChildGraph>(const PlanStep& step, RunState& state, StepRecord& record) {
  return TimedCall(record,
                   [&] { return state.engine.CaptureChildGraph(state.graphs[step.graph]); });
}

// if / while: the condition kernel and the conditional node, the body captured into the node's
// body graph (its steps' records nest under this one), then the body's end. CaptureSteps names
// the conditional node after this returns.
static Status Conditional(ConditionKind kind, const PlanStep& step, RunState& state,
                          StepRecord& record) {
  const DevicePtr word = DataVa(state, step.buffer) + step.offset;
  const DevicePtr passes = step.other >= 0 ? DataVa(state, step.other) : 0;
  VMM_RETURN_IF_ERROR(state.engine.BeginConditional(kind, word, passes, step.node_name));
  Status s = CaptureSteps(step.body, state, record.body);
  if (!s.ok()) return s;  // EndCapture drops the open body with the capture
  VMM_RETURN_IF_ERROR(state.engine.EndConditional());
  record.details.emplace_back("word_index", static_cast<int64_t>(step.offset / 4));
  record.details.emplace_back("body_steps", static_cast<int64_t>(step.body.size()));
  return Status::Ok();
}

template <>
Status RunStep<Op::kIf>(const PlanStep& step, RunState& state, StepRecord& record) {
  return Conditional(ConditionKind::kIf, step, state, record);
}

template <>
Status RunStep<Op::kWhile>(const PlanStep& step, RunState& state, StepRecord& record) {
  return Conditional(ConditionKind::kWhile, step, state, record);
}

template <>
Status RunStep<Op::kSetNode>(const PlanStep& step, RunState& state, StepRecord& record) {
  const ExecHandle exec = state.execs[step.exec];
  Stopwatch watch;
  if (!step.body.empty()) {
    const NodeParams params = ParamsOf(step.body.front(), state);
    Status s = state.engine.SetNodeParams(exec, step.node_name, params);
    if (!s.ok()) {
      record.wall_us = watch.ElapsedUs();
      return s;
    }
  }
  Status s = Status::Ok();
  if (step.enabled >= 0) s = state.engine.SetNodeEnabled(exec, step.node_name, step.enabled == 1);
  record.wall_us = watch.ElapsedUs();
  record.details.emplace_back("node", step.node_name);
  if (!step.body.empty()) record.details.emplace_back("parameters", true);
  if (step.enabled >= 0) record.details.emplace_back("enabled", step.enabled == 1);
  return s;
}

template <>
Status RunStep<Op::kTrim>(const PlanStep&, RunState& state, StepRecord& record) {
  GraphMemoryUsage before, after;
  VMM_RETURN_IF_ERROR(state.engine.GraphMemory(&before));
  VMM_RETURN_IF_ERROR(TimedCall(record, [&] { return state.engine.TrimGraphMemory(); }));
  VMM_RETURN_IF_ERROR(state.engine.GraphMemory(&after));
  Pool(before, "before", record);
  Pool(after, "after", record);
  const uint64_t given = before.reserved_current > after.reserved_current
                             ? before.reserved_current - after.reserved_current
                             : 0;
  record.details.emplace_back("given_back_bytes", static_cast<int64_t>(given));
  record.details.emplace_back("used_high_bytes", static_cast<int64_t>(after.used_high));
  record.details.emplace_back("reserved_high_bytes", static_cast<int64_t>(after.reserved_high));
  return Status::Ok();
}

template <>
std::string DescribeStep<Op::kHostFunc>(const Plan&, const PlanStep&, const StepRecord&) {
  return "host function";
}
template <>
std::string DescribeStep<Op::kRecordEvent>(const Plan& plan, const PlanStep& step,
                                           const StepRecord&) {
  return "event " + plan.events[step.event];
}
template <>
std::string DescribeStep<Op::kWaitEvent>(const Plan& plan, const PlanStep& step,
                                         const StepRecord&) {
  return "event " + plan.events[step.event];
}
template <>
std::string DescribeStep<Op::kMemAlloc>(const Plan& plan, const PlanStep& step,
                                        const StepRecord& r) {
  return plan.buffers[step.buffer].name + " · " + FormatBytes(plan.buffers[step.buffer].bytes) +
         " at " + AddressText(r, "va");
}
template <>
std::string DescribeStep<Op::kMemFree>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  return plan.buffers[step.buffer].name;
}
template <>
std::string DescribeStep<Op::kChildGraph>(const Plan& plan, const PlanStep& step,
                                          const StepRecord&) {
  return "graph " + plan.graphs[step.graph];
}
template <>
std::string DescribeStep<Op::kIf>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  return "if word " + std::to_string(step.offset / 4) + " of " + plan.buffers[step.buffer].name +
         " ≠ 0 · " + std::to_string(step.body.size()) + " body steps";
}
template <>
std::string DescribeStep<Op::kWhile>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  std::string text = "while word " + std::to_string(step.offset / 4) + " of " +
                     plan.buffers[step.buffer].name + " ≠ 0 (one less each pass)";
  if (step.other >= 0) text += " · passes counted in " + plan.buffers[step.other].name;
  return text + " · " + std::to_string(step.body.size()) + " body steps";
}
template <>
std::string DescribeStep<Op::kSetNode>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  std::string text = "exec " + plan.execs[step.exec] + " · node '" + step.node_name + "'";
  if (!step.body.empty()) text += " · new parameters";
  if (step.enabled >= 0) text += step.enabled == 1 ? " · enabled" : " · disabled";
  return text;
}
template <>
std::string DescribeStep<Op::kTrim>(const Plan&, const PlanStep&, const StepRecord& r) {
  auto bytes = [&](const char* key) {
    const std::string v = DetailText(r, key);
    return v.empty() ? std::string("?") : FormatBytes(std::stoull(v));
  };
  return "reserved " + bytes("reserved_before_bytes") + " → " + bytes("reserved_after_bytes") +
         " (gave back " + bytes("given_back_bytes") + "), used " + bytes("used_after_bytes");
}

}  // namespace vmm

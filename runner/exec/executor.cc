#include "runner/exec/executor.h"

#include <algorithm>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "runner/base/exit_code.h"
#include "runner/base/process_memory.h"
#include "runner/base/stop_signal.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/fault_engine.h"
#include "runner/engine/shared_engine.h"
#include "runner/exec/memory_burst.h"
#include "runner/exec/run_state.h"
#include "runner/exec/timing_stats.h"

namespace vmm {

RunState::RunState(const Plan& p, Engine& e, BlockRunner* b, Engine* vmm)
    : plan(p),
      engine(e),
      vmm_engine(vmm != nullptr ? *vmm : e),
      blocks(b),
      buffer_va(p.buffers.size(), 0),
      allocs(p.allocs.size()),
      graphs(p.graphs.size()),
      execs(p.execs.size()),
      snapshots(p.snapshots.size()),
      step_address(p.steps.size()),
      device_ordinal(static_cast<size_t>(p.devices), -1),
      last_va(p.buffers.size(), 0),
      marks(p.marks.size(), 0),
      granted(p.allocs.size()),
      granularity(p.allocs.size(), 0) {
  for (int d = 1; d < p.devices; ++d) device_ordinal[d] = ScenarioDeviceOrdinal(e.info(), d);
}

namespace {

using report::StepRecord;
using report::StepStatus;

// Op names with their lengths, from the op table (a record's op is assigned once per step).
constexpr std::string_view kOpNames[] = {
#define VMM_OP(Enum, name, Family, Flags, label) name,
#include "runner/vocab/ops.def"
#undef VMM_OP
};

using StepRunner = Status (*)(const PlanStep&, RunState&, StepRecord&);
using StepDescriber = std::string (*)(const Plan&, const PlanStep&, const StepRecord&);

// Indexed by Op, from the op table.
constexpr StepRunner kRunners[] = {
#define VMM_OP(Enum, name, Family, Flags, label) &RunStep<Op::Enum>,
#include "runner/vocab/ops.def"
#undef VMM_OP
};
constexpr StepDescriber kDescribers[] = {
#define VMM_OP(Enum, name, Family, Flags, label) &DescribeStep<Op::Enum>,
#include "runner/vocab/ops.def"
#undef VMM_OP
};

}  // namespace

Status SelectStepDevice(const PlanStep& step, RunState& state) {
  // While checkpointed a device switch would call CUDA; the steps allowed then (hold_memory,
  // return_memory) are answered by the checkpoint helper on the engine's own device.
  if (step.device != state.current_device && Describe(step.op).has(kOnDevice) &&
      !state.engine.Checkpointed()) {
    const int ordinal = state.device_ordinal[step.device];
    Status selected = state.engine.SelectDevice(ordinal);
    if (!selected.ok()) {
      return selected.WithContext("selecting device " + std::to_string(step.device) + " (ordinal " +
                                  std::to_string(ordinal) + ")");
    }
    state.current_device = step.device;
  }
  return Status::Ok();
}

Status Dispatch(const PlanStep& step, RunState& state, StepRecord& record) {
  VMM_RETURN_IF_ERROR(SelectStepDevice(step, state));
  return kRunners[static_cast<size_t>(step.op)](step, state, record);
}

std::string DescribeStepOutcome(const Plan& plan, const PlanStep& step, const StepRecord& record) {
  if (step.expect_error != nullptr) return DescribeExpectedError(record);
  return kDescribers[static_cast<size_t>(step.op)](plan, step, record);
}

StepRecord NewStepRecord(const PlanStep& step) {
  return StepRecord(step.index, step.label, step.named, kOpNames[static_cast<size_t>(step.op)],
                    step.line);
}

StepRecord& AppendStepRecord(std::vector<StepRecord>& records, const PlanStep& step) {
  return records.emplace_back(step.index, step.label, step.named,
                              kOpNames[static_cast<size_t>(step.op)], step.line);
}

namespace {

// One run of `step`: its op's handler, through RunExpectingError when it expects an error.
Status RunOnce(const PlanStep& step, RunState& state, StepRecord& record) {
  if (step.expect_error != nullptr) return RunExpectingError(step, state, record);
  return Dispatch(step, state, record);
}

// "release", "map + set_access": the ops that undo a repeated VMM call (the plan groups them by
// op), each once.
std::string UndoText(const std::vector<PlanStep>& undo) {
  std::string text;
  for (size_t i = 0; i < undo.size(); ++i)
    if (i == 0 || undo[i].op != undo[i - 1].op)
      text += std::string(i == 0 ? "" : " + ") + OpName(undo[i].op);
  return text;
}

// Runs `step` step.repeat times; the record keeps the first run's facts plus timing statistics.
// `samples` (when given) receives the wall time of every run.
Status RunRepeated(const PlanStep& step, RunState& state, StepRecord& record,
                   std::vector<double>* samples) {
  Status status = RunOnce(step, state, record);
  if (samples != nullptr) samples->push_back(record.wall_us);
  if (!status.ok() || step.repeat <= 1) return status;
  std::vector<double> wall{record.wall_us}, gpu;
  if (record.gpu_us) gpu.push_back(*record.gpu_us);
  // A repeated VMM call is undone before each next call (PlanStep::body).
  const bool undone = IsMemoryOp(step.op) && !step.body.empty();
  for (uint32_t i = 1; i < step.repeat; ++i) {
    if (StopRequested()) break;  // a signal: the statistics cover the repetitions that ran
    if (undone) {
      status = RunUndoSteps(step.body, state);
      if (!status.ok()) return status.WithContext("before repetition " + std::to_string(i + 1));
    }
    StepRecord again = NewStepRecord(step);
    status = RunOnce(step, state, again);
    if (!status.ok()) return status.WithContext("repetition " + std::to_string(i + 1));
    // The state after the step is the last call's: a create's handle is the last one made.
    if (undone) record.addresses = std::move(again.addresses);
    wall.push_back(again.wall_us);
    if (samples != nullptr) samples->push_back(again.wall_us);
    if (again.gpu_us) gpu.push_back(*again.gpu_us);
    // A repeated check must hold every time: keep the first failing verdict.
    if (again.check && again.check->verdict == report::Verdict::kFail &&
        (!record.check || record.check->verdict == report::Verdict::kPass)) {
      record.check = again.check;
    }
  }
  if (undone) record.details.emplace_back("undone_by", UndoText(step.body));
  record.wall_stats = ComputeStats(std::move(wall));
  if (!gpu.empty()) record.gpu_stats = ComputeStats(std::move(gpu));
  return Status::Ok();
}

}  // namespace

Status RunRecorded(const PlanStep& step, RunState& state, StepRecord& record,
                   std::vector<double>* samples) {
  try {
    return RunRepeated(step, state, record, samples);
  } catch (const std::bad_alloc&) {
    return RuntimeError("vmm-run ran out of memory while running this step");
  }
}

namespace {

void Count(const StepRecord& record, report::Summary& summary) {
  ++summary.steps;
  switch (record.status) {
    case StepStatus::kOk:
      ++summary.ok;
      break;
    case StepStatus::kFailed:
      ++summary.failed;
      break;
    case StepStatus::kSkipped:
      ++summary.skipped;
      break;
    case StepStatus::kUnchecked:
      ++summary.unchecked;
      break;
  }
  auto count_check = [&summary](const StepRecord& r) {
    if (!r.check || r.status == StepStatus::kSkipped) return;
    if (r.check->verdict == report::Verdict::kPass)
      ++summary.checks_passed;
    else
      ++summary.checks_failed;
  };
  count_check(record);
  // A together group's blocks are steps of the group's record (summary.steps counts the group
  // once), but each block's verdict is a check of its own; so is each check of a thread.
  if (!record.body.empty() && record.op == OpName(Op::kTogether))
    for (const StepRecord& block : record.body) count_check(block);
  if (!record.body.empty() && record.op == OpName(Op::kThreads))
    for (const StepRecord& thread : record.body)
      for (const StepRecord& step : thread.body) count_check(step);
}

}  // namespace

RunOutcome SkipPlan(const Plan& plan, const std::string& reason) {
  RunOutcome outcome;
  outcome.steps.reserve(plan.steps.size());
  for (const PlanStep& step : plan.steps) {
    StepRecord& record = AppendStepRecord(outcome.steps, step);
    record.status = StepStatus::kSkipped;
    Count(record, outcome.summary);
  }
  outcome.summary.exit_code = kExitSkipped;
  outcome.summary.result = "skipped";
  outcome.summary.skip_reason = reason;
  return outcome;
}

RunOutcome RunPlan(const Plan& plan, Engine& engine, StepObserver* observer, BlockRunner* blocks,
                   std::map<std::string, UniqueFd> shared_handles) {
  Stopwatch total;
  // A threads group calls the engine from several threads: through SharedEngine for the whole
  // run (one engine, one view of it), so that no call of the run's own thread bypasses its lock.
  // inject_error arms a FaultEngine under it (each call counted; otherwise not wrapped at all).
  std::optional<FaultEngine> faults;
  if (plan.injects_errors) faults.emplace(engine, std::nullopt);
  Engine& base = faults ? static_cast<Engine&>(*faults) : engine;
  std::optional<SharedEngine> shared;
  if (plan.has_threads) shared.emplace(base);
  RunState state(plan, shared ? *shared : base, blocks,
                 shared && base.ConcurrentVmm() ? &base : nullptr);
  if (faults) state.faults = &*faults;
  state.shared_handles = std::move(shared_handles);
  RunOutcome outcome;
  state.graph_records = &outcome.graphs;
  report::Summary& summary = outcome.summary;
  const size_t n = plan.steps.size();
  outcome.steps.reserve(n);
  state.records = &outcome.steps;
  // Records are built in place at the end of outcome.steps; `emit` counts and shows the last one.
  const std::function<void(const PlanStep&)> emit = [&](const PlanStep& step) {
    Count(outcome.steps.back(), summary);
    if (observer != nullptr) observer->OnStep(step, outcome.steps.back());
  };
  const bool plan_bare = EveryCreateIsBare(plan);
  bool stopped = false;  // a run-time failure or a fatal check: the rest is skipped
  for (size_t i = 0; i < n; ++i) {
    const PlanStep& first = plan.steps[i];
    if (!stopped && StopRequested()) {  // a step (or burst) boundary: stop here, skip the rest
      stopped = true;
      summary.interrupted = true;
      summary.signal = StopSignal();
      summary.stopped_at_step = first.index;
    }
    // Consecutive VMM steps that run once run as one burst (memory_burst.h); a step with
    // expect_error runs alone: its state is proven around its call.
    if (!stopped && IsBurstable(first)) {
      const BurstEnd burst =
          RunMemoryBurst(i, observer != nullptr, plan_bare, state, outcome.steps, emit);
      if (burst.failed) {
        summary.failed_step = plan.steps[burst.last].index;
        stopped = true;
      }
      i = burst.last;  // the loop's ++i moves past it
      continue;
    }
    const PlanStep& step = first;
    StepRecord& record = AppendStepRecord(outcome.steps, step);
    if (stopped) {
      record.status = StepStatus::kSkipped;
    } else {
      Status status = RunRecorded(step, state, record);
      if (!status.ok()) {
        record.status = StepStatus::kFailed;
        record.error = status.message();
        summary.failed_step = step.index;
        stopped = true;
      } else if (record.check && record.check->verdict == report::Verdict::kFail) {
        record.status = StepStatus::kFailed;
        if (step.fatal) stopped = true;
      }
    }
    emit(step);
  }
  if (!summary.interrupted && summary.failed_step < 0 && StopRequested()) {  // during the last step
    summary.interrupted = true;
    summary.signal = StopSignal();
    summary.stopped_at_step = n == 0 ? 0 : plan.steps.back().index + 1;
  }
  if (summary.interrupted) {
    summary.exit_code = ExitForSignal(summary.signal);
    summary.result = "interrupted";
  } else if (summary.failed_step >= 0) {
    summary.exit_code = 4;
    summary.result = "error";
  } else if (summary.checks_failed > 0) {
    summary.exit_code = 1;
    summary.result = "fail";
  } else {
    summary.exit_code = 0;
    summary.result = "pass";
  }
  summary.duration_ms = total.ElapsedUs() / 1000.0;
  summary.peak_rss_bytes = PeakRssBytes();
  return outcome;
}

}  // namespace vmm

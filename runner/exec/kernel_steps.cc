// fill / matmul / memset: work on the engine's stream, run directly or recorded inside a capture;
// add / scale / axpy: elementwise work on the stream; kernel_copy: a copy by a kernel (any kernel
// of kernels/graph_kernels.h launches through Engine::LaunchKernel).
#include "runner/base/format.h"
#include "runner/engine/kernel_params.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"
#include "runner/vocab/isolate.h"

namespace vmm {
namespace {

using report::StepRecord;

// One launch on the stream, timed by TimedCall: `launch(timing)` gets the OpTiming to fill, or
// nullptr for an async step (timing it would mean waiting for it); then `details()` adds the
// step's own details, and the async flag and the device time follow.
template <typename Launch, typename Details>
Status RecordLaunch(const PlanStep& step, StepRecord& record, Launch&& launch, Details&& details) {
  OpTiming timing;
  Status status = TimedCall(record, [&] { return launch(step.async ? nullptr : &timing); });
  details();
  if (step.async) record.details.emplace_back("async", true);
  if (timing.gpu_us >= 0) record.gpu_us = timing.gpu_us;
  return status;
}

Status RunElementwise(const PlanStep& step, RunState& state, StepRecord& record) {
  AxpyArgs args;
  args.a = DataVa(state, step.a);
  args.b = step.b >= 0 ? DataVa(state, step.b) : 0;
  args.c = DataVa(state, step.c);
  args.count = state.plan.buffers[step.c].elements;
  args.alpha = step.alpha;
  return RecordLaunch(
      step, record,
      [&](OpTiming* timing) { return state.engine.LaunchKernel(AxpyKernelParams(args), timing); },
      [&] {
        record.details.emplace_back("elements", static_cast<int64_t>(args.count));
        if (step.op != Op::kAdd)
          record.details.emplace_back("alpha", static_cast<double>(step.alpha));
      });
}

}  // namespace

template <>
Status RunStep<Op::kFill>(const PlanStep& step, RunState& state, StepRecord& record) {
  const PlanBuffer& buffer = state.plan.buffers[step.buffer];
  return RecordLaunch(
      step, record,
      [&](OpTiming* timing) {
        return state.engine.Fill(DataVa(state, step.buffer), buffer.elements, step.seed, timing);
      },
      [&] {
        record.details.emplace_back("elements", static_cast<int64_t>(buffer.elements));
        record.details.emplace_back("seed", static_cast<int64_t>(step.seed));
      });
}

template <>
Status RunStep<Op::kMatmul>(const PlanStep& step, RunState& state, StepRecord& record) {
  MatmulArgs args;
  args.a = DataVa(state, step.a);
  args.b = DataVa(state, step.b);
  args.c = DataVa(state, step.c);
  args.m = step.m;
  args.n = step.n;
  args.k = step.k;
  return RecordLaunch(
      step, record, [&](OpTiming* timing) { return state.engine.Matmul(args, timing); },
      [&] {
        record.details.emplace_back("m", static_cast<int64_t>(step.m));
        record.details.emplace_back("n", static_cast<int64_t>(step.n));
        record.details.emplace_back("k", static_cast<int64_t>(step.k));
      });
}

template <>
Status RunStep<Op::kAdd>(const PlanStep& step, RunState& state, StepRecord& record) {
  return RunElementwise(step, state, record);
}

template <>
Status RunStep<Op::kScale>(const PlanStep& step, RunState& state, StepRecord& record) {
  return RunElementwise(step, state, record);
}

template <>
Status RunStep<Op::kAxpy>(const PlanStep& step, RunState& state, StepRecord& record) {
  return RunElementwise(step, state, record);
}

template <>
Status RunStep<Op::kKernelCopy>(const PlanStep& step, RunState& state, StepRecord& record) {
  const uint64_t words = state.plan.buffers[step.c].elements;
  const KernelNodeParams params =
      KernelParams<kernels::row::vmm_copy_u32>(DataVa(state, step.a), DataVa(state, step.c), words);
  return RecordLaunch(
      step, record, [&](OpTiming* timing) { return state.engine.LaunchKernel(params, timing); },
      [&] { record.details.emplace_back("words", static_cast<int64_t>(words)); });
}

template <>
Status RunStep<Op::kMemset>(const PlanStep& step, RunState& state, StepRecord& record) {
  const PlanBuffer& buffer = state.plan.buffers[step.buffer];
  return RecordLaunch(
      step, record,
      [&](OpTiming* timing) {
        return state.engine.Memset(DataVa(state, step.buffer), buffer.elements, step.pattern,
                                   timing);
      },
      [&] {
        record.details.emplace_back("elements", static_cast<int64_t>(buffer.elements));
        record.details.emplace_back("pattern", Hex(step.pattern));
      });
}

template <>
Status RunStep<Op::kWriteValue>(const PlanStep& step, RunState& state, StepRecord& record) {
  const DevicePtr dst = DataVa(state, step.buffer) + step.offset;
  return RecordLaunch(
      step, record,
      [&](OpTiming* timing) { return state.engine.WriteValue(dst, step.pattern, timing); },
      [&] {
        record.details.emplace_back("offset_bytes", static_cast<int64_t>(step.offset));
        record.details.emplace_back("value", Hex(step.pattern));
      });
}

template <>
std::string DescribeStep<Op::kWriteValue>(const Plan& plan, const PlanStep& step,
                                          const StepRecord&) {
  return plan.buffers[step.buffer].name + " + " + std::to_string(step.offset) + " ← " +
         Hex(step.pattern);
}

template <>
Status RunStep<Op::kBusy>(const PlanStep& step, RunState& state, StepRecord& record) {
  const PlanBuffer& buffer = state.plan.buffers[step.buffer];
  return RecordLaunch(
      step, record,
      [&](OpTiming* timing) {
        return state.engine.Busy(DataVa(state, step.buffer), buffer.elements, step.duration_ns,
                                 step.pattern, step.touch, step.event, timing);
      },
      [&] {
        record.details.emplace_back("elements", static_cast<int64_t>(buffer.elements));
        record.details.emplace_back("duration_ns", static_cast<int64_t>(step.duration_ns));
        if (step.touch != kernels::BusyTouch::kRead)
          record.details.emplace_back("pattern", Hex(step.pattern));
        if (step.touch != kernels::BusyTouch::kEnd)
          record.details.emplace_back("touch", kernels::BusyTouchName(step.touch));
        if (step.event >= 0) record.details.emplace_back("until", state.plan.flags[step.event]);
      });
}

// set_flag: a host store; it fails when a busy waiting for the flag had already stopped at its
// duration (the scenario's steps took longer than the busy waits).
template <>
Status RunStep<Op::kSetFlag>(const PlanStep& step, RunState& state, StepRecord& record) {
  bool expired = false;
  VMM_RETURN_IF_ERROR(
      TimedCall(record, [&] { return state.engine.SetFlag(step.event, &expired); }));
  record.details.emplace_back("expired", expired);
  if (!expired) return Status::Ok();
  return RuntimeError("a busy kernel waiting for flag '" + state.plan.flags[step.event] +
                      "' had already stopped at its duration before this step set it: the steps "
                      "between took longer; give the busy a longer duration");
}

template <>
std::string DescribeStep<Op::kSetFlag>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  return "flag '" + plan.flags[step.event] + "' set";
}

template <>
std::string DescribeStep<Op::kBusy>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  const std::string& name = plan.buffers[step.buffer].name;
  // "for 200ms", or "until flag 'freed' (at most 10s)"
  const std::string how_long = step.event >= 0
                                   ? "until flag '" + plan.flags[step.event] + "' (at most " +
                                         DurationText(step.duration_ns) + ")"
                                   : "for " + DurationText(step.duration_ns);
  const std::string running = step.async ? " · left running" : "";
  switch (step.touch) {
    case kernels::BusyTouch::kRead:
      return "reads " + name + " " + how_long + running;
    case kernels::BusyTouch::kWrite:
      return "writes " + Hex(step.pattern) + " to " + name + " " + how_long + running;
    case kernels::BusyTouch::kEnd:
      break;
  }
  const std::string after = step.event >= 0 ? "at flag '" + plan.flags[step.event] + "' (at most " +
                                                  DurationText(step.duration_ns) + ")"
                                            : "after " + DurationText(step.duration_ns);
  return name + " ← " + Hex(step.pattern) + " " + after + running;
}

template <>
std::string DescribeStep<Op::kMemset>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  return plan.buffers[step.buffer].name + " ← " + Hex(step.pattern) + " · " +
         DetailText(r, "elements") + " elements";
}

template <>
std::string DescribeStep<Op::kFill>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  return plan.buffers[step.buffer].name + " ← seed " + std::to_string(step.seed) + " · " +
         DetailText(r, "elements") + " elements";
}

template <>
std::string DescribeStep<Op::kMatmul>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  auto name = [&](int slot) { return plan.buffers[slot].name; };
  return name(step.c) + " = " + name(step.a) + "·" + name(step.b) + " · " + std::to_string(step.m) +
         "×" + std::to_string(step.n) + "×" + std::to_string(step.k);
}

template <>
std::string DescribeStep<Op::kAdd>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  return ElementwiseText(plan, step) + " · " + DetailText(r, "elements") + " elements";
}

template <>
std::string DescribeStep<Op::kScale>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  return ElementwiseText(plan, step) + " · " + DetailText(r, "elements") + " elements";
}

template <>
std::string DescribeStep<Op::kAxpy>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  return ElementwiseText(plan, step) + " · " + DetailText(r, "elements") + " elements";
}

template <>
std::string DescribeStep<Op::kKernelCopy>(const Plan& plan, const PlanStep& step,
                                          const StepRecord& r) {
  return plan.buffers[step.c].name + " ← " + plan.buffers[step.a].name + " · " +
         DetailText(r, "words") + " words by a kernel";
}

}  // namespace vmm

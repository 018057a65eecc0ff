// hold_memory / return_memory (memory pressure) and inject_error (an error the nth later call of
// one kind returns, through the run's FaultEngine).
#include "runner/base/format.h"
#include "runner/engine/fault_engine.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {

using report::StepRecord;

template <>
Status RunStep<Op::kHoldMemory>(const PlanStep& step, RunState& state, StepRecord& record) {
  uint64_t held = 0, free = 0, total = 0;
  VMM_RETURN_IF_ERROR(TimedCall(record, [&] { return state.engine.HoldMemory(step.size, &held); }));
  VMM_RETURN_IF_ERROR(state.engine.MemoryInfo(&free, &total));
  record.details.emplace_back("leave_free_bytes", static_cast<int64_t>(step.size));
  record.details.emplace_back("held_bytes", static_cast<int64_t>(held));
  record.details.emplace_back("free_after_bytes", static_cast<int64_t>(free));
  return Status::Ok();
}

template <>
Status RunStep<Op::kReturnMemory>(const PlanStep&, RunState& state, StepRecord& record) {
  uint64_t returned = 0, free = 0, total = 0;
  VMM_RETURN_IF_ERROR(TimedCall(record, [&] { return state.engine.ReturnMemory(&returned); }));
  VMM_RETURN_IF_ERROR(state.engine.MemoryInfo(&free, &total));
  record.details.emplace_back("returned_bytes", static_cast<int64_t>(returned));
  record.details.emplace_back("free_after_bytes", static_cast<int64_t>(free));
  return Status::Ok();
}

template <>
Status RunStep<Op::kInjectError>(const PlanStep& step, RunState& state, StepRecord& record) {
  if (state.faults == nullptr)  // RunPlan wraps the engine whenever the plan injects errors
    return InternalError("inject_error: the run has no fault injector");
  const FaultKind kind = static_cast<FaultKind>(step.other);
  state.faults->Arm(kind, step.size, step.injected_error,
                    "injected by the inject_error step at line " + std::to_string(step.line));
  record.details.emplace_back("call", std::string(Describe(kind).name));
  record.details.emplace_back("nth", static_cast<int64_t>(step.size));
  record.details.emplace_back("error", std::string(step.injected_error));
  return Status::Ok();
}

template <>
std::string DescribeStep<Op::kHoldMemory>(const Plan&, const PlanStep& step, const StepRecord& r) {
  const std::string held = DetailText(r, "held_bytes");
  if (held.empty()) return "leave " + FormatBytes(step.size) + " free";
  return "held " + FormatBytes(std::stoull(held)) + " · " +
         FormatBytes(std::stoull(DetailText(r, "free_after_bytes"))) + " free";
}
template <>
std::string DescribeStep<Op::kReturnMemory>(const Plan&, const PlanStep&, const StepRecord& r) {
  const std::string returned = DetailText(r, "returned_bytes");
  if (returned.empty()) return "";
  return "returned " + FormatBytes(std::stoull(returned)) + " · " +
         FormatBytes(std::stoull(DetailText(r, "free_after_bytes"))) + " free";
}
template <>
std::string DescribeStep<Op::kInjectError>(const Plan&, const PlanStep& step, const StepRecord&) {
  const FaultKind kind = static_cast<FaultKind>(step.other);
  const std::string nth =
      step.size == 1   ? "the next " + std::string(Describe(kind).name) + " call"
      : step.size == 2 ? "the 2nd " + std::string(Describe(kind).name) + " call"
                       : "call " + std::to_string(step.size) + " of kind " + Describe(kind).name;
  return nth + " returns " + step.injected_error;
}

}  // namespace vmm

// PlanBuilder and expect_error: the step's error name, the rules a step may break when it expects
// the driver to refuse it, and the state that such a step leaves as it was.
#include <string>

#include "runner/plan/plan_builder.h"
#include "runner/vocab/cuda_errors.h"
#include "runner/vocab/vmm_rules.h"

namespace vmm {
namespace {

// Why a call the driver must never get stays refused even with expect_error.
const char* NeverSent(DriverVerdict verdict) {
  switch (verdict) {
    case DriverVerdict::kCrashes:
      return "the CUDA driver (580) segfaults on a released or unknown handle instead of "
             "returning an error, so vmm-run never sends the call";
    case DriverVerdict::kAcceptsUnsafely:
      return "the CUDA driver (580) accepts this call against its documentation instead of "
             "refusing it, so there is no refusal to expect and vmm-run never sends it";
    case DriverVerdict::kFaults:
      return "a kernel that touches memory it may not faults the device and poisons the CUDA "
             "context, so vmm-run never runs it in-process (an isolate block will)";
    case DriverVerdict::kRefuses:
    case DriverVerdict::kAccepts:
      break;
  }
  return "vmm-run never sends it";
}

}  // namespace

void PlanBuilder::Refusal(const SourceLoc& loc, std::string message, std::string_view rule_id) {
  const VmmRule* rule = FindVmmRule(rule_id);
  if (rule == nullptr) {  // a bug in the builder: every call site names a row of the table
    return Error(loc, message + " (internal: no VMM rule '" + std::string(rule_id) + "')");
  }
  if (current_ == nullptr || current_plan_ == nullptr || !current_->expect_error().set) {
    return Error(loc, std::move(message));
  }
  if (rule->LetThrough(parent_ != nullptr)) {
    if (current_plan_->broken_rule == nullptr) current_plan_->broken_rule = rule;
    return;
  }
  if (rule->blocks_only) {
    return Error(loc, message +
                          "; expect_error lets this step through only inside an isolate block: the "
                          "call names a handle the driver freed, or addresses past the "
                          "reservation, and may crash the process that makes it (put it in "
                          "{isolate: {expect: observe}, steps: [...]})");
  }
  Error(loc, message + "; expect_error cannot let this step through: " + NeverSent(rule->driver));
}

void PlanBuilder::ExpectError(const Step& step, PlanStep* p) {
  if (!step.expect_error().set) return;
  p->expect_error = step.expect_error().value == kObserveError
                        ? kObserveError
                        : CudaErrorNamed(step.expect_error(), "expect_error");
}

const char* PlanBuilder::CudaErrorNamed(const Located<std::string>& field, const char* key) {
  const std::string& name = field.value;
  const SourceLoc& loc = field.loc;
  const std::string quoted = std::string("'") + key + "'";
  const CudaErrorName* error = FindCudaError(name);
  if (error != nullptr && error->value != 0) return error->name;
  if (error != nullptr) {
    Error(loc, quoted +
                   " names the error the call must return; CUDA_SUCCESS is what every step "
                   "without 'expect_error' expects");
    return nullptr;
  }
  if (const char* driver = DriverNameOfRuntimeError(name)) {
    Error(loc, "'" + name + "' is the CUDA runtime's name; " + quoted + " takes the driver's: '" +
                   driver + "'");
    return nullptr;
  }
  std::vector<std::string> names;
  for (const CudaErrorName& e : CudaErrorNames())
    if (e.value != 0) names.emplace_back(e.name);
  const std::string close = SuggestName(name, names);
  Error(loc, "unknown CUDA error '" + name + "'" +
                 (close.empty() ? "; " + quoted +
                                      " takes a CUresult name such as "
                                      "'CUDA_ERROR_INVALID_VALUE' (cuda.h lists them)"
                                : ", did you mean '" + close + "'?"));
  return nullptr;
}

PlanBuilder::SimulatedState PlanBuilder::SaveState() const {
  return SimulatedState{
      plan_.buffers,     reservations_,   reserved_by_,  freed_line_,  last_reserved_size_,
      plan_.peer_access, reservation_id_, allocs_,       graphs_,      execs_,
      graph_models_,     exec_models_,    graph_allocs_, event_slots_, graph_devices_,
      exec_devices_,     snapshots_,      handles_,      hold_line_};
}

void PlanBuilder::RestoreState(SimulatedState&& saved) {
  plan_.buffers = std::move(saved.buffers);
  reservations_ = std::move(saved.reservations);
  reserved_by_ = std::move(saved.reserved_by);
  freed_line_ = std::move(saved.freed_line);
  last_reserved_size_ = std::move(saved.last_reserved_size);
  plan_.peer_access = std::move(saved.peer_access);
  reservation_id_ = std::move(saved.reservation_id);
  hold_line_ = saved.hold_line;
  allocs_ = std::move(saved.allocs);
  graphs_ = std::move(saved.graphs);
  execs_ = std::move(saved.execs);
  // Uses and devices are by slot and slots are never taken back: restore the slots that existed
  // before.
  for (size_t i = 0; i < saved.graph_models.size(); ++i)
    graph_models_[i] = std::move(saved.graph_models[i]);
  for (size_t i = 0; i < saved.exec_models.size(); ++i)
    exec_models_[i] = std::move(saved.exec_models[i]);
  graph_allocs_ = std::move(saved.graph_allocs);
  event_slots_ = std::move(saved.event_slots);
  for (size_t i = 0; i < saved.graph_devices.size(); ++i)
    graph_devices_[i] = saved.graph_devices[i];
  for (size_t i = 0; i < saved.exec_devices.size(); ++i) exec_devices_[i] = saved.exec_devices[i];
  snapshots_ = std::move(saved.snapshots);
  handles_ = std::move(saved.handles);
}

}  // namespace vmm

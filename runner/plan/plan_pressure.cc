// PlanBuilder's memory pressure and injected errors: hold_memory / return_memory (one hold per
// device at a time, given back in order) and inject_error (a fault kind, a count, a CUDA error).
#include "runner/plan/plan_builder.h"
#include "runner/scenario/size.h"
#include "runner/vocab/fault_kinds.h"

namespace vmm {

template <>
void PlanBuilder::PlanOp<Op::kHoldMemory>(const Step& step, PlanStep* p, BufferUses*) {
  const Located<std::string>& leave = Key(step, "leave_free");
  bool overflow = false;
  if (std::optional<uint64_t> bytes = ParseSize(leave.value, &overflow)) {
    p->size = *bytes;
  } else {
    Error(At(leave, step), "'leave_free' is too large: '" + leave.value +
                               "' does not fit in 64 bits");  // the schema allows only sizes
  }
  if (hold_line_ != 0) {
    Error(step.loc, "device " + std::to_string(p->device) +
                        " already holds memory (hold_memory at line " + std::to_string(hold_line_) +
                        "); give it back with {op: return_memory} before holding again");
    return;
  }
  hold_line_ = step.loc.line;
  checkpoint_.helper_hold = checkpoint_.state != CheckpointModel::kRunning;
}

template <>
void PlanBuilder::PlanOp<Op::kReturnMemory>(const Step& step, PlanStep* p, BufferUses*) {
  if (hold_line_ == 0) {
    Error(step.loc, "device " + std::to_string(p->device) +
                        " holds no memory here: return_memory gives back what a hold_memory "
                        "before it took");
    return;
  }
  if (checkpoint_.state != CheckpointModel::kRunning && !checkpoint_.helper_hold) {
    Error(step.loc, "the hold at line " + std::to_string(hold_line_) +
                        " is the checkpointed process's own memory, which it cannot give back "
                        "before it is restored; return it after {op: restore}");
    return;
  }
  hold_line_ = 0;
  checkpoint_.helper_hold = false;
}

template <>
void PlanBuilder::PlanOp<Op::kInjectError>(const Step& step, PlanStep* p, BufferUses*) {
  const Located<std::string>& call = Key(step, "call");
  const Located<std::string>& nth = Key(step, "nth");
  const Located<std::string>& error = Key(step, "error");
  if (std::optional<FaultKind> kind = FaultKindNamed(call.value)) {
    p->other = static_cast<int>(*kind);
  } else {
    std::vector<std::string> names;
    for (size_t i = 0; i < kFaultKindCount; ++i)
      names.emplace_back(Describe(static_cast<FaultKind>(i)).name);
    const std::string close = SuggestName(call.value, names);
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    Error(At(call, step),
          "unknown call kind '" + call.value + "'" +
              (close.empty() ? "; one of " + list : ", did you mean '" + close + "'?"));
  }
  p->size = nth.set ? std::stoull(nth.value) : 1;  // the schema allows integers 1..1e9 only
  p->injected_error = CudaErrorNamed(error, "error");
  plan_.injects_errors = true;
}

}  // namespace vmm

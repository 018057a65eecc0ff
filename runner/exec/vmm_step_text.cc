// The console lines of the memory ops (DescribeStep<op> for reserve, free, create, release, map,
// set_access, unmap, export and import), read back from their finished records.
#include "runner/base/format.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {

using report::StepRecord;

template <>
std::string DescribeStep<Op::kReserve>(const Plan&, const PlanStep& step, const StepRecord& r) {
  std::string text = "va " + AddressText(r, "va") + " · " + FormatBytes(step.size);
  if (DetailText(r, "hint_honoured").empty()) return text;
  text += " · hint " + AddressText(r, "hint") + " " +
          (DetailText(r, "hint_honoured") == "true" ? "honoured" : "moved");
  return r.check ? VerdictText(r) + "  " + text + " (expected " + r.check->expected + ")" : text;
}
template <>
std::string DescribeStep<Op::kFree>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  return plan.buffers[step.buffer].name + " · " + FormatBytes(step.size);
}
template <>
std::string DescribeStep<Op::kCreate>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  std::string text = plan.allocs[step.alloc] + " · " + FormatBytes(step.size) +
                     (plan.devices > 1 ? " on device " + std::to_string(step.device) : "");
  const std::string where = DetailText(r, "granted_location");
  if (!where.empty()) {
    text += " · " + where + (DetailText(r, "granted_compression") == "true" ? ", compressed" : "") +
            (DetailText(r, "granted_gpudirect_rdma") == "true" ? ", rdma" : "");
  }
  return text;
}
template <>
std::string DescribeStep<Op::kRelease>(const Plan& plan, const PlanStep& step,
                                       const StepRecord& r) {
  return plan.allocs[step.alloc] + " · " + SyncText(r);
}
template <>
std::string DescribeStep<Op::kMap>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  return "va " + AddressText(r, "va") + " ← " + plan.allocs[step.alloc] + " · " +
         FormatBytes(step.size);
}
template <>
std::string DescribeStep<Op::kSetAccess>(const Plan& plan, const PlanStep& step,
                                         const StepRecord& r) {
  return plan.buffers[step.buffer].name + " " + DetailText(r, "access") + " over " +
         FormatBytes(step.size);
}
template <>
std::string DescribeStep<Op::kExport>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  return plan.allocs[step.alloc] + " → handle " + plan.handles[step.handle] + " (fd " +
         DetailText(r, "fd") + ")";
}
template <>
std::string DescribeStep<Op::kImport>(const Plan& plan, const PlanStep& step, const StepRecord&) {
  return "handle " + plan.handles[step.handle] + " → " + plan.allocs[step.alloc] + " · " +
         FormatBytes(step.size);
}
template <>
std::string DescribeStep<Op::kUnmap>(const Plan& plan, const PlanStep& step, const StepRecord& r) {
  return plan.buffers[step.buffer].name + " · " + SyncText(r);
}

}  // namespace vmm

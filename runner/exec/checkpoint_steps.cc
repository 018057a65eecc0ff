// checkpoint and restore (an isolate block's child): the engine's CheckpointProcess and
// RestoreProcess, with what the driver's calls took and the process state after, in the record.
// A failed call keeps its facts too (the state it left the process in is the point of a step
// that expects the failure).
#include "runner/base/format.h"
#include "runner/exec/run_state.h"
#include "runner/exec/step_text.h"

namespace vmm {
namespace {

using report::StepRecord;

void AddFacts(const CheckpointFacts& facts, StepRecord& record) {
  auto add_us = [&](report::DetailKey key, double us) {
    if (us >= 0) record.details.emplace_back(key, us);
  };
  add_us("lock_us", facts.lock_us);
  add_us("checkpoint_us", facts.checkpoint_us);
  add_us("restore_us", facts.restore_us);
  add_us("unlock_us", facts.unlock_us);
  if (facts.lock_us >= 0) record.details.emplace_back("freed_bytes", facts.freed_bytes);
  if (facts.restore_us >= 0) record.details.emplace_back("taken_bytes", -facts.freed_bytes);
  if (!facts.state.empty()) record.details.emplace_back("process_state", facts.state);
}

}  // namespace

template <>
Status RunStep<Op::kCheckpoint>(const PlanStep& step, RunState& state, StepRecord& record) {
  CheckpointFacts facts;
  const uint32_t timeout_ms = static_cast<uint32_t>(step.duration_ns / 1'000'000);
  const Status call =
      TimedCall(record, [&] { return state.engine.CheckpointProcess(timeout_ms, &facts); });
  record.details.emplace_back("lock_timeout_ms", static_cast<int64_t>(timeout_ms));
  AddFacts(facts, record);
  if (!call.ok() && state.engine.Checkpointed()) {
    // Refused, yet the process is left locked or checkpointed: whatever error a step expected,
    // nothing after it can run (its CUDA calls would never return).
    return RuntimeError(call.message() + "; the process was left " + facts.state +
                        ", so the run stops here");
  }
  return call;
}

template <>
Status RunStep<Op::kRestore>(const PlanStep&, RunState& state, StepRecord& record) {
  CheckpointFacts facts;
  const Status call = TimedCall(record, [&] { return state.engine.RestoreProcess(&facts); });
  AddFacts(facts, record);
  return call;
}

template <>
std::string DescribeStep<Op::kCheckpoint>(const Plan&, const PlanStep&, const StepRecord& r) {
  const std::string freed = DetailText(r, "freed_bytes");
  if (freed.empty()) return DetailText(r, "process_state");
  const int64_t bytes = std::stoll(freed);
  return "checkpointed · " + (bytes >= 0 ? FormatBytes(bytes) + " freed on the device"
                                         : FormatBytes(-bytes) + " taken on the device");
}
template <>
std::string DescribeStep<Op::kRestore>(const Plan&, const PlanStep&, const StepRecord& r) {
  const std::string taken = DetailText(r, "taken_bytes");
  if (taken.empty()) return "process " + DetailText(r, "process_state");
  const int64_t bytes = std::stoll(taken);
  return "restored · " + (bytes >= 0 ? FormatBytes(bytes) + " taken on the device"
                                     : FormatBytes(-bytes) + " freed on the device");
}

}  // namespace vmm

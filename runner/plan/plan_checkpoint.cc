// PlanBuilder's checkpoint and restore (cuCheckpointProcess*, made by a helper process): only in
// an isolate block's child, not in a thread (AllowedInThread refuses it there); the process's state
// between them (checkpointed: no CUDA call returns until a restore; failed: a restore that failed
// leaves it so for good); which steps may come while it is checkpointed; and the block's end.
#include "runner/plan/plan_builder.h"
#include "runner/scenario/duration.h"
#include "runner/vocab/cuda_errors.h"

namespace vmm {
namespace {

constexpr uint64_t kDefaultLockTimeoutNs = 10'000'000'000;  // 10 s
constexpr uint64_t kMinLockTimeoutNs = 1'000'000;           // the driver's unit; 0 is "no timeout"
constexpr uint64_t kMaxLockTimeoutNs = 600'000'000'000;     // 10 min, as busy

// Whether the step's call is assumed to fail (an error named: a refused call changes nothing).
bool ExpectsFailure(const PlanStep& p) {
  return p.expect_error != nullptr && p.expect_error != kObserveError;
}

}  // namespace

bool PlanBuilder::AllowedWhileCheckpointed(const Step& step) {
  if (checkpoint_.state == CheckpointModel::kRunning || Describe(step.op).has(kWhileCheckpointed))
    return true;
  const std::string since = "line " + std::to_string(checkpoint_.loc.line);
  if (checkpoint_.state == CheckpointModel::kFailed) {
    Error(step.loc, std::string("'") + OpName(step.op) + "' would never return: the restore at " +
                        since +
                        " is expected to fail, which leaves the process checkpointed for good "
                        "(driver 580, cuda-checkpoint#44); end the block there, or try restore "
                        "again");
    return false;
  }
  std::string allowed;  // the op table's kWhileCheckpointed rows
  for (const OpInfo& info : AllOps())
    if (info.has(kWhileCheckpointed))
      allowed += (allowed.empty() ? "" : ", ") + std::string(info.name);
  Error(step.loc,
        std::string("'") + OpName(step.op) +
            "' cannot run while the process is checkpointed (checkpoint at " + since +
            "): its CUDA calls block until a restore; move it after {op: restore} (only " +
            allowed + " run here)");
  return false;
}

template <>
void PlanBuilder::PlanOp<Op::kCheckpoint>(const Step& step, PlanStep* p, BufferUses*) {
  const Located<std::string>& timeout = Key(step, "lock_timeout");
  p->duration_ns = kDefaultLockTimeoutNs;
  if (timeout.set) {
    bool overflow = false;
    std::optional<uint64_t> ns = ParseDuration(timeout.value, &overflow);
    if (!ns || *ns < kMinLockTimeoutNs || *ns > kMaxLockTimeoutNs) {
      Error(At(timeout, step),
            "'lock_timeout' must be a duration from 1ms to 10min (the driver counts whole "
            "milliseconds, and 0 would mean no timeout), got '" +
                timeout.value + "'");
    } else {
      p->duration_ns = *ns;
    }
  }
  if (parent_ == nullptr) {
    Error(step.loc,
          "checkpoint runs only inside an isolate block: a restore that fails leaves its process "
          "unable to make CUDA calls for good, so vmm-run checkpoints a child process; put it in "
          "{isolate: {expect: ok}, steps: [...]}");
    return;
  }
  if (checkpoint_.state != CheckpointModel::kRunning) return;  // AllowedWhileCheckpointed said so
  if (ExpectsFailure(*p)) return;  // a refused lock or checkpoint leaves the process running
  checkpoint_.state = CheckpointModel::kCheckpointed;
  checkpoint_.loc = step.loc;
}

template <>
void PlanBuilder::PlanOp<Op::kRestore>(const Step& step, PlanStep* p, BufferUses*) {
  if (checkpoint_.state == CheckpointModel::kRunning) {
    Error(step.loc, "restore needs a checkpointed process: put {op: checkpoint} before it" +
                        std::string(parent_ == nullptr ? ", inside an isolate block" : ""));
    return;
  }
  if (ExpectsFailure(*p)) {  // the driver keeps the process checkpointed, for good
    checkpoint_.state = CheckpointModel::kFailed;
    checkpoint_.loc = step.loc;
    return;
  }
  if (checkpoint_.state == CheckpointModel::kFailed) return;  // the run will say what it returns
  checkpoint_.state = CheckpointModel::kRunning;
}

void PlanBuilder::CheckRestoredAtEnd() {
  if (checkpoint_.state != CheckpointModel::kCheckpointed) return;
  Error(checkpoint_.loc,
        "the isolate block ends with its process checkpointed (since this checkpoint): add "
        "{op: restore} after it, or expect the restore to fail");
}

}  // namespace vmm

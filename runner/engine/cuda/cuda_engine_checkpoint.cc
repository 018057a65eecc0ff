// CudaEngine's checkpoint and restore: the calls go to a helper process (checkpoint_helper.h),
// since a locked process cannot make them; while this process is checkpointed, the helper also
// answers its memory queries and holds (engine_calls.def says which calls may come then).
#include <unistd.h>

#include "runner/engine/cuda/cuda_call.h"
#include "runner/engine/cuda/cuda_engine_impl.h"

namespace vmm::cuda {

Status CudaEngine::ProbeCheckpoint(std::string* why_not) {
  CUprocessState state = CU_PROCESS_STATE_RUNNING;
  Status asked = CU_LATE_CALL(api_, cuCheckpointProcessGetState, v12080, 12080,
                              (static_cast<int>(getpid()), &state));
  *why_not = asked.ok() ? "" : asked.message();
  return Status::Ok();
}

Status CudaEngine::CheckpointProcess(uint32_t lock_timeout_ms, CheckpointFacts* facts) {
  if (checkpointed_) {
    facts->state = "checkpointed";
    return Status(Code::kRuntime, "CheckpointProcess: the process is checkpointed already",
                  "CUDA_ERROR_ILLEGAL_STATE");
  }
  if (checkpoint_helper_ == nullptr) {
    // On the engine's own device, whichever is selected: holds and free memory are asked there.
    StatusOr<std::unique_ptr<CheckpointHelper>> helper = CheckpointHelper::Start(ordinal_);
    if (!helper.ok()) return helper.status();
    checkpoint_helper_ = std::move(helper).value();
  }
  const Status done = checkpoint_helper_->Checkpoint(lock_timeout_ms, facts);
  // A failed call may still leave the process locked (an unlock that failed too, or a helper that
  // ended mid-way): then no CUDA call of this process returns, whatever the call's error said.
  checkpointed_ = done.ok() || facts->state != "running";
  return done;
}

Status CudaEngine::RestoreProcess(CheckpointFacts* facts) {
  if (!checkpointed_ || checkpoint_helper_ == nullptr) {
    facts->state = "running";
    return Status(Code::kRuntime, "RestoreProcess: the process is not checkpointed",
                  "CUDA_ERROR_ILLEGAL_STATE");
  }
  VMM_RETURN_IF_ERROR(checkpoint_helper_->Restore(facts));
  checkpointed_ = facts->state != "running";
  return Status::Ok();
}

void CudaEngine::EndHelpers() { checkpoint_helper_.reset(); }

}  // namespace vmm::cuda

// HostEngine's checkpoint and restore: the driver's process states (running, checkpointed, and a
// restore that failed), and what it does to the memory (AddressSpace::Park / Unpark), as measured
// on the H200 with driver 580.159 (tools/checkpoint_probe.cc, reports/h200/session16/):
//   - the lock waits for work in flight up to its timeout, then CUDA_ERROR_NOT_READY, the process
//     still running;
//   - a restore without room for the memory is CUDA_ERROR_OUT_OF_MEMORY; every later restore is
//     CUDA_ERROR_OPERATING_SYSTEM and the process stays checkpointed (cuda-checkpoint#44);
//   - a process holding host-NUMA memory (cuMemCreate, CU_MEM_LOCATION_TYPE_HOST_NUMA) is
//     checkpointed but its restore is CUDA_ERROR_UNKNOWN, for good (nccl#2350's path).
#include "runner/base/stopwatch.h"
#include "runner/engine/host/host_engine_impl.h"

namespace vmm::host {
namespace {

constexpr const char* kIllegalState = "CUDA_ERROR_ILLEGAL_STATE";

// The state as the records name it (cuCheckpointProcessGetState's words; failed reads as
// checkpointed there too: the driver kept the process CHECKPOINTED after a failed restore).
const char* StateText(bool running) { return running ? "running" : "checkpointed"; }

}  // namespace

Status HostEngine::CheckpointProcess(uint32_t lock_timeout_ms, CheckpointFacts* facts) {
  facts->state = StateText(process_ == ProcessState::kRunning);
  if (process_ != ProcessState::kRunning)
    return CudaError("cuCheckpointProcessLock", kIllegalState, "the process is checkpointed");
  Stopwatch lock;
  if (!kernels_.IdleWithin(lock_timeout_ms)) {
    return CudaError("cuCheckpointProcessLock", "CUDA_ERROR_NOT_READY",
                     "work still in flight after " + std::to_string(lock_timeout_ms) + " ms");
  }
  facts->lock_us = lock.ElapsedUs();
  Stopwatch checkpoint;
  uint64_t freed = 0;
  VMM_RETURN_IF_ERROR(space_.Park(&freed));
  facts->checkpoint_us = checkpoint.ElapsedUs();
  facts->freed_bytes = static_cast<int64_t>(freed);
  process_ = ProcessState::kCheckpointed;
  facts->state = StateText(false);
  return Status::Ok();
}

Status HostEngine::RestoreProcess(CheckpointFacts* facts) {
  const char* fn = "cuCheckpointProcessRestore";
  facts->state = StateText(process_ == ProcessState::kRunning);
  switch (process_) {
    case ProcessState::kRunning:
      return CudaError(fn, kIllegalState, "the process is not checkpointed");
    case ProcessState::kFailed:
      return CudaError(fn, "CUDA_ERROR_OPERATING_SYSTEM",
                       "an earlier restore of this process failed, and the driver does not "
                       "restore it again (cuda-checkpoint#44): it stays checkpointed");
    case ProcessState::kCheckpointed:
      break;
  }
  if (space_.HoldsHostNuma()) {
    process_ = ProcessState::kFailed;
    return CudaError(fn, "CUDA_ERROR_UNKNOWN",
                     "the process holds host-NUMA memory (CU_MEM_LOCATION_TYPE_HOST_NUMA), which "
                     "driver 580 does not restore: it stays checkpointed");
  }
  Stopwatch restore;
  uint64_t restored = 0;
  if (Status back = space_.Unpark(&restored); !back.ok()) {
    process_ = ProcessState::kFailed;
    return back;
  }
  facts->restore_us = restore.ElapsedUs();
  facts->unlock_us = 0;
  facts->freed_bytes = -static_cast<int64_t>(restored);
  process_ = ProcessState::kRunning;
  facts->state = StateText(true);
  return Status::Ok();
}

}  // namespace vmm::host

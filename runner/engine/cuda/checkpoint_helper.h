// Checkpoint and restore of a CUDA process (cuCheckpointProcess*) need a second process: a lock
// blocks the locked process's CUDA calls, so it cannot lock, checkpoint or restore itself. The
// CUDA engine of a process that checkpoints starts a helper, `vmm-run __checkpoint-helper --pid P
// --device D` (the same binary, not a command for people), and talks to it over a pipe each way,
// one line per request and per reply (requests over a socket, replies over a pipe). The helper
// keeps a CUDA engine of its own on device D, so that it can also answer for the checkpointed
// process: its free memory, and memory pressure (HoldMemory / ReturnMemory) while the process is
// checkpointed. It ends when its stdin closes (its hold is given back then) or when the process
// that started it dies.
//
// Requests and replies (text, one line each):
//   checkpoint MS  -> lock (timeout MS), checkpoint; a failed checkpoint is unlocked again
//   restore        -> restore, unlock
//   hold BYTES     -> HoldMemory(BYTES);   return -> ReturnMemory;   info -> MemoryInfo
//   reply: "ok key=value ..." or "error CUDA_ERROR_X state=S the driver's message"
// Measured on the H200, driver 580.159: tools/checkpoint_probe.cc, reports/h200/session16/.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "runner/base/status.h"
#include "runner/base/unique_fd.h"
#include "runner/engine/engine.h"

namespace vmm::cuda {

// The helper's main (vmm-run __checkpoint-helper --pid P --device D): exit 0 when its stdin
// closes, 2 on bad arguments, 1 when it could not start its engine (said on its first reply).
int RunCheckpointHelper(int argc, char** argv);

// The checkpointed process's side: the helper it started, and the conversation with it.
class CheckpointHelper {
 public:
  // Starts the helper for this process on device `ordinal`: the binary is $VMMRUN_EXE when set
  // (tests run from another binary), else /proc/self/exe; waits for its first reply.
  static StatusOr<std::unique_ptr<CheckpointHelper>> Start(int ordinal);
  // Closes the helper's stdin and waits for it to end (it gives back its hold first).
  ~CheckpointHelper();
  CheckpointHelper(const CheckpointHelper&) = delete;
  CheckpointHelper& operator=(const CheckpointHelper&) = delete;

  Status Checkpoint(uint32_t lock_timeout_ms, CheckpointFacts* facts);
  Status Restore(CheckpointFacts* facts);
  Status Hold(uint64_t leave_free, uint64_t* held);
  Status Return(uint64_t* returned);
  Status Info(uint64_t* free_bytes, uint64_t* total_bytes);

 private:
  CheckpointHelper(pid_t pid, UniqueFd to, UniqueFd from)
      : pid_(pid), to_(std::move(to)), from_(std::move(from)) {}
  // Sends `request`, reads the reply: its key=value pairs, or the error it says (with its
  // CUDA error name, and the process state in facts->state when `facts` is given).
  Status Ask(const std::string& request, std::map<std::string, std::string>* values,
             CheckpointFacts* facts = nullptr);
  // The number `values` has for `key`, or an error that the reply lacked it.
  Status Number(const std::map<std::string, std::string>& values, const char* key,
                double* out) const;
  // Ask for a checkpoint or a restore: the process state, the two timings the reply names
  // (`first_key`, `second_key`) and the bytes it freed, into `facts`.
  Status AskForFacts(const std::string& request, const char* first_key, double* first,
                     const char* second_key, double* second, CheckpointFacts* facts);
  pid_t pid_;
  UniqueFd to_, from_;
  std::string pending_;  // bytes read past the last reply's line
};

}  // namespace vmm::cuda

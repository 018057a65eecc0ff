// isolate: a block of steps run by a child process. The executor hands the step to its
// BlockRunner (executor.h), which starts the child and records how it ended.
#include "runner/exec/run_state.h"

namespace vmm {

using report::StepRecord;

template <>
Status RunStep<Op::kIsolate>(const PlanStep& step, RunState& state, StepRecord& record) {
  if (step.block == nullptr) return InternalError("isolate step without its block plan");
  if (state.blocks == nullptr) {
    return RuntimeError(
        "this run cannot start child processes, so it cannot run an isolate block (vmm-run run "
        "can)");
  }
  // The named descriptors the child receives: every shareable handle this run exported so far
  // (borrowed: the run keeps owning them); the block's `import` steps take them by name.
  BlockRunner::BlockFds fds;
  for (const auto& [name, fd] : state.shared_handles) fds.emplace_back(name, fd.get());
  return state.blocks->RunBlock(step, fds, record);
}

// "child 4242 exited 4 · CUDA_ERROR_ILLEGAL_ADDRESS (expected CUDA_ERROR_ILLEGAL_ADDRESS): YES"
template <>
std::string DescribeStep<Op::kIsolate>(const Plan&, const PlanStep& step, const StepRecord& r) {
  std::string out = "child";
  if (r.child) {
    const report::ChildRecord& c = *r.child;
    out += " " + std::to_string(c.pid);
    if (c.timed_out) {
      out += " timed out, killed";
    } else if (!c.stopped_by.empty()) {
      out += " killed: vmm-run got " + c.stopped_by;
    } else if (!c.signal.empty()) {
      out += " killed by " + c.signal;
    } else if (c.exit_status) {
      out += " exited " + std::to_string(*c.exit_status);
    }
    if (c.error) out += " · " + *c.error;
  }
  if (r.check) {
    out += " (expected " + r.check->expected + "): " +
           (r.check->verdict == report::Verdict::kPass ? "YES" : "NO, got " + r.check->actual);
  } else if (step.block != nullptr) {
    out += " (expected " + step.block->expect.Text() + ")";
  }
  return out;
}

}  // namespace vmm

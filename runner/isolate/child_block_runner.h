// ChildBlockRunner: the BlockRunner (runner/exec/executor.h) of `vmm-run run`. Each isolate block
// (alone, or one of a together group whose children run at the same time) runs in a child
// `vmm-run __child` (pipeline/isolate_child.h) with its own engine (its own CUDA context, or
// its own host twin with the fault trap on); the parent streams the child's step records into the
// block's record and judges how the child ended against the block's expectation.
//
// What the parent guarantees (docs/scenario-language.md, "Isolate blocks"):
//   - The child is started with posix_spawn of `exe` (default /proc/self/exe): never a fork of a
//     process that may hold a CUDA context.
//   - It never outlives the block: at the block's time limit, counted from when the child is ready
//     (its engine open: creating a CUDA context does not count; at most 60 s for that), it is
//     killed (SIGKILL, "timed_out");
//     when vmm-run is stopped (SIGINT, SIGTERM, SIGHUP) it is killed at once and the record says
//     so ("stopped_by"); if vmm-run itself dies, the child's PR_SET_PDEATHSIG kills it.
//   - It is always reaped, and every descriptor the parent opened for it is closed when RunBlock
//     returns.
//   - The child writes no report: its records become the block's `body`.
//   - On the CUDA backend the kernel log is read after the child ended, for the driver's Xid line
//     with the child's pid (`fault_line`); where it cannot be read the record says why.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "runner/exec/executor.h"

namespace vmm::isolate {

struct ChildBlockOptions {
  std::string exe = "/proc/self/exe";  // the vmm-run to start (tests name the built binary)
  std::string scenario_path;           // as the parent read it: the child parses the same text
  std::string scenario_text;
  std::vector<std::pair<std::string, std::string>> set;    // --set values, sweep point included
  std::vector<std::pair<std::string, std::string>> facts;  // the device facts the parent read
  std::vector<std::string> include_roots;                  // --include-root folders
  std::string backend;                                     // the parent's backend: "host" or "cuda"
  int device = 0;
  int host_devices = 2;  // devices the host twin emulates, as in the parent
  // What the children's times (ChildRecord's started_ms, ready_ms, ended_ms) count from: the run's
  // start (by default, when the options were made).
  std::chrono::steady_clock::time_point run_start = std::chrono::steady_clock::now();
};

class ChildBlockRunner final : public BlockRunner {
 public:
  explicit ChildBlockRunner(ChildBlockOptions options) : options_(std::move(options)) {}
  Status RunBlock(const PlanStep& step, const BlockFds& fds, report::StepRecord& record) override;
  // The group's children are started one after another, each handed its request, and only then
  // waited for, all in one poll loop: each keeps its own time limit, every stop signal kills all
  // of them, and each is reaped as soon as it ends (its ended_ms is its own).
  Status RunGroup(const PlanStep& group, const BlockFds& fds,
                  std::vector<report::StepRecord>& records) override;

 private:
  ChildBlockOptions options_;
};

}  // namespace vmm::isolate

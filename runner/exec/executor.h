// Executor: runs a validated Plan against an Engine and records what happened in report steps.
//
// Contract:
//   - The Plan came from BuildPlan with no diagnostics; the executor does not re-validate it.
//   - Steps run in order. A step whose engine call fails is recorded `failed` with the engine's
//     message, every later step is recorded `skipped`, and Run returns exit code 4. A failed check
//     continues the run (exit 1 at the end) unless the step is `fatal`, which skips the rest.
//   - Stop requests (base/stop_signal.h: SIGINT, SIGTERM, SIGHUP) are polled at every step
//     boundary (a burst of VMM steps is one boundary) and between the repetitions of a repeated
//     step: the run stops there, every later step is recorded `skipped`, and the summary says
//     interrupted, with the signal and the index of the first step not run (exit 128 + signal).
//     A signal during the last step still marks the run interrupted (stopped_at_step = steps).
//   - std::bad_alloc inside a step (vmm-run itself out of memory) fails that step like an engine
//     error (exit 4), so the report is still written.
//   - The executor never releases anything itself on failure: the Engine owns every object and
//     releases what is alive when it is destroyed (reverse creation order).
//   - Timing: wall_us is measured around the engine call(s) of the step only; bookkeeping, report
//     building and observer callbacks happen outside the timed region.
//   - Overhead: between the engine calls of consecutive VMM steps the executor only reads the
//     time-stamp counter (steady_clock off x86-64, and steady_clock once per 32 steps) and stores
//     plain facts; their records are built after the burst, or, for a burst of at least
//     kRecordAsideMinSteps, on the process's background thread while the burst runs, which also
//     compiles such a burst's later steps ahead of the calls (memory_burst.h, burst_records.h),
//     or right after each step when there is an observer. bench/runner_overhead_bench measures
//     what is left.
// One run per plan and engine at a time. Runs on separate threads share only the process's
// background thread, which serves one of them at a time (the others build their records
// themselves).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runner/base/unique_fd.h"
#include "runner/engine/engine.h"
#include "runner/plan/plan.h"
#include "runner/report/report.h"

namespace vmm {

// Receives each step's record as soon as it is final (for the console log).
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void OnStep(const PlanStep& step, const report::StepRecord& record) = 0;
};

// Runs isolate blocks: a PlanStep of op kIsolate (step.block holds the block's own plan and its
// expectation) in a child process, and together groups of them (op kTogether), one child each.
// Implemented above the executor (runner/isolate), which knows how to start one; the executor only
// hands the step over.
class BlockRunner {
 public:
  // Descriptors the child receives, by name (borrowed: the caller keeps them open during the
  // call). The child looks them up by these names (export/import hand over allocation handles).
  using BlockFds = std::vector<std::pair<std::string, int>>;

  virtual ~BlockRunner() = default;
  // Runs the block and fills `record`: the child's step records in `body`, the child's facts
  // (pid, exit status, signal, error, fault line) in `child` and the verdict against the block's
  // expectation in `check`. A verdict that fails is not an error Status; an error Status means
  // the block could not be run at all (no child could be started).
  virtual Status RunBlock(const PlanStep& step, const BlockFds& fds,
                          report::StepRecord& record) = 0;
  // Runs the blocks of a together group (a PlanStep of op kTogether; group.body holds one isolate
  // step per block) at the same time: every child is started before any is waited for, and the
  // call returns when every child has ended and was reaped. `records` has one record per block,
  // in order, each with its identity set; each is filled as RunBlock fills a lone block's. An
  // error Status means the group could not be run (a child could not be started): the children
  // already started are killed and reaped first.
  virtual Status RunGroup(const PlanStep& group, const BlockFds& fds,
                          std::vector<report::StepRecord>& records) = 0;
};

struct RunOutcome {
  std::vector<report::StepRecord> steps;
  std::vector<report::GraphRecord> graphs;  // each captured graph's structure (and DOT text)
  report::Summary summary;  // exit_code: 0 pass, 1 a check failed, 4 a step failed, 128+N signal
};

// The console's one-line account of a finished step ("va 0x7f.. ← pA1 · 2 MiB"), by its op.
std::string DescribeStepOutcome(const Plan& plan, const PlanStep& step,
                                const report::StepRecord& record);

// The outcome of a run that does not start because the scenario requires what this device or
// backend lacks: every step recorded `skipped`, result "skipped" with `reason`, exit code 5.
RunOutcome SkipPlan(const Plan& plan, const std::string& reason);

// Runs `plan` on `engine`. `observer` may be null. `blocks` runs the plan's isolate blocks; with
// none (null), an isolate block fails at run time and says why.
// `shared_handles`: shareable handles the run starts with, by name (an isolate block's child gets
// its parent's exported fds this way); `import` steps find them as if exported by this run.
RunOutcome RunPlan(const Plan& plan, Engine& engine, StepObserver* observer,
                   BlockRunner* blocks = nullptr,
                   std::map<std::string, UniqueFd> shared_handles = {});

}  // namespace vmm

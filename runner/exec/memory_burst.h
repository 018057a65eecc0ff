// A memory burst: consecutive VMM steps of the top-level plan that run once (no repeat, no
// expect_error), compiled into HotVmmSteps and run back to back (RunVmmSteps), their records
// built after their calls (internal to runner/exec; RunPlan's loop hands each burst here).
//
// Contract:
//   - The burst starts at plan step `first`, which IsBurstable, and takes every burstable step
//     after it; with `one_step` (the run has an observer) it is that step alone, so the console
//     shows each step as it ends. `plan_bare` is EveryCreateIsBare(state.plan).
//   - The steps' records are appended to `records` in plan order, each handed to `emit` once
//     final: the successful steps' in order, then the failed step's (status failed, the error).
//   - A long burst (at least kRecordAsideMinSteps steps, every create in it `bare`) has its
//     records built on the process's background thread while its calls run, and, when every
//     create of the plan is bare, its steps after the first kRecordAsideMinSteps compiled there
//     too, ahead of the calls (burst_records.h). `emit` then runs on that thread.
//     Otherwise the run's thread compiles the whole burst before its first call and builds the
//     records after its last.
//   - Stop requests are not polled inside a burst: the caller polls at its boundaries.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "runner/exec/run_state.h"

namespace vmm {

// Whether `step` can be part of a burst (here, and in a thread of a threads group:
// thread_steps.cc).
inline bool IsBurstable(const PlanStep& step) {
  return IsMemoryOp(step.op) && step.repeat <= 1 && step.expect_error == nullptr;
}

// Whether every create of `plan` is bare (its record is its handle and size: one device, no
// read-back, no granularity), so that any burst of it may have its records built aside.
bool EveryCreateIsBare(const Plan& plan);

struct BurstEnd {
  size_t last = 0;      // the index of the burst's last plan step run (the failed one, if any)
  bool failed = false;  // step `last` failed (its record says why)
};

BurstEnd RunMemoryBurst(size_t first, bool one_step, bool plan_bare, RunState& state,
                        std::vector<report::StepRecord>& records,
                        const std::function<void(const PlanStep&)>& emit);

}  // namespace vmm

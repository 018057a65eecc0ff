// RunState: what the executor knows about live objects while a plan runs (internal to runner/exec).
//
// Slots are the Plan's dense indices. Addresses recorded per step feed check_address.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runner/engine/engine.h"
#include "runner/plan/plan.h"
#include "runner/report/report.h"

namespace vmm {

struct Snapshot {
  std::vector<uint32_t> words;  // raw bits of the fp32 elements
  uint64_t hash = 0;            // datagen hash, as the engine computed it
};

struct RunState {
  RunState(const Plan& p, Engine& e);

  const Plan& plan;
  Engine& engine;
  std::vector<DevicePtr> buffer_va;                    // by buffer slot (0 = not reserved)
  std::vector<AllocHandle> allocs;                     // by alloc slot
  std::vector<GraphHandle> graphs;                     // by graph slot
  std::vector<ExecHandle> execs;                       // by exec slot
  std::vector<std::optional<Snapshot>> snapshots;      // by snapshot slot
  std::vector<std::optional<DevicePtr>> step_address;  // by top-level step index
};

// What a VMM step's engine call produced, as plain data: written between two engine calls, so
// it holds no strings and needs no allocation. RecordVmmStep turns it into report fields.
struct VmmOutcome {
  double wall_us = 0;   // around the engine call only
  DevicePtr va = 0;     // reserve, map: the address
  uint64_t handle = 0;  // create: the engine's handle
  SyncNote sync;        // unmap, release: whether they waited for in-flight work
};

bool IsVmmOp(Op op);  // reserve, free, create, release, map, set_access, unmap

// The engine call of a VMM step and the run state it changes (addresses, handles); nothing else.
Status ExecuteVmmStep(const PlanStep& step, RunState& state, VmmOutcome& out);
// The step's report fields (wall time, addresses, details) from `out`; `ok`: the call succeeded.
void RecordVmmStep(const PlanStep& step, const VmmOutcome& out, bool ok,
                   report::StepRecord& record);

// A record with the step's identity (index, name, op, line) and room for its facts.
report::StepRecord NewStepRecord(const PlanStep& step);

// Runs one step's engine work and fills `record` (status, timings, addresses, details, check).
// Returns the engine's error when the step failed at run time; a failed check is not an error.
Status RunVmmStep(const PlanStep& step, RunState& state, report::StepRecord& record);
Status RunKernelStep(const PlanStep& step, RunState& state, report::StepRecord& record);
Status RunGraphStep(const PlanStep& step, RunState& state, report::StepRecord& record);
Status RunCheckStep(const PlanStep& step, RunState& state, report::StepRecord& record);

}  // namespace vmm

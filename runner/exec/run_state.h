// RunState: what the executor knows about live objects while a plan runs (internal to runner/exec).
//
// Slots are the Plan's dense indices. Addresses recorded per step feed check_address.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/base/stopwatch.h"
#include "runner/base/unique_fd.h"
#include "runner/engine/engine.h"
#include "runner/exec/executor.h"
#include "runner/plan/plan.h"
#include "runner/report/report.h"

namespace vmm {

class FaultEngine;

// A snapshot taken by the run: storage the engine owns (device memory by default, or pinned or
// pageable host memory) and the datagen hash of what it holds, computed where the data lives when
// it was written. Nothing of its contents is held by the executor.
struct Snapshot {
  SnapshotHandle storage;
  uint64_t hash = 0;
};

class BurstProgress;  // burst_records.h: how far a burst has got
struct ThreadSync;    // thread_steps.cc: a threads group's sync points while it runs

struct RunState {
  // `vmm` is where the VMM calls go (below); null: to `e`.
  RunState(const Plan& p, Engine& e, BlockRunner* b = nullptr, Engine* vmm = nullptr);

  const Plan& plan;
  Engine& engine;
  // The engine the VMM calls (reserve, free, create, release, map, set_access, unmap) go to:
  // `engine`, or, where that is a threads group's SharedEngine over an engine that takes them
  // from several threads at once (ConcurrentVmm), that engine itself, which SharedEngine would
  // forward them to unlocked anyway: a thread's call then reaches the driver one virtual call
  // sooner. Every other call goes to `engine`.
  Engine& vmm_engine;
  BlockRunner* blocks;  // runs isolate blocks; null where there is none (then they fail)
  std::vector<DevicePtr> buffer_va;                    // by buffer slot (0 = not reserved)
  std::vector<AllocHandle> allocs;                     // by alloc slot
  std::vector<GraphHandle> graphs;                     // by graph slot
  std::vector<ExecHandle> execs;                       // by exec slot
  std::vector<std::optional<Snapshot>> snapshots;      // by snapshot slot
  std::vector<std::optional<DevicePtr>> step_address;  // by top-level step index
  // The engine's device for each scenario device (-1 for device 0: the engine's own), and the
  // scenario device selected now (SelectDevice): kOnDevice steps select theirs when it differs,
  // so a scenario on one device never calls SelectDevice.
  std::vector<int> device_ordinal;
  int current_device = 0;
  std::vector<DevicePtr> last_va;  // by buffer slot: its latest reservation (kept after free)
  std::vector<uint64_t> marks;     // by mark slot: the device's free bytes at the mark
  // By alloc slot, what a create with properties found out in its burst (its record is built
  // later): the granted properties, and the granularity its size was checked against (0: none).
  std::vector<std::optional<AllocProps>> granted;
  std::vector<uint64_t> granularity;
  // While a capture runs: the lane the engine captures on now (CaptureLane is called on change).
  bool capturing = false;
  int capture_lane = 0;
  std::vector<report::GraphRecord>* graph_records = nullptr;  // every capture's structure
  // The shareable handles `export` made, by name (Plan::handles): POSIX fds the run owns and
  // closes when it ends. `import` reads them without taking them. Isolate blocks pass these to
  // their child processes (SCM_RIGHTS), which import them under the same names.
  std::map<std::string, UniqueFd> shared_handles;
  // While a threads group runs: its sync points (signal / wait_for). The group's threads share
  // this state; the validator proved that no two of them touch one slot unordered.
  ThreadSync* sync = nullptr;
  // The run's top-level records so far (the last one is the step running now): check_record
  // reads the facts of earlier steps there.
  const std::vector<report::StepRecord>* records = nullptr;
  // The run's fault injector (inject_error arms it): set when the plan injects errors, and then
  // `engine` forwards through it.
  FaultEngine* faults = nullptr;
};

// The address of the first element of buffer or view `slot` (a view: its buffer's reservation
// plus the view's offset). Data steps address tensors through this; memory steps use buffer_va.
inline DevicePtr DataVa(const RunState& state, int slot) {
  const PlanBuffer& b = state.plan.buffers[slot];
  return b.base >= 0 ? state.buffer_va[b.base] + b.offset : state.buffer_va[slot];
}

// Runs `call` (returning a Status), with its wall time in record.wall_us; returns its Status.
template <typename Call>
Status TimedCall(report::StepRecord& record, Call&& call) {
  Stopwatch watch;
  Status status = call();
  record.wall_us = watch.ElapsedUs();
  return status;
}

// A VMM step compiled for the hot loop: what its engine call needs and what the call returned,
// in one cache line.
struct alignas(64) HotVmmStep {
  Op op = Op::kReserve;
  Access access = Access::kReadWrite;
  bool waited = false;         // out (unmap, release): there was in-flight work to wait for
  bool hint_honoured = false;  // out (reserve with a hint): the range starts at the hint
  bool wait = true;            // in (unmap, release): false sends the call without waiting
  // create: its record is the handle and size alone (one device, no read-back, no granularity),
  // so building it reads nothing of the plan or the run state (cold lines after a burst).
  bool bare = false;
  // reserve: `alloc` is the buffer slot whose reservation the hint is relative to (-1: `offset`
  // is the hint itself, 0 for none); the call replaces `offset` with the hint it passed.
  int32_t buffer = -1, alloc = -1;
  uint64_t size = 0, offset = 0;
  uint64_t aux = 0;     // reserve: alignment; map: offset into the allocation; create: the
                        // scenario device; set_access: PlanStep::device_access;
                        // export, import: the handle's slot
  double wall_us = 0;   // out
  uint64_t result = 0;  // out: reserve, map: the address; create: the handle
  double wait_us = 0;   // out (unmap, release)
};
static_assert(sizeof(HotVmmStep) == 64, "one cache line per step");

// Fills `out` (a burst's slot: a step, or raw storage for one) from the plan step.
void CompileVmmStep(const PlanStep& step, const Plan& plan, HotVmmStep* out);
// Runs compiled steps back to back, updating the run state (buffer addresses, handles): the
// `count` given, and, where `progress` has a recorder compiling ahead, as many more as it compiles
// (BurstProgress::AwaitCompiled). Returns how many succeeded; when a call failed, `*error` says
// why and steps[return value] is the step that failed (every step before it succeeded). A step's
// wall_us runs from the end of the previous call (or the start) to the end of its own, so it
// includes the few stores the executor makes in between (nanoseconds), not just the call. Between
// two calls only the time-stamp counter (steady_clock off x86-64) is read; the steady_clock time
// of every chunk of steps is shared out in proportion, so the wall_us of the steps run add up to
// the burst's time. With `progress`, each chunk's steps are published there once their times are
// final (a BurstRecorder builds their records meanwhile); the burst's last steps are the caller's
// to hand over (BurstRecorder::Finish). The loop runs inside an Engine::HoldContext bracket: it
// makes no engine call but the steps' memory calls.
size_t RunVmmSteps(HotVmmStep* steps, size_t count, RunState& state, Status* error,
                   BurstProgress* progress = nullptr);
// The step's report fields from `done` (`ok`: its call succeeded), and its address in
// state.step_address for check_address.
void RecordVmmStep(const PlanStep& step, const HotVmmStep& done, bool ok, RunState& state,
                   report::StepRecord& record);

// Adds what an allocation was granted (read back from the driver) to `record` as details
// (granted_location, granted_numa_node, granted_compression, ...): device facts, which
// `vmm-run diff` does not compare.
void AddGrantedDetails(const AllocProps& granted, report::StepRecord& record);

// A record with the step's identity (index, name, op, line) and room for its facts.
report::StepRecord NewStepRecord(const PlanStep& step);
// Appends NewStepRecord(step) to `records`, built in place; returns it.
report::StepRecord& AppendStepRecord(std::vector<report::StepRecord>& records,
                                     const PlanStep& step);

// The executor's handler of op `op`: runs the step's engine work and fills `record` (status,
// timings, addresses, details, check). Returns the engine's error when the step failed at run
// time; a failed check is not an error. One specialization per row of ops.def, defined in the
// file of the op's family (vmm_steps.cc, kernel_steps.cc, graph_steps.cc, check_steps.cc): a row
// without one is a link error that names the op.
template <Op op>
Status RunStep(const PlanStep& step, RunState& state, report::StepRecord& record);

// The console's one-line account of a finished step of op `op` ("va 0x7f.. · 2 MiB"), from the
// plan and the record; defined next to RunStep<op>.
template <Op op>
std::string DescribeStep(const Plan& plan, const PlanStep& step, const report::StepRecord& record);

#define VMM_OP(Enum, name, Family, Flags, label)                                               \
  template <>                                                                                  \
  Status RunStep<Op::Enum>(const PlanStep& step, RunState& state, report::StepRecord& record); \
  template <>                                                                                  \
  std::string DescribeStep<Op::Enum>(const Plan& plan, const PlanStep& step,                   \
                                     const report::StepRecord& record);
#include "runner/vocab/ops.def"
#undef VMM_OP

// Runs `step` (step.repeat times) into `record`, as the executor's loop does: its Status is the
// step's run-time failure (running out of memory included). `samples`, when given, receives the
// wall time of every run.
Status RunRecorded(const PlanStep& step, RunState& state, report::StepRecord& record,
                   std::vector<double>* samples = nullptr);
// Selects the step's device when its op runs on one (kOnDevice) and it is not the current one.
Status SelectStepDevice(const PlanStep& step, RunState& state);
// Runs `step` once through its op's RunStep (the op table's dispatch), on its device.
Status Dispatch(const PlanStep& step, RunState& state, report::StepRecord& record);
// Records `steps` of a capture body (or a parallel branch) on their lanes, naming each node after
// its step; each step's record is appended to `records` (a failed one too, marked failed).
Status CaptureSteps(const std::vector<PlanStep>& steps, RunState& state,
                    std::vector<report::StepRecord>& records);
// The report's account of a graph read back from the engine: node names, types, the buffers each
// touches (addresses matched to the scenario's buffers and views), edges, and the structure hash.
report::GraphRecord RecordGraph(const GraphStructure& structure, const RunState& state);
// expect_error.cc: runs a step with expect_error through Dispatch. It passes (ok, a passing check)
// only when the call fails with exactly step.expect_error and the engine's state (inventory, and
// the checksums of the readable bytes the call could touch) is the same after it as before. Every
// other outcome is an error Status (the run stops: after a call that succeeded the state is no
// longer the one the plan assumed) with a failing check; record.expected_error/actual_error and
// the check say what was expected and what the call returned.
Status RunExpectingError(const PlanStep& step, RunState& state, report::StepRecord& record);
// The console's account of a step with expect_error.
std::string DescribeExpectedError(const report::StepRecord& record);
// The memory-family handler shared by the VMM ops: compile, call, record.
Status RunVmmStep(const PlanStep& step, RunState& state, report::StepRecord& record);
// Runs the steps that undo a repeated VMM call (PlanStep::body) back to back: untimed, unrecorded;
// the first failure is returned, naming the undo call.
Status RunUndoSteps(const std::vector<PlanStep>& steps, RunState& state);

}  // namespace vmm

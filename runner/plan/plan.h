// The plan: a scenario whose names are resolved to dense slot indices and whose every step was
// proven legal by simulating the VMM/graph state machine (BuildPlan). The executor runs a Plan
// against an Engine without re-checking anything: if BuildPlan returned no diagnostics, every
// reference is to a live object, every map is inside its reservation and over unmapped space, every
// unmap covers mapped space, every size and offset is a multiple of the granularity, and every
// graph/exec used exists. Pure C++: no YAML, no CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/launch_config.h"
#include "runner/base/boxed.h"
#include "runner/base/diagnostic.h"
#include "runner/scenario/partial_scenario.h"
#include "runner/scenario/scenario.h"
#include "runner/vocab/access.h"
#include "runner/vocab/alloc_props.h"
#include "runner/vocab/isolate.h"

namespace vmm {

struct VmmRule;  // runner/vocab/vmm_rules.h
struct IsolatedBlock;

// A buffer or a view (base >= 0). Data steps address both alike, by slot.
struct PlanBuffer {
  std::string name;
  int base = -1;        // views: the slot of the buffer whose reservation holds the view
  uint64_t offset = 0;  // views: bytes from the start of that reservation
  std::vector<uint64_t> shape;
  uint64_t elements = 0;
  uint64_t bytes = 0;  // elements * 4
  uint64_t reservation_size =
      0;  // from the reserve step (bytes rounded up to granularity if unset)
};

// What a check step expects, decoded from the step's `expect` string.
enum class Expectation {
  kNone,        // steps that check nothing
  kPass,        // check_matmul: every element within the fp64 error bound
  kEqual,       // check_equal, check_value
  kDifferent,   // check_equal, check_value, check_address, check_kernel_params
  kSame,        // check_address
  kIdentical,   // check_kernel_params
  kUpdateCode,  // update: see PlanStep::expect_update
  kAccess,      // check_access: PlanStep::access is the expected access
  kHonoured,    // reserve with expect_address: the range starts at the hint
  kMoved,       // reserve with expect_address: it does not
  kAnswers,     // the queries: see PlanQuery (every stated answer holds)
};

// The exported handles one child receives: one message carries them all
// (runner/isolate/frame_channel.h kMaxFdsPerFrame), so this bound is fixed. The children a
// together group starts at once are the together_blocks limit (base/limits.h).
inline constexpr size_t kMaxChildHandles = 64;

// A bound on a byte count a query measures: check_memory's freed/used, check_granularity's
// minimum/recommended, check_range's size.
struct Bound {
  enum class Cmp : uint8_t { kEqual, kAtLeast, kAtMost, kAbout };
  std::string quantity;  // what is measured, as the report says it: "freed", "minimum", "size"
  Cmp cmp = Cmp::kEqual;
  uint64_t value = 0;
  uint64_t tolerance = 0;  // kAbout: |observed - value| <= tolerance
  bool Holds(int64_t observed) const;
  // "freed at least 4 MiB", "minimum at most 2 MiB", "size 2 MiB", "used about 4 MiB ± 1 MiB".
  std::string Text() const;
};

// Which granted properties check_properties compares (bits of PlanQuery::asserted).
enum PropCheck : uint32_t {
  kCheckLocation = 1u << 0,
  kCheckNumaNode = 1u << 1,
  kCheckCompression = 1u << 2,
  kCheckGpuDirectRdma = 1u << 3,
  kCheckDevice = 1u << 4,
};

// What a query step asks and expects (the queries of ops.def's kQuery family).
struct PlanQuery {
  int mark = -1;     // mark: its slot; check_memory: the slot of the mark named by `since`
  int same_as = -1;  // retain: the alloc slot the retained handle must be the memory of, or -1
  int base = -1;     // check_range: the buffer or view the range must start at, or -1
  uint64_t base_offset = 0;  // check_range: bytes after `base`
  AllocProps props;          // check_granularity: the properties asked about; check_properties: the
                             // expected values of the `asserted` ones
  uint32_t asserted = 0;     // check_properties: PropCheck bits
  int device = 0;            // check_properties: the scenario device the memory must be on
  std::vector<Bound> bounds;  // check_memory, check_granularity, check_range (size)
  // mark and check_memory: the bytes of device memory the scenario's own creates hold on the
  // step's device (PlanBuilder::HeldBytes), at the mark and now. check_memory: `subject: device`
  // judges cuMemGetInfo's free memory instead (device_subject).
  uint64_t held_at_mark = 0, held_now = 0;
  bool device_subject = false;
};

// How a create makes its allocation: the properties asked for, and what to check or read back.
struct AllocSpec {
  AllocProps props;  // size included
  // `granularity:` on the create: size must be a multiple of this granularity of the properties.
  std::optional<GranularityKind> granularity;
  bool read_back = false;  // record the granted properties (any property key was given)
};

// Field order matters: what a VMM step needs (to run and to be reported) comes first, so it
// spans two cache lines; the executor reads it again after a burst of driver calls, cold.
struct PlanStep {
  // The fields a memory burst reads (CompileVmmStep, RecordVmmStep, the record's identity) come
  // first, in two cache lines: a run of thousands of VMM steps walks the plan once to compile the
  // burst and once to record it.
  const Step* src = nullptr;  // the scenario step; the Scenario must outlive the Plan
  Op op = Op::kSynchronize;
  Access access = Access::kReadWrite;
  bool named = false;  // the scenario gave the step a name (label is that name)
  bool fatal = false;
  // set_access written with a per-device map (`access: {0: read}`), not one word: the report
  // spells the access as that list. Kept here so the executor need not read `src` (cold, large).
  bool access_per_device = false;
  bool wait = true;  // unmap/release: wait for in-flight work first (false: isolate blocks only)
  bool in_thread = false;  // a step of a threads group's thread (index: its place in the thread)
  int index = 0;           // position in the top-level step list (capture bodies: inner index)
  int line = 0;            // the step's line in the scenario file
  uint32_t repeat = 1;
  // Slots (index into Plan's name tables), -1 when unused.
  int buffer = -1, alloc = -1;
  int other = -1;
  int handle = -1;  // export / import: the shareable handle's slot
  // The scenario device (0 ..) the step's work runs on (kernels, copies, captures, instantiate,
  // replay: the exec's; checks: 0), the device create places memory on, or the device
  // check_access asks about.
  int device = 0;
  // Resolved numbers (defaults applied).
  uint64_t offset = 0, size = 0, alloc_offset = 0, alignment = 0;
  // set_access: the access of each scenario device it names, 2 bits per device (device d at bits
  // 2d..2d+1): 0 not named, else 1 + Access (kNone 1, kRead 2, kReadWrite 3). See PackedAccess.
  uint64_t device_access = 0;
  // expect_error: the CUresult name the call must return (a literal of runner/vocab/cuda_errors.h),
  // or nullptr when the step expects to succeed. The plan simulates no effect for such a step: it
  // assumes the state is unchanged after it (the executor proves it).
  const char* expect_error = nullptr;
  std::string label;  // the step's name, or "<op> <target>" (e.g. "map A") when unnamed

  // copy: the devices whose memory backs each side at this step, as bits: bit d for the source,
  // bit 32 + d for the destination (a peer copy has different bits on the two sides).
  uint64_t memory_devices = 0;
  int graph = -1, exec = -1, snapshot = -1;
  int a = -1, b = -1, c = -1;
  std::vector<int> of_steps;  // check_address: indices of the steps whose addresses are compared
  std::vector<int> graphs;    // check_kernel_params
  uint64_t seed = 0;
  uint32_t pattern = 0;  // memset / check_value: the 32-bit word every element is set to / holds
  uint32_t m = 0, n = 0, k = 0;  // matmul / check_matmul dimensions
  float alpha = 1.0f;            // add / scale / axpy / check_elementwise: c = alpha * a (+ b)
  Expectation expect = Expectation::kNone;
  UpdateCode expect_update = UpdateCode::kSuccess;
  bool async = false;  // fill/matmul/copy: leave the work in flight (no OpTiming)
  // reserve: the address hint is `offset` bytes after the (current or last) reservation of buffer
  // `other`; with `other` -1, `offset` is the hint itself (0: none).
  Boxed<PlanQuery> query;  // the queries (kQuery ops)
  // snapshot: where it lives (`to:`, `pinned:`); copy: -1 unless the destination is a snapshot
  DataPlace place = DataPlace::kDevice;
  int to_snapshot = -1;
  bool verify_host = false;  // check_matmul `verify: host`: read back and judge on the CPU

  // Graphs (plan_graphs.cc, plan_graph_nodes.cc).
  // record_event / wait_event: event slot; signal / wait_for: sync point slot; busy (with
  // `until`) and set_flag: flag slot.
  int event = -1;
  int lane = 0;  // capture body: the capture stream the step records on (0: origin)
  std::vector<int> branch_lanes;  // parallel: each branch's lane (the first is `lane` itself)
  // Captured steps: the node's name as the engine and the report know it (the label). set_node:
  // the node to change. update: the step expected to make the error node ("": not checked).
  // check_record: the name of the step whose record it judges.
  std::string node_name;
  bool upload = false, auto_free_on_launch = false, device_launch = false;  // instantiate
  int8_t enabled = -1;  // set_node: -1 keep, 0 disable, 1 enable

  // The rule of runner/vocab/vmm_rules.h that the step breaks and that expect_error let through
  // (the driver refuses it safely); nullptr when the step breaks none.
  const VmmRule* broken_rule = nullptr;
  // inject_error: the CUresult literal the armed call returns; `other` is the FaultKind, `size` the
  // nth call. hold_memory: `size` is the bytes to leave free.
  const char* injected_error = nullptr;
  uint64_t duration_ns = 0;                             // busy
  kernels::BusyTouch touch = kernels::BusyTouch::kEnd;  // busy: what it does with its buffer
  // thread: the thread runs with no CUDA context current (`context: none`); its steps are VMM
  // calls and sync points only (PlanBuilder::AllowedInThread).
  bool no_context = false;

  // capture: the recorded steps. set_node: one step, the node's new parameters (a step of the
  // node's op whose fields are the node's after the change), or none when only `enabled` changes.
  // together: one isolate step per block, in the order written (index: position in the group).
  // threads: one kThread step per thread (label: its name), whose `body` holds its steps.
  // create / map / unmap / release with repeat > 1: the memory steps that undo the op between two
  // repetitions (release; unmap; map and set_access as before; create), run untimed and
  // unrecorded, so every repetition starts from the same state (plan_repeat.cc).
  std::vector<PlanStep> body;
  std::vector<std::vector<PlanStep>> branches;  // parallel: each branch's steps
  // isolate: the block's own plan (its steps, run by a child process) and what it expects. Shared
  // so that PlanStep stays copyable; immutable once built.
  std::shared_ptr<const IsolatedBlock> block;
};

// set_access's per-device list packed into PlanStep::device_access.
inline uint64_t PackAccess(uint64_t packed, int device, Access access) {
  const int shift = 2 * device;
  return (packed & ~(uint64_t{3} << shift)) | (uint64_t{1} + static_cast<uint64_t>(access))
                                                  << shift;
}
// Calls `f(device, access)` for every device named in `packed`, in device order.
template <typename F>
void ForEachPackedAccess(uint64_t packed, F&& f) {
  for (int device = 0; packed != 0; ++device, packed >>= 2) {
    if ((packed & 3) != 0) f(device, static_cast<Access>((packed & 3) - 1));
  }
}

struct Plan {
  std::string scenario_name;
  uint64_t granularity = 0;
  std::vector<PlanBuffer> buffers;
  std::vector<std::string> allocs, graphs, execs, snapshots, events;  // slot -> name
  std::vector<std::string> handles;    // slot -> name of a shareable handle (one export each)
  std::vector<uint64_t> alloc_sizes;   // slot -> bytes
  std::vector<int> alloc_devices;      // slot -> scenario device whose memory it is (-1: host RAM)
  std::vector<AllocSpec> alloc_specs;  // slot -> how create makes it (retain: the size only)
  std::vector<std::string> marks;      // slot -> the mark step's name
  std::vector<std::string> sync_points;    // slot -> a threads group's sync point (signal/wait_for)
  std::vector<std::string> flags;          // slot -> a busy flag (busy's `until`, set_flag)
  std::vector<uint64_t> snapshot_bytes;    // slot -> bytes it holds
  std::vector<DataPlace> snapshot_places;  // slot -> where it lives
  std::vector<PlanStep> steps;
  // The devices the scenario may name: `requires: devices`, else 1. Every step's device is below.
  int devices = 1;
  // The scenario devices the steps name (0 always), ascending.
  std::vector<int> used_devices{0};
  // (accessor, owner): a set_access gives device `accessor` access to memory on device `owner`
  // (owner != accessor), so the run needs peer access between them (cuDeviceCanAccessPeer).
  std::vector<std::pair<int, int>> peer_access;
  // A step arms the run's fault injector (inject_error): the run wraps its engine in a
  // FaultEngine (runner/engine/fault_engine.h); otherwise calls go straight to the engine.
  bool injects_errors = false;
  // A step is a threads group: the run calls its engine from several threads, through one
  // SharedEngine for the whole run (runner/engine/shared_engine.h).
  bool has_threads = false;
};

// An isolate block, validated as a plan of its own: the scenario's buffers and views (declarations
// only: the child reserves, creates and maps for itself), its steps at indices 0.., and the names
// of the objects it makes. A child process runs `plan` with RunPlan.
struct IsolatedBlock {
  Plan plan;
  BlockExpectation expect;
};

// The state errors of what is left of a scenario whose schema errors set steps aside
// (PartialScenario): BuildPlan's diagnostics, less those of the tainted steps, appended to
// `diagnostics` (the schema errors), which end sorted by position. Nothing when nothing was left.
void AddStateErrors(const PartialScenario& partial, std::vector<Diagnostic>* diagnostics);

// What BuildPlan keeps of the planned steps: all of them (to run them), or none (to validate: each
// step is planned, judged and dropped, so a long scenario's plan never holds every step at once).
enum class PlannedSteps { kKeep, kDrop };

// Resolves and validates `scenario`. On success `diagnostics` is empty; otherwise it holds every
// problem found (one pass, in file order) and the returned Plan must not be run (with kDrop it has
// no steps and can never run).
Plan BuildPlan(const Scenario& scenario, std::vector<Diagnostic>* diagnostics,
               PlannedSteps keep = PlannedSteps::kKeep);

}  // namespace vmm

// PlanBuilder: the machinery behind BuildPlan (plan.h). It walks the scenario in file order and
// simulates the VMM + graph state machine (reservations, allocs, mappings, access, graphs, execs,
// snapshots) to prove every step legal, reporting every problem it finds and carrying on with a
// best guess of the intended state, so one mistake does not cascade into many messages.
//
// Slots: buffers get one slot each (declaration order). Allocs, graphs and execs get a new slot
// per creation, so a name re-used after release/destroy names a new object (with its own size)
// and the executor can index handles by slot without reuse. Snapshots get one slot per name.
// Internal to runner/plan; use BuildPlan.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runner/base/diagnostic.h"
#include "runner/plan/name_table.h"
#include "runner/plan/plan.h"
#include "runner/plan/reservation_state.h"
#include "runner/scenario/scenario.h"
#include "runner/vocab/graph_node.h"

namespace vmm {

class PlanBuilder {
 public:
  PlanBuilder(const Scenario& scenario, std::vector<Diagnostic>* diagnostics,
              PlannedSteps keep = PlannedSteps::kKeep);
  Plan Build() &&;

  // An isolate block's builder: the parent's declarations (buffers, views, granularity), nothing
  // live, the block's steps. Step-name duplicates were already reported by the parent.
  PlanBuilder(const PlanBuilder& parent, const Step& block, const BlockExpectation& expect);
  Plan BuildBlock() &&;

 private:
  // Buffers a graph's kernels touch, with the access each needs (read or read_write).
  using BufferUses = std::vector<std::pair<int, Access>>;

  // The node a captured step makes, as the plan predicts it (plan_graph_nodes.cc).
  struct NodeModel {
    std::string name;  // the step's label (the engine's and the report's node name)
    bool named = false;
    NodeType type = NodeType::kEmpty;
    std::vector<int> deps;  // node indices, in the order the capture adds the edges
    BufferUses uses;        // buffers the node touches (a child graph: all of its nodes')
    // By use: the reservation (PlanBuilder::reservation_id_) whose address the node holds for
    // that buffer; kGraphMemory for a graph allocation. A graph keeps the addresses it captured.
    std::vector<int> reservation_ids;
    // if / while: the memset and child graph nodes of its body, nested bodies included (the body's
    // own model is discarded; cudaGraphInstantiate checks these memsets too).
    std::vector<NodeModel> body_memsets;
    int alloc = -1;            // mem_alloc: the buffer it allocates
    int freed = -1;            // mem_free: the buffer it frees
    bool host_source = false;  // memcpy from a snapshot (host memory)
    PlanStep spec;             // the step's resolved parameters (set_node starts from them)
  };
  struct GraphModel {
    std::vector<NodeModel> nodes;              // in capture order
    std::vector<std::vector<bool>> ancestors;  // ancestors[n][m]: m precedes n
    bool memory_nodes = false;                 // holds mem_alloc / mem_free nodes
    bool conditional_nodes = false;            // holds if / while nodes
    int live_execs = 0;                        // execs instantiated from it and not destroyed
  };
  struct ExecModel {
    int graph = -1;                // graph slot it was instantiated from (node names)
    std::vector<NodeModel> nodes;  // what each node does now (after updates and set_node)
    std::vector<bool> enabled;
    bool auto_free_on_launch = false;
  };
  // While a capture body is planned: the lanes (capture streams) and the graph being built.
  struct CaptureContext {
    std::string graph;                        // its name, for messages
    int line = 0;                             // the capture step's line
    std::vector<std::vector<int>> lane_deps;  // by lane: the nodes the next node will depend on
    int lane = 0;                             // the lane of the step being planned
    GraphModel model;
    bool failed = false;  // a step of the body failed to plan: no node checks after it
    int device = -1;      // the scenario device of the first kOnDevice step
    const Step* device_step = nullptr;  // that step (for messages)
    // Inside the body of if / while steps (plan_conditional.cc): how deep, and the innermost's op
    // name and label (for messages). `model` and `lane_deps` are then the body's.
    int bodies = 0;
    std::string body_kind, body_label;
    // Set by Conditional for the if / while node AddNode makes next (NodeModel::body_memsets).
    std::vector<NodeModel> pending_body_memsets;
  };
  // A graph allocation (mem_alloc) by buffer slot.
  struct GraphAllocation {
    int graph = -1;      // graph slot of the allocating node; -1: not a graph allocation
    bool live = false;   // the memory exists now (after a replay that allocated it)
    int alloc_line = 0;  // line of the mem_alloc step
    int freed_line = 0;  // line of the step that last freed it (0: never)
  };

  // plan_builder.cc: driver, names; plan_kernels.cc, plan_graphs.cc, plan_checks.cc: the ops.
  void Error(const SourceLoc& loc, std::string message);
  // plan_expect_error.cc. A step that breaks rule `rule_id` of runner/vocab/vmm_rules.h: an Error,
  // unless the step has expect_error and the driver refuses the call safely (DriverVerdict
  // kRefuses, or kAccepts, which the run then reports as a call that succeeded): then the step is
  // let through (current_plan_->broken_rule). Calls the driver must never get (kCrashes,
  // kAcceptsUnsafely, kFaults) stay errors that say why, expect_error or not.
  void Refusal(const SourceLoc& loc, std::string message, std::string_view rule_id);
  // Resolves the step's expect_error name into p->expect_error (a CUresult name), or reports it.
  void ExpectError(const Step& step, PlanStep* p);
  // The runner/vocab/cuda_errors.h literal that `field` (scenario key `key`: expect_error, or an
  // isolate block's expect) names; nullptr, with an error that suggests a name, when it is none.
  const char* CudaErrorNamed(const Located<std::string>& field, const char* key);
  // Everything the builder simulates, so that a step with expect_error leaves it as it was
  // (SaveState before it, RestoreState after). A new member that simulates state belongs here too.
  struct SimulatedState;  // defined below, with the members it copies
  SimulatedState SaveState() const;
  void RestoreState(SimulatedState&& saved);
  // The value of `key` in Step::keys (a scalar key one op alone reads, as written), marked as read;
  // an unset, empty value when the step does not have it. Visit reports a key that its op's
  // planner never asked for. The mark is a `mutable` field of the Scenario: planning is one thread.
  static const Located<std::string>& Key(const Step& step, std::string_view key);
  template <typename T>
  static const SourceLoc& At(const Located<T>& field, const Step& step) {
    return field.set ? field.loc : step.loc;
  }
  void DeclareBuffers();
  // Adds a buffer or view ("buffer"/"view" in messages) with its shape; returns its slot, or -1
  // when the name is taken.
  int DeclareTensor(const BufferDecl& b, const char* kind);
  // Indexes explicit step names (for check_address) at every nesting level; duplicates are
  // reported when `report_duplicates_`.
  void IndexStepNames(const std::vector<Step>& steps);
  // Inside an isolate block, why a name that is live in the parent is not live here; call it only
  // when it is (ReservedInParent, LiveInParent).
  std::string BlockHint() const;
  bool ReservedInParent(int buffer) const {
    return parent_ != nullptr && parent_->reservations_[buffer].reserved();
  }
  bool LiveInParent(const NameTable PlanBuilder::*table, const std::string& name) const {
    return parent_ != nullptr && (parent_->*table).LiveSlot(name) >= 0;
  }
  // Visits every step of steps_ in order, keeping the planned steps in plan_.steps unless keep_
  // says to drop them (an isolate block's builder always keeps them: `at:` reads them).
  void PlanSteps();
  PlanStep Common(const Step& step, int index) const;
  PlanStep Visit(const Step& step, int index, BufferUses* capture_uses);

  // Resolves and checks one step of op `op` and simulates its effect. One specialization per row
  // of ops.def, in the file of the op's family (plan_memory.cc, plan_kernels.cc, plan_graphs.cc,
  // plan_checks.cc): a row without one is a link error that names the op. `capture_uses` is
  // non-null inside a capture body (kernels record the buffers they touch there).
  template <Op op>
  void PlanOp(const Step& step, PlanStep* p, BufferUses* capture_uses);
  using PlanFn = void (PlanBuilder::*)(const Step&, PlanStep*, BufferUses*);
  static const PlanFn kPlanners[];  // indexed by Op, from the op table

  // Decodes `expect` into p->expect: `choices` are the allowed words, the first is the default.
  void DecodeExpect(const Step& step, PlanStep* p,
                    std::initializer_list<std::pair<const char*, enum Expectation>> choices);
  int ResolveBuffer(const Located<std::string>& ref, const Step& step);
  void Kernel(const Step& step, PlanStep* p, BufferUses* capture_uses);
  bool MatmulShapes(const Step& step, PlanStep* p);
  // add / scale / axpy / check_elementwise: c = alpha * a (+ b) over buffers or views of one
  // element count; the output may be an input itself (in place) but not part of one. In a capture
  // (capture_uses set) the node's buffers are recorded for replay instead of checked now.
  void Elementwise(const Step& step, PlanStep* p, BufferUses* capture_uses = nullptr);
  // Whether the bytes of buffers/views `x` and `y` share any byte of one reservation.
  bool Overlap(int x, int y) const;
  // Whether buffers/views `x` and `y` are the same bytes of one reservation.
  bool SameBytes(int x, int y) const;
  // memset / check_value: exactly one of `value` or `byte`, into p->pattern.
  void Pattern(const Step& step, PlanStep* p);
  // isolate (plan_isolate.cc): the expectation, nesting, and the block's own plan.
  BlockExpectation DecodeBlockExpectation(const Step& step);
  void ResolveGraph(const Step& step, PlanStep* p);
  void ResolveExec(const Step& step, PlanStep* p);
  void Snapshot(const Step& step, PlanStep* p);
  uint64_t CopySide(const Step& step, const Located<std::string>& ref, Access need, int device,
                    BufferUses* capture_uses, int* buffer, int* snapshot);
  void CheckEqual(const Step& step, PlanStep* p);
  void CheckAddress(const Step& step, PlanStep* p);
  void CheckKernelParams(const Step& step, PlanStep* p);

  // plan_queries.cc: the queries, and the keys they share with create and reserve.
  // The properties named by `location`, `numa_node`, `compression`, `gpudirect_rdma` (create,
  // check_granularity); *any is set when one of them was written.
  AllocProps PropsFromKeys(const Step& step, bool* any);
  // The size written as map entry `e` ("2MiB", 4096); false (with an error) when it overflows.
  bool EntrySize(const StepMapEntry& e, uint64_t* bytes);
  // check_memory's `freed` or `used`: exactly one of at_least, at_most, about (+ tolerance).
  bool ReadBound(const StepMap& map, const char* quantity, const Step& step, Bound* out);
  // reserve's `address` and `expect_address` into p->other / p->offset / p->expect.
  void AddressHint(const Step& step, PlanStep* p);
  // The offset in its buffer's reservation of `offset` bytes into buffer or view `slot`, and the
  // live mapping there; nullptr (with an error naming `op`) when nothing is mapped there.
  const MappingRecord* MappedAt(int slot, uint64_t offset, const Step& step, uint64_t* at);

  // plan_memory.cc: reserve, free, create, release, map, set_access, unmap; access checks.
  void Reserve(const Step& step, PlanStep* p);
  void Free(const Step& step, PlanStep* p);
  void Create(const Step& step, PlanStep* p);
  void Release(const Step& step, PlanStep* p);
  void Map(const Step& step, PlanStep* p);
  void SetAccess(const Step& step, PlanStep* p);
  void Unmap(const Step& step, PlanStep* p);
  // plan_repeat.cc: `repeat` on a VMM call; each fills p->body with the steps that undo the call
  // between two repetitions (see PlanStep::body), or reports why it cannot be undone.
  bool UndoesRepetitions(const Step& step, const PlanStep& p);
  void UndoCreate(const Step& step, PlanStep* p);
  void UndoMap(const Step& step, PlanStep* p);
  // Before `range` of `r` is unmapped: its mappings and their access, to map and set again.
  void UndoUnmap(const Step& step, const ReservationState& r, const ByteRange& range, PlanStep* p);
  // Before the release: refused while the memory stays alive through a mapping or another handle.
  void UndoRelease(const Step& step, PlanStep* p);
  // plan_sharing.cc: create's handle_types, export, import.
  uint32_t HandleTypes(const Step& step);
  void Export(const Step& step, PlanStep* p);
  void Import(const Step& step, PlanStep* p);
  // Whether `value` is a multiple of the granularity; else an error (a Refusal of `rule_id` when
  // given: the driver refuses the same misalignment).
  bool Aligned(const Located<uint64_t>& field, const char* key, uint64_t value, const Step& step,
               std::string_view rule_id = {});
  // BlockHint() when alloc `name` is live in the parent, else "".
  std::string AllocHint(const std::string& name) const;
  // Refuses `wait: false` outside an isolate block.
  void NoWaitOnlyInBlocks(const Step& step);
  // Resolves the buffer of a memory op, refusing a view (memory ops act on reservations).
  int MemoryBuffer(const Step& step);
  // Resolves the buffer of a range op and checks it is reserved; -1 when not. With `freed_rule`, a
  // buffer that was freed is a Refusal of that rule, and the slot is returned when it is let
  // through.
  int ReservedBuffer(const Step& step, std::string_view freed_rule = {});
  // Applies defaults to offset/size and checks the range is aligned and inside the reservation.
  bool Range(const Step& step, int buffer, PlanStep* p, ByteRange* range);
  // set_access and unmap without a `size`: the range ends where the mapped run that starts at
  // `offset` does (mappings back to back, up to the first unmapped byte), so "the buffer" means
  // what is mapped of it. Where nothing is mapped at `offset` the range stays the rest of the
  // reservation (and is refused as unmapped, as before).
  void DefaultToMappedRun(const Step& step, const ReservationState& r, PlanStep* p,
                          ByteRange* range) const;
  // Checks that `buffer`'s tensor bytes are mapped with `need` access for scenario device
  // `device`; `actor` starts the message ("fill writes", "replay of 'e1' would touch").
  void Use(int buffer, Access need, const std::string& actor, const SourceLoc& loc, int device = 0);

  // plan_devices.cc: the step's `device` (0 when unset), checked against `requires: devices`.
  int Device(const Step& step);
  // Checks one device number written at `loc` (`what` names it in the message); false when it is
  // beyond the scenario's devices.
  bool CheckDevice(uint64_t device, const SourceLoc& loc);
  // set_access's per-device list (the map form, or the one word for device 0) into
  // p->device_access; applies it to `r` over `range` and notes peer access.
  void DeviceAccessList(const Step& step, PlanStep* p);
  void ApplyAccess(ReservationState& r, const ByteRange& range, uint64_t packed);
  // check_access: the tensor must be mapped (cuMemGetAccess refuses an unmapped address).
  void CheckAccess(const Step& step, PlanStep* p);
  // Bit d set for each scenario device whose memory is mapped under `buffer`'s tensor bytes.
  uint32_t MemoryDevices(int buffer) const;
  // " for device 1" in messages of a scenario with several devices, else "".
  std::string ForDevice(int device) const;

  // plan_graph_nodes.cc: capture bodies, lanes and nodes; graph memory; per-node updates.
  void CaptureSteps(const std::vector<Step>& steps, int lane, std::vector<PlanStep>* out);
  // A captured step that runs on a device must run on the capture's (its first such step's):
  // one capture records one device's stream. Other steps (events, host functions, ...) follow it.
  void CaptureDevice(const Step& step, PlanStep* p);
  // Adds the node `p` makes on lane p.lane, with the buffers it touches, and checks its order
  // against the graph's other nodes (allocation before use, no unordered conflicting access).
  void AddNode(const Step& step, const PlanStep& p, BufferUses uses);
  // Why nodes `a` and `b`, which neither precedes, conflict on a buffer (one writes what the other
  // touches), or "" when they do not.
  std::string Race(const NodeModel& a, const NodeModel& b) const;
  // The buffer whose reservation (or graph allocation) holds buffer or view `slot`.
  int Owner(int slot) const;
  // Adds `buffer` with `need` to `uses`, keeping the strongest access per buffer.
  static void AddUse(BufferUses* uses, int buffer, Access need);
  // Replay of exec `e`: the buffers its enabled nodes touch, then its graph allocations.
  void ReplayExec(const Step& step, int exec);
  // Why memory nodes of `nodes` (child graphs included) cannot be instantiated on `device` now:
  // the first memset node whose destination that device cannot write ("" when none). The driver
  // checks them (cudaGraphInstantiate, rule memset_node_without_write_access); it does not check
  // what kernels touch.
  // *stale: the problem is an address of a reservation freed since the capture.
  std::string UnwritableMemset(const std::vector<NodeModel>& nodes, int device, bool* stale) const;
  // Why buffer or view `buffer` cannot be used with `need` by `device` now, as the end of a
  // sentence about it ("is mapped read-only for device 0"), or "" when it can.
  std::string AccessProblemText(int buffer, Access need, int device) const;
  void ResolveEvent(const Step& step, PlanStep* p);
  // set_node: the node's new parameters in p->body, checked.
  void SetNode(const Step& step, PlanStep* p);
  // A check the exec's nodes must pass after a change: no two unordered nodes conflict.
  void CheckExecRaces(const Step& step, const ExecModel& exec);
  // plan_conditional.cc: if / while. Conditional plans the step (its word, its body) into p;
  // RefuseInBody reports a step a conditional body cannot hold (true when it did).
  void Conditional(const Step& step, PlanStep* p, BufferUses* uses);
  bool RefuseInBody(const Step& step);

  // plan_threads.cc: a threads group. Its sync points (signal / wait_for) by name while the group
  // is planned, and the thread being planned (nullptr outside a group).
  struct ThreadAccess;
  std::unordered_map<std::string, int> sync_points_;
  const Step* thread_ = nullptr;
  // True when `step` may run in a thread; otherwise an Error says why.
  bool AllowedInThread(const Step& step, bool no_context);
  // What a planned step of a thread touches, for the group's order check.
  std::vector<ThreadAccess> Footprint(const PlanStep& p) const;
  // signal / wait_for: resolves the step's sync point into p->event, or says it is outside a group.
  void SyncPoint(const Step& step, PlanStep* p);

  // plan_checkpoint.cc: the process's checkpoint state (an isolate block's child): running;
  // checkpointed since the checkpoint at `loc`; or failed, for good, by the restore at `loc`
  // that is expected to fail. `helper_hold`: the hold in place was made while checkpointed (the
  // helper process holds it, so return_memory may come before the restore).
  struct CheckpointModel {
    enum State { kRunning, kCheckpointed, kFailed } state = kRunning;
    SourceLoc loc;
    bool helper_hold = false;
  };
  CheckpointModel checkpoint_;
  // True when `step` may come now; otherwise an Error says why (while the process is checkpointed
  // only the op table's kWhileCheckpointed rows run).
  bool AllowedWhileCheckpointed(const Step& step);
  // At the end of a block: refuses one that ends checkpointed (a restore expected to fail ends it).
  void CheckRestoredAtEnd();

  // plan_flags.cc: busy flags. Each flag by name: its slot, the first busy that runs until it and
  // the set_flag that sets it. A busy that runs until a flag keeps the stream busy until then, so
  // the steps of the same step list (the top level, one thread) between the two must not queue
  // work behind it or wait for it (open_flags_, by thread_; nullptr: the top level).
  struct FlagState {
    int slot = -1;
    const Step* first_wait = nullptr;
    const Step* set_by = nullptr;
  };
  std::unordered_map<std::string, FlagState> flags_;
  std::unordered_map<const Step*, std::vector<std::pair<std::string, const Step*>>> open_flags_;
  // busy's `until`: the flag's slot into p->event (the kernel's wait opens it).
  void BusyUntil(const Step& step, PlanStep* p);
  // Before a step is planned: refuses it when it would queue behind, or wait for, a busy of its
  // step list that runs until a flag not set yet.
  void CheckOpenFlags(const Step& step);
  // After the last step: a flag some busy runs until that no step sets.
  void CheckFlagsSet();

  const Scenario& scenario_;
  const std::vector<Step>& steps_;  // the scenario's steps, or an isolate block's
  std::vector<Diagnostic>* diagnostics_;
  const PlanBuilder* parent_ = nullptr;  // inside an isolate block: the builder of the scenario
  bool report_duplicates_ = true;
  PlannedSteps keep_ = PlannedSteps::kKeep;  // the top-level steps: kept in the plan, or dropped
  // Inside a block whose expectation is not ok: steps may touch memory without access (Use()).
  bool faults_allowed_ = false;
  Plan plan_;
  uint64_t granularity_ = kDefaultGranularity;

  std::unordered_map<std::string, int> buffer_slots_;
  std::vector<ReservationState> reservations_;            // by buffer slot
  std::vector<std::pair<std::string, int>> reserved_by_;  // by buffer slot: step label, line
  std::vector<int> freed_line_;                           // by buffer slot, 0 = never freed
  std::vector<uint64_t> last_reserved_size_;  // by buffer slot: its latest reservation, 0 = none
  // By buffer slot: the id of its current reservation (one per reserve step, in order), or -1
  // while it is not reserved. A captured node records it (NodeModel::reservation_ids): a buffer
  // freed and reserved again may have another address, which the node does not follow.
  std::vector<int> reservation_id_;
  int reservations_made_ = 0;
  static constexpr int kGraphMemory = -2;
  // The reservation ids of `uses` now (AddNode, set_node): -1 for a buffer not reserved now (the
  // node holds no address of it; a replay refuses it), kGraphMemory for a graph allocation.
  // `child`: the graph a child_graph node copies, whose nodes hold the ids of their own capture.
  std::vector<int> ReservationIds(const BufferUses& uses, const GraphModel* child) const;
  std::unordered_map<std::string, int> marks_;  // mark step name -> mark slot, as they come
  std::vector<uint64_t> mark_held_;             // by mark slot: HeldBytes at the mark

  NameTable allocs_, graphs_, execs_;
  std::vector<GraphModel> graph_models_;       // by graph slot
  std::vector<ExecModel> exec_models_;         // by exec slot
  std::vector<GraphAllocation> graph_allocs_;  // by buffer slot
  std::unordered_map<std::string, int> event_slots_;
  CaptureContext* capture_ = nullptr;  // non-null while a capture body is planned
  // By alloc slot: for an imported allocation, the name of the allocation it came from.
  std::unordered_map<int, std::string> imported_from_;
  // By alloc slot: the slot of the create that made its memory (itself for a create; the
  // exporter's memory for an import of this process's export, the mapped memory for a retain), or
  // -1 for memory this process did not create (an import of the parent's export in a block).
  std::vector<int> alloc_memory_;
  // hold_memory / return_memory (one hold at a time, on device 0): the line of the hold in place,
  // 0 when none.
  int hold_line_ = 0;
  // The bytes of device memory on scenario device `device` that the creates of this process hold
  // now: each created allocation counts while a handle to its memory is live or it is mapped
  // (a release while mapped frees nothing; a retained handle keeps it). check_memory's subject
  // `scenario` (docs/scenario-language.md).
  uint64_t HeldBytes(int device) const;
  struct SharedHandle {  // an exported handle, by name
    int slot = -1;       // Plan::handles
    int alloc = -1;      // the exported allocation's slot
    std::string alloc_name;
    int line = 0;
  };
  std::unordered_map<std::string, SharedHandle> handles_;
  // The scenario device a graph's kernels were captured on / an exec runs on, by slot.
  std::vector<int> graph_devices_, exec_devices_;

  struct SnapshotInfo {
    int slot = -1;
    int buffer = -1;
    int line = 0;
  };
  std::unordered_map<std::string, SnapshotInfo> snapshots_;

  struct NamedStep {
    int index = -1;  // top-level index, -1 inside a capture
    Op op = Op::kSynchronize;
    int line = 0;
  };
  void IndexStepName(const Step& step, int index);
  // Explicit names, first occurrence; the keys are the names in steps_ (which outlive the builder).
  std::unordered_map<std::string_view, NamedStep> step_names_;

  // The step being planned (Visit), for Refusal.
  const Step* current_ = nullptr;
  PlanStep* current_plan_ = nullptr;

  struct SimulatedState {
    std::vector<PlanBuffer> buffers;  // reserve records a buffer's first reservation size
    std::vector<ReservationState> reservations;
    std::vector<std::pair<std::string, int>> reserved_by;
    std::vector<int> freed_line;
    std::vector<uint64_t> last_reserved_size;
    std::vector<std::pair<int, int>> peer_access;
    std::vector<int> reservation_id;
    NameTable allocs, graphs, execs;  // slots stay: a slot made by the step is simply never live
    std::vector<GraphModel> graph_models;
    std::vector<ExecModel> exec_models;
    std::vector<GraphAllocation> graph_allocs;
    std::unordered_map<std::string, int> event_slots;
    std::vector<int> graph_devices, exec_devices;
    std::unordered_map<std::string, SnapshotInfo> snapshots;
    std::unordered_map<std::string, SharedHandle> handles;
    int hold_line;
  };
};

#define VMM_OP(Enum, name, Family, Flags, label) \
  template <>                                    \
  void PlanBuilder::PlanOp<Op::Enum>(const Step& step, PlanStep* p, BufferUses* capture_uses);
#include "runner/vocab/ops.def"
#undef VMM_OP

}  // namespace vmm

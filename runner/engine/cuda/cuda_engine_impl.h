// CudaEngine: the Engine implementation behind CreateCudaEngine (cuda_engine.h has the contract).
// Internal to runner/engine/cuda: include cuda_engine.h elsewhere.
//
// Ownership: the engine owns every object in the maps below, keyed by the handle id it gave out.
// Member order encodes the release order: members are destroyed in reverse declaration order, so
// the maps go first (execs, graphs, mappings, allocations, reservations), then the lanes (each
// device's scratch memory, events and stream), and last the driver table every object points to.
// The destructor also empties each map newest-first before that, after ending a capture and
// synchronizing every lane, and destroys each lane with its own device current.
//
// Devices: a Lane is one device's primary context, stream, events, scratch memory and kernel
// registry, and the streams and events a capture on it forks onto (capture lanes: parallel
// branches; `capture_lane_` is the one work goes to). The engine's own device has one from Init;
// another device gets one the first time SelectDevice names it (so a run on one device never
// creates a second). `lane_` is the selected one: every method binds its context (one
// cuCtxGetCurrent when it is already current, as before lanes existed) and enqueues on its stream.
// An exec remembers the lane it was instantiated on and always replays there. Switching lanes keeps
// program order: the new lane's stream waits for the old lane's unfinished work (Follow), so a step
// on device 1 after an async kernel on device 0 sees its result, as it would on one stream.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "runner/base/slot_map.h"
#include "runner/base/spin_lock.h"
#include "runner/base/status.h"
#include "runner/engine/cuda/checkpoint_helper.h"
#include "runner/engine/cuda/driver_api.h"
#include "runner/engine/cuda/graph_ops.h"
#include "runner/engine/cuda/kernel_registry.h"
#include "runner/engine/cuda/runtime_handles.h"
#include "runner/engine/cuda/vmm_handles.h"
#include "runner/engine/engine.h"
#include "runner/engine/host_memory.h"

namespace vmm::cuda {

// `status` with "<describe()>: " in front when it failed. `describe` runs only then, so the
// success path builds no strings (the engine's overhead per call is a benchmark target).
template <typename Describe>
Status Annotate(Status status, Describe describe) {
  if (status.ok()) return status;
  return status.WithContext(describe());
}
inline Status Annotate(Status status, const char* context) {
  if (status.ok()) return status;
  return status.WithContext(context);
}

// A device address as a typed pointer for the runtime's and the kernels' calls.
template <typename T>
T* DevicePointer(DevicePtr va) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(va));
}

// A thread's context state for the engine's calls (CudaEngine::Bind), in one place so that the
// check every memory call makes reads one line: whether the thread was prepared without a context
// (PrepareThread(false)); whether a HoldContext bracket is open on it; and the context BindLane
// saw or made current since it opened (nullptr: none known, ask the driver).
struct ThreadContext {
  bool has_no_context = false;
  bool holds = false;
  CUcontext known = nullptr;
};
inline thread_local constinit ThreadContext t_context;

// One device's share of the engine (see the header comment).
struct Lane {
  int ordinal = 0;
  CUcontext context = nullptr;  // the device's primary context (retained by the runtime)
  // What may be in flight on the stream (beside the context: a memory call reads both), readable
  // from any thread (a threads group's waiting VMM calls, which reach the engine directly,
  // RunState::vmm_engine, run beside another thread's launches). `marked` counts the launches
  // marked (Enqueuing), `idle_at` the marks a completed wait covered, `launching` the Enqueuing
  // scopes open now: a wait that starts while one is open may miss its work, so it marks nothing
  // idle. Busy() is false only when everything enqueued is known to have finished. The stream is
  // private to the engine, so nothing else puts work on it.
  std::atomic<uint64_t> marked{0}, idle_at{0};
  std::atomic<int> launching{0};
  KernelRegistry kernels;
  Stream stream;
  Event start, stop;
  Event fence;  // marks the end of this lane's work for another lane to wait on (Follow)
  DeviceBuffer hash_scratch;       // Checksum: one uint64
  DeviceBuffer counts_scratch;     // data checks: one uint32 per chunk
  DeviceBuffer check_scratch;      // data checks: totals, picked chunks, report (CheckState)
  DeviceBuffer freivalds_scratch;  // check_matmul: the ±1 vectors, B r, |B| rows, row flags
  DeviceBuffer staging_scratch;    // CompareData against a host snapshot: one piece
  PinnedHost check_readback;       // the CheckState read back after a check
  uint32_t sm_count = 1;           // the device's multiprocessors (grid of the check passes)
  // Capture lanes 1, 2, ... of a capture on this device: streams that join the capture by forks
  // (lane 0 is `stream`), created on first use; and the events of forks and joins, reused.
  std::vector<Stream> capture_streams;
  std::vector<Event> fork_events;
  // Conditional bodies being captured (cudaStreamBeginCaptureToGraph), one stream per nesting
  // depth, created on first use.
  std::vector<Stream> body_streams;
  bool Busy() const { return idle_at.load() != marked.load(); }
  // Before a wait on the stream: the marks it will cover, or 0 when a launch is under way.
  uint64_t WaitCovers() const {
    const uint64_t seen = marked.load();
    return launching.load() == 0 ? seen : 0;
  }
  // After a wait that completed: everything marked before it started has finished.
  void CoveredUpTo(uint64_t seen) {
    uint64_t now = idle_at.load();
    while (seen > now && !idle_at.compare_exchange_weak(now, seen)) {
    }
  }
};

// Marks `lane` busy for the work its scope enqueues (kernels, copies, graph launches); open from
// before the first enqueue to after the last.
class Enqueuing {
 public:
  explicit Enqueuing(Lane& lane) : lane_(lane) {
    ++lane_.launching;
    ++lane_.marked;
  }
  ~Enqueuing() { Done(); }
  // The last enqueue is made: a wait of this scope's own (SyncStream) may then mark it finished.
  void Done() {
    if (open_) --lane_.launching;
    open_ = false;
  }
  Enqueuing(const Enqueuing&) = delete;
  Enqueuing& operator=(const Enqueuing&) = delete;

 private:
  Lane& lane_;
  bool open_ = true;
};

class CudaEngine final : public Engine {
 public:
  // Use CreateCudaEngine; this only takes the pieces it found.
  CudaEngine(const DriverApi& api, int ordinal, CUcontext context, DeviceInfo info);
  ~CudaEngine() override;

  // Creates the engine's own lane (its context must be current).
  Status Init();
  // DescribeGraph's DOT text from cudaGraphDebugDotPrint (CreateCudaEngine's `driver_dot`).
  void set_driver_dot(bool driver_dot) { driver_dot_ = driver_dot; }

  const DeviceInfo& info() const override { return info_; }

  // Every call of engine_calls.def (their contracts are there), and the conveniences over them.
#define VMMRUN_ENGINE_CALL(name, fault_kind, params, args) Status name params override;
#include "runner/engine/engine_calls.def"
#undef VMMRUN_ENGINE_CALL
  using Engine::Create;
  using Engine::Reserve;
  using Engine::SetAccess;
  Status SelectDevice(int device) override;
  Status DescribeDevice(int ordinal, DeviceInfo* out) override;

  uint64_t host_calls() const override { return host_calls_.load(); }
  // The VMM calls guard the tables below (vmm_mu_) and call the driver outside the guard.
  bool ConcurrentVmm() const override { return true; }
  bool WaitForWork() override;
  bool Checkpointed() const override { return checkpointed_; }
  void EndHelpers() override;
  // ProbeCapability(kCheckpoint): whether the driver answers cuCheckpointProcessGetState for this
  // process (a driver without the entry point, or one that says NOT_SUPPORTED, lacks it).
  Status ProbeCheckpoint(std::string* why_not);
  // with_context false: cuCtxSetCurrent(NULL), and this thread's Bind does nothing from then on;
  // a wait for in-flight work (which the runtime makes in the context) leaves none current again.
  // A failure is the first call's to report.
  void PrepareThread(bool with_context) override;
  void HoldContext(bool hold) override;

  // Equal handle values are the same allocation. Different values of the same size are mapped
  // side by side in a scratch reservation; the first word of `a` is flipped and read through `b`,
  // then put back (after draining the stream, so nothing else touches it meanwhile): the same
  // physical memory shows the change, another does not.
  // The device attribute first (CU_DEVICE_ATTRIBUTE_*_SUPPORTED, where one exists: 0 means no),
  // then the trial (capability_probe.h), which decides: on the H200 the fabric attribute says
  // yes but cuMemCreate returns CUDA_ERROR_NOT_PERMITTED without an IMEX channel.

  // Data plane (cuda_engine_data.cc).

 private:
  cudaStream_t stream() const { return lane_->stream.get(); }
  // Where work goes: the innermost conditional body's stream while one is captured, else the
  // current capture lane's stream while capturing, else the selected device's stream.
  cudaStream_t work_stream() const {
    if (!bodies_.empty()) return bodies_.back().stream;
    return capturing_ && capture_lane_ > 0 ? lane_->capture_streams[capture_lane_ - 1].get()
                                           : stream();
  }
  // Ends every conditional body still being captured (a failed capture), innermost first.
  void AbortBodies() noexcept;
  // Ids of reservations, snapshots, graphs and execs: taken from any thread (a threads group's
  // snapshot beside another's reserve), so the counter is atomic.
  uint64_t NextId() { return next_id_.fetch_add(1, std::memory_order_relaxed); }
  // The stream of capture lane `lane` of the selected device (0: its stream), created on first use.
  Status LaneStream(int lane, cudaStream_t* out);
  // An event of the selected device for one fork or join (reused across captures: a wait captures
  // the dependency).
  Status ForkEvent(cudaEvent_t* out);
  // The selected device's event number `event`, created on first use.
  Status NamedEvent(int event, cudaEvent_t* out);
  // The node of the graph exec `exec` was instantiated from named `name`; binds the exec's lane.
  Status ExecNode(ExecHandle exec, const std::string& name, const char* call,
                  cudaGraphExec_t* raw_exec, cudaGraphNode_t* node);
  // Runs on a driver thread when a host node or cudaLaunchHostFunc is reached.
  static void CUDART_CB HostCall(void* engine);

  // Makes the selected lane's context current on the calling thread when it is not already; does
  // nothing on a thread prepared without a context (PrepareThread(false)). Inside a HoldContext
  // bracket, once BindLane has seen or made a lane's context current, it trusts that until the
  // bracket ends or LeaveNoContext runs (the only other way the engine's memory calls change it).
  // Its common case inline: a thread without a context, or a bracket that knows lane_'s is current.
  Status Bind() {
    const ThreadContext& t = t_context;
    if (t.has_no_context || (t.known != nullptr && t.known == lane_->context)) return Status::Ok();
    return BindLane(*lane_);
  }
  // On a thread prepared without a context, makes none current again (after a wait); does
  // nothing on any other.
  Status LeaveNoContext();
  Status BindLane(const Lane& lane);
  // A lane for `ordinal` with its context, stream, events and kernels (the device's context is
  // current afterwards). Fails for an ordinal the machine lacks or a device without VMM support.
  StatusOr<std::unique_ptr<Lane>> MakeLane(int ordinal);
  // cudaStreamSynchronize, and the lane's stream is known idle afterwards.
  Status SyncStream(Lane& lane);
  Status SyncStream() { return SyncStream(*lane_); }
  // Waits for a lane's stream when work may be in flight: nothing to do when everything enqueued
  // was already waited for (busy false); else cudaStreamQuery, and when it answers
  // cudaErrorNotReady (*waited = true) SyncStream. A sticky error of earlier work comes back as an
  // error Status. The lane's context must be current.
  Status Drain(Lane& lane, bool* waited);
  // Unmap/Release: Drain every busy lane with the wall time spent, unless capturing (then nothing
  // is in flight) or the note says not to wait (note->wait false).
  Status WaitForStream(SyncNote* note);
  // WaitForStream with its common case inline: a note that waits (or none) and no lane busy.
  Status WaitIfBusy(SyncNote* note) {
    if ((note == nullptr || note->wait) && !AnyLaneBusy()) {
      if (note != nullptr) *note = SyncNote{};
      return Status::Ok();
    }
    return WaitForStream(note);
  }
  // Whether any lane may have work in flight (with one lane, the selected one is it).
  bool AnyLaneBusy() const {
    if (lanes_.size() == 1) return lane_->Busy();
    for (const std::unique_ptr<Lane>& lane : lanes_)
      if (lane->Busy()) return true;
    return false;
  }
  // Keeps program order across devices: when `from` may have work in flight, `to`'s stream waits
  // for it (an event recorded on `from`, cudaStreamWaitEvent on `to`) before anything enqueued on
  // `to` afterwards, as one stream would. Nothing when `from` is idle (no call at all).
  Status Follow(Lane& from, Lane& to);
  // Runs `launch` (a kernel launch on the stream); when `timing` is set and no capture is in
  // progress, brackets it with events and waits for it to fill timing->gpu_us.
  template <typename Launch>
  Status TimedLaunch(OpTiming* timing, Launch launch);
  // Calls that synchronize the stream: during a capture, lets the runtime refuse (and invalidate
  // the capture) before anything is enqueued.
  Status SyncIfCapturing();
  // Re-reads whether the stream is capturing (after a failed capture call).
  void RefreshCapturing() noexcept;
  // Ends a capture in progress and drops its graph (destruction path).
  void AbortCapture() noexcept;

  // Waits for the stream, then reads the 8-byte hash a checksum kernel summed at `sum`.
  Status ReadHash(const uint64_t* sum, uint64_t* hash);
  // cudaMemcpyAsync of `kind` on the stream, timed as a kernel (TimedLaunch).
  Status CopyMemory(void* dst, const void* src, uint64_t bytes, cudaMemcpyKind kind,
                    OpTiming* timing);
  // One word check of `count` words (a against b, or against `pattern` when b is null) with the
  // passes of kernels/check_kernels.h and one read-back: adds its mismatches, its first
  // mismatches (up to max_report in all) and its hash sums into *out.
  struct WordCheck;
  Status RunWordCheck(const WordCheck& check, DataCompareResult* out, uint64_t* delta);
  // The device scratch of the checks, grown to hold `chunks` chunk counts.
  Status ReserveCheckScratch(uint64_t chunks) { return ReserveCheckScratch(*lane_, chunks); }
  // `lane`'s check scratch: device memory for the check state and `chunks` chunk counts, and the
  // pinned page the state is read back to (kept, grown when a check needs more).
  static Status ReserveCheckScratch(Lane& lane, uint64_t chunks);
  // Grid of a streaming check pass: one wave of two 256-thread blocks per SM (the compare passes
  // use ~96 registers a thread, so two blocks fit; each thread keeps 16 16-byte loads in flight,
  // far more bytes in flight than HBM needs).
  uint32_t StreamBlocks() const { return lane_->sm_count * 2; }

  // Driver table first: every VMM object keeps a pointer to it, so it must be destroyed last.
  DriverApi api_;
  int ordinal_ = 0;
  bool driver_dot_ = false;
  CUcontext context_ = nullptr;  // the device's primary context (retained by the runtime)
  DeviceInfo info_;
  // What every memory call reads on its way to the driver, on one cache line: a thread's previous
  // driver call has evicted its first-level cache, and each line the path reads again is time
  // before the thread is back at the driver (session 29). Memory calls write it only where they
  // clear allow_released_: a Map whose memo misses, every Release, and AllowReleasedHandle
  // (reports/h200/session29/ab_allowance.patch clears it only when set; not yet measured).
  alignas(64) std::vector<std::unique_ptr<Lane>> lanes_;  // the engine's own first, then others
  Lane* lane_ = nullptr;                                  // the selected lane (SelectDevice)
  bool capturing_ = false;                    // on lane_ (no device switch while capturing)
  std::atomic<bool> allow_released_{false};   // written under vmm_mu_; MemoFor reads it without
  const uint64_t instance_ = NextInstance();  // this engine among the process's, for the memo
  static uint64_t NextInstance();
  int capture_lane_ = 0;         // the capture lane work goes to (0: lane_'s stream)
  size_t fork_events_used_ = 0;  // of lane_->fork_events, in the current capture
  // record_event / wait_event, by (device ordinal, number): an event belongs to one device.
  std::map<std::pair<int, int>, Event> events_;
  std::unordered_map<cudaEvent_t, int> event_numbers_;
  std::atomic<uint64_t> host_calls_{0};
  NodeNames names_;  // node names of every live graph
  // The capture's names so far: (graph, node, name), graph nullptr for the captured graph itself
  // (a conditional body's nodes name their body graph).
  struct CapturedName {
    cudaGraph_t graph = nullptr;
    cudaGraphNode_t node = nullptr;
    std::string name;
  };
  std::vector<CapturedName> capture_names_;
  // Conditional bodies being captured, innermost last (BeginConditional / EndConditional).
  struct OpenBody {
    cudaStream_t stream = nullptr;  // lane_->body_streams[depth]
    cudaGraph_t body = nullptr;     // owned by the conditional node
    unsigned long long handle = 0;  // cudaGraphConditionalHandle
    ConditionKind kind = ConditionKind::kIf;
    DevicePtr word = 0, passes = 0;
    std::string name;
  };
  std::vector<OpenBody> bodies_;
  ConditionalBodies conditional_bodies_;  // every conditional node made, by node
  // Whether the current capture made a memory node (GraphAlloc, GraphFree) or embedded a child
  // graph; the graphs whose capture did. Instantiate reads the memory nodes of those only (the
  // others have none), which keeps three runtime calls per node off the common instantiate.
  bool capture_memory_nodes_ = false;
  std::set<uint64_t> memory_node_graphs_;
  // Graph allocations: per exec, what a launch allocates and leaves alive, and what it frees of
  // others'; the allocations alive now, with the device each lives on (freed by the destructor if
  // the scenario did not).
  struct ExecMemory {
    uint64_t graph = 0;  // the graph it was instantiated from
    std::vector<DevicePtr> allocs, frees;
  };
  std::map<uint64_t, ExecMemory> exec_memory_;
  std::map<DevicePtr, int> live_graph_allocs_;
  // Guards reservations_ and allocs_ in the VMM calls, which several threads may make at once
  // (ConcurrentVmm). Never held across a driver call: its sections are a table lookup or update,
  // a scan of the few live reservations, and the allocation of a table node, short enough that a
  // spin lock keeps them off the kernel's sleep and wake. Error messages are built after it is
  // released.
  SpinLock vmm_mu_;
  std::atomic<uint64_t> next_id_{1};
  std::map<uint64_t, Reservation> reservations_;
  // The VMM hot path (create/map/unmap/release) allocates nothing in steady state: allocations
  // live in a generation-checked slot map (a released handle finds nothing).
  SlotMap<PhysicalAlloc> allocs_;
  // Counts the releases (under vmm_mu_): a thread's memo of the allocation it mapped last
  // (MemoFor) holds while no allocation was released since it was made.
  // On a line of its own: every release writes it, every map reads it.
  alignas(64) std::atomic<uint64_t> releases_{0};
  // The driver's handle of `handle` from this thread's memo of its last map, when still valid
  // (no release since, no released handle allowed now); 0 otherwise.
  CUmemGenericAllocationHandle MemoFor(AllocHandle handle) const;
  void Memoize(AllocHandle handle, CUmemGenericAllocationHandle driver, uint64_t releases) const;
  // Mappings, kept by the thread that made them: a shard per thread (threads share one past
  // kMappingShards), each on cache lines of its own, so that threads mapping and unmapping their
  // own pages write no line another thread uses. Map and unmap then touch no shared line of the
  // engine's at all (the memo above stands for the table lookup under vmm_mu_). A mapping may be
  // unmapped from another thread: Unmap looks in the other shards only when its own did not cover
  // the range (mappings never overlap: the driver refuses to map over a mapping).
  static constexpr size_t kMappingShards = 16;
  struct alignas(64) MappingShard {
    SpinLock mu;
    std::vector<Mapping> list;  // in creation order
  };
  std::array<MappingShard, kMappingShards> mapping_shards_;
  MappingShard& ThreadShard();
  // Forgets (the driver unmapped them) the mappings of `shard` that [va, va + size) touches;
  // returns how many bytes of the range they covered.
  static uint64_t ForgetMappings(MappingShard& shard, DevicePtr va, uint64_t size);
  // Calls `each` with every live mapping, each shard under its own guard.
  template <typename Each>
  void ForEachMapping(Each&& each) {
    for (MappingShard& shard : mapping_shards_) {
      std::lock_guard<SpinLock> lock(shard.mu);
      for (const Mapping& m : shard.list) each(m);
    }
  }
  std::vector<PhysicalAlloc> held_;  // HoldMemory's allocations (never mapped), in creation order
  // cuda_engine_checkpoint.cc: the helper that checkpoints this process (started by the first
  // CheckpointProcess), whether the process is checkpointed now, and whether the hold in place is
  // the helper's (made while checkpointed; ReturnMemory asks the helper for it).
  std::unique_ptr<CheckpointHelper> checkpoint_helper_;
  bool checkpointed_ = false;
  bool hold_in_helper_ = false;
  // The latest releases (AllowReleasedHandle): the engine's handle and the driver's, freed, in a
  // ring; and whether the next Release or Map may use one.
  struct ReleasedHandle {
    uint64_t id = 0;
    CUmemGenericAllocationHandle driver = 0;
  };
  std::array<ReleasedHandle, kReleasedHandlesKept> released_{};
  size_t released_next_ = 0;
  // The driver's freed handle of `id` when AllowReleasedHandle allows it now (and clears the
  // allowance), else nullopt. Call with vmm_mu_ held.
  std::optional<CUmemGenericAllocationHandle> TakeReleased(uint64_t id);
  // The driver's handle and size of allocation `handle`, copied under vmm_mu_ (other threads may
  // change the table); nullopt when the engine has none by that id.
  std::optional<PhysicalMemory> FindMemory(AllocHandle handle);
  std::map<uint64_t, Graph> graphs_;
  std::map<uint64_t, GraphExec> execs_;
  // The lane a graph was captured on / an exec was instantiated on, by handle id.
  std::map<uint64_t, Lane*> graph_lanes_, exec_lanes_;
  // Snapshot storage by id: exactly one of the three owners holds memory (device memory on the
  // device selected when it was taken). Declared last, so it goes first (after the destructor
  // drained every lane).
  struct SnapshotStorage {
    SnapshotHandle handle;
    DeviceMemory device;
    PinnedHost pinned;
    HostPages pageable;
  };
  std::map<uint64_t, SnapshotStorage> snapshots_;
  // The busy flags (kernels::kMaxBusyFlags words the host sets, then as many the kernels set when
  // they stopped at their duration), mapped for the device; made by the first Busy with a flag.
  // Busy and SetFlag are not VMM calls: a threads group's SharedEngine calls them one at a time.
  PinnedHost busy_flags_;
  uint32_t* busy_flags_device_ = nullptr;
  // Sets every flag (the destructor: a kernel waiting for one that was never set ends now).
  void SetAllFlags();
};

}  // namespace vmm::cuda

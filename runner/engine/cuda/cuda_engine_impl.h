// CudaEngine: the Engine implementation behind CreateCudaEngine (cuda_engine.h has the contract).
// Internal to runner/engine/cuda: include cuda_engine.h elsewhere.
//
// Ownership: the engine owns every object in the maps below, keyed by the handle id it gave out.
// Member order encodes the release order: members are destroyed in reverse declaration order, so
// the maps go first (execs, graphs, mappings, allocations, reservations), then the scratch memory,
// the events, the stream, and last the driver table every object points to. The destructor also
// empties each map newest-first before that, after ending a capture and synchronizing.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runner/base/slot_map.h"
#include "runner/base/status.h"
#include "runner/engine/cuda/driver_api.h"
#include "runner/engine/cuda/graph_ops.h"
#include "runner/engine/cuda/kernel_registry.h"
#include "runner/engine/cuda/runtime_handles.h"
#include "runner/engine/cuda/vmm_handles.h"
#include "runner/engine/engine.h"

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

class CudaEngine final : public Engine {
 public:
  // Use CreateCudaEngine; this only takes the pieces it found.
  CudaEngine(const DriverApi& api, int ordinal, CUcontext context, DeviceInfo info);
  ~CudaEngine() override;

  // Creates the stream, events and kernel registry (context must be current).
  Status Init();

  const DeviceInfo& info() const override { return info_; }

  Status Reserve(uint64_t size, uint64_t alignment, DevicePtr* va) override;
  Status Free(DevicePtr va, uint64_t size) override;
  Status Create(uint64_t size, AllocHandle* out) override;
  Status Release(AllocHandle handle, SyncNote* note) override;
  Status Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) override;
  Status SetAccess(DevicePtr va, uint64_t size, Access access) override;
  Status Unmap(DevicePtr va, uint64_t size, SyncNote* note) override;

  Status Fill(DevicePtr dst, uint64_t count, uint64_t seed, OpTiming* timing) override;
  Status Matmul(const MatmulArgs& args, OpTiming* timing) override;
  Status Memset(DevicePtr dst, uint64_t count, uint32_t pattern, OpTiming* timing) override;
  Status CopyDevice(DevicePtr dst, DevicePtr src, uint64_t bytes, OpTiming* timing) override;
  Status CopyFromHost(DevicePtr dst, const void* src, uint64_t bytes, OpTiming* timing) override;
  Status HostFunction(OpTiming* timing) override;
  uint64_t host_calls() const override { return host_calls_.load(); }

  Status BeginCapture() override;
  Status EndCapture(GraphHandle* out) override;
  Status CaptureLane(int lane) override;
  Status ForkLane(int from, int to) override;
  Status JoinLane(int from, int into) override;
  Status NameCapturedNode(const std::string& name) override;
  Status RecordEvent(int event) override;
  Status WaitEvent(int event) override;
  Status GraphAlloc(uint64_t bytes, DevicePtr* ptr) override;
  Status GraphFree(DevicePtr ptr) override;
  Status CaptureChildGraph(GraphHandle child) override;
  Status GraphMemory(GraphMemoryUsage* out) override;
  Status TrimGraphMemory() override;
  Status InstantiateWith(GraphHandle graph, const InstantiateOptions& options, ExecHandle* out,
                         InstantiateInfo* info) override;
  Status Replay(ExecHandle exec, OpTiming* timing) override;
  Status Update(ExecHandle exec, GraphHandle graph, UpdateResult* result) override;
  Status SetNodeParams(ExecHandle exec, const std::string& node, const NodeParams& params) override;
  Status SetNodeEnabled(ExecHandle exec, const std::string& node, bool enabled) override;
  Status KernelNodes(GraphHandle graph, std::vector<KernelNodeParams>* out) override;
  Status DescribeGraph(GraphHandle graph, GraphStructure* out) override;
  Status DestroyGraph(GraphHandle graph) override;
  Status DestroyExec(ExecHandle exec) override;

  Status CopyToHost(DevicePtr src, uint64_t bytes, void* dst) override;
  Status Checksum(DevicePtr src, uint64_t count, uint64_t* hash) override;
  Status Compare(DevicePtr a, DevicePtr b, uint64_t count, uint32_t max_report,
                 CompareResult* out) override;
  Status Synchronize() override;

 private:
  cudaStream_t stream() const { return stream_.get(); }
  // Where work goes: the current capture lane's stream while capturing, else the stream.
  cudaStream_t work_stream() const {
    return capturing_ && lane_ > 0 ? lanes_[lane_ - 1].get() : stream();
  }
  uint64_t NextId() { return next_id_++; }
  // The stream of capture lane `lane` (0: the stream), created on first use.
  Status LaneStream(int lane, cudaStream_t* out);
  // An event for one fork or join (reused across captures: a wait captures the dependency).
  Status ForkEvent(cudaEvent_t* out);
  // The engine's event number `event`, created on first use.
  Status NamedEvent(int event, cudaEvent_t* out);
  // The node of the graph exec `exec` was instantiated from named `name`.
  Status ExecNode(ExecHandle exec, const std::string& name, const char* call,
                  cudaGraphExec_t* raw_exec, cudaGraphNode_t* node);
  // Runs on a driver thread when a host node or cudaLaunchHostFunc is reached.
  static void CUDART_CB HostCall(void* engine);

  // Makes the engine's context current on the calling thread when it is not already.
  Status Bind();
  // cudaStreamSynchronize, and the stream is known idle afterwards.
  Status SyncStream();
  // Waits for the stream when work may be in flight: nothing to do when everything enqueued was
  // already waited for (stream_busy_ false); else cudaStreamQuery, and when it answers
  // cudaErrorNotReady (*waited = true) SyncStream. A sticky error of earlier work comes back as an
  // error Status.
  Status Drain(bool* waited);
  // Unmap/Release: Drain with the wall time spent, unless capturing (then nothing is in flight).
  Status WaitForStream(SyncNote* note);
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

  // Driver table first: every VMM object keeps a pointer to it, so it must be destroyed last.
  DriverApi api_;
  int ordinal_ = 0;
  CUcontext context_ = nullptr;  // the device's primary context (retained by the runtime)
  DeviceInfo info_;
  CUmemAllocationProp prop_ = {};
  KernelRegistry kernels_;
  Stream stream_;
  Event start_;
  Event stop_;
  DeviceBuffer hash_scratch_;     // Checksum: one uint64
  DeviceBuffer counts_scratch_;   // Compare: one uint32 per chunk
  DeviceBuffer chunks_scratch_;   // Compare: the picked chunks
  DeviceBuffer indices_scratch_;  // Compare: the first mismatching indices
  bool capturing_ = false;
  int lane_ = 0;                    // the capture lane work goes to (0: the stream)
  std::vector<Stream> lanes_;       // lanes 1, 2, ...: streams that join captures by forks
  std::vector<Event> fork_events_;  // events of forks and joins, reused
  size_t fork_events_used_ = 0;     // in the current capture
  std::map<int, Event> events_;     // record_event / wait_event, by number
  std::unordered_map<cudaEvent_t, int> event_numbers_;
  std::atomic<uint64_t> host_calls_{0};
  NodeNames names_;  // node names of every live graph
  std::vector<std::pair<cudaGraphNode_t, std::string>> capture_names_;  // the capture's, so far
  std::vector<PinnedMemory> staging_;  // sources of captured host copies; outlive every exec
  // Graph allocations: per exec, what a launch allocates and leaves alive, and what it frees of
  // others'; the allocations alive now (freed by the destructor if the scenario did not).
  struct ExecMemory {
    uint64_t graph = 0;  // the graph it was instantiated from
    std::vector<DevicePtr> allocs, frees;
  };
  std::map<uint64_t, ExecMemory> exec_memory_;
  std::set<DevicePtr> live_graph_allocs_;
  // False only when everything enqueued on the stream is known to have finished: set before each
  // enqueue (kernels, graph launches, copies), cleared by each completed wait on the stream. The
  // stream is private to the engine, so nothing else can put work on it.
  bool stream_busy_ = false;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Reservation> reservations_;
  // The VMM hot path (create/map/unmap/release) allocates nothing in steady state: allocations
  // live in a generation-checked slot map (a released handle finds nothing) and mappings in a
  // vector in creation order (Unmap scans it; scenarios keep few mappings live).
  SlotMap<PhysicalAlloc> allocs_;
  std::vector<Mapping> mappings_;
  std::map<uint64_t, Graph> graphs_;
  std::map<uint64_t, GraphExec> execs_;
};

}  // namespace vmm::cuda

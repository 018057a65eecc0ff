// HostEngine: the Engine behind CreateHostEngine (host_engine.h has the contract). Internal to
// runner/engine/host: include host_engine.h elsewhere. VMM, kernels and data are in
// host_engine.cc; graphs in host_engine_graphs.cc.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/engine.h"
#include "runner/engine/host/address_space.h"
#include "runner/engine/host/host_data.h"
#include "runner/engine/host/host_graph.h"
#include "runner/engine/host/host_graph_memory.h"
#include "runner/engine/host/kernel_runner.h"

namespace vmm::host {

// `count` elements of 4 bytes, saturating: an impossible size then fails the access check.
inline uint64_t Bytes4(uint64_t count) { return count > UINT64_MAX / 4 ? UINT64_MAX : count * 4; }

template <typename T>
T* Ptr(DevicePtr va) {
  return reinterpret_cast<T*>(va);
}

class HostEngine final : public Engine {
 public:
  // Emulates `device_count` devices; `device` is the engine's own (host_engine.h).
  // With `trap_faults` (an isolate child) kernels run under the fault trap (host_engine.h).
  HostEngine(uint64_t granularity, int device_count, int device, bool trap_faults,
             uint64_t memory_bytes);
  // Members go in reverse order of declaration: the kernel runner (its stream's worker stops
  // first), execs, graphs, the graph memory pool, snapshots, then the address space (mappings,
  // handles, reservations, each newest first).
  ~HostEngine() override = default;

  const DeviceInfo& info() const override { return info_; }
  std::string FaultNote() const override { return kernels_.FaultNote(); }

  // Every call of engine_calls.def (their contracts are there), and the conveniences over them.
#define VMMRUN_ENGINE_CALL(name, fault_kind, params, args) Status name params override;
#include "runner/engine/engine_calls.def"
#undef VMMRUN_ENGINE_CALL
  using Engine::Create;
  using Engine::Reserve;
  using Engine::SetAccess;
  Status SelectDevice(int device) override;
  Status DescribeDevice(int ordinal, DeviceInfo* out) override;

  uint64_t host_calls() const override { return host_calls_; }
  bool WaitForWork() override { return kernels_.WaitInFlight(); }
  bool Checkpointed() const override { return process_ != ProcessState::kRunning; }

 private:
  struct Exec {
    HostGraph graph;         // a copy of the graph it was instantiated from, updated since
    uint64_t from = 0;       // the handle of that graph (per-node updates name its nodes)
    bool auto_free = false;  // cudaGraphInstantiateFlagAutoFreeOnLaunch
    int device = 0;          // the device it was instantiated on (its replays run there)
  };
  // The ordinal `device` names (-1: the engine's own device).
  int Ordinal(int device) const;

  // Records `node` while capturing, else runs it now and times it (RunNow).
  Status Launch(GraphNode node, OpTiming* timing);
  // Work on the stream, not captured: after the stream's earlier work, runs `work` (returning a
  // Status) and puts its time in timing->gpu_us; a fault of untimed work is reported by the next
  // call, as on the GPU (KernelRunner::Launched).
  template <typename Work>
  Status RunNow(OpTiming* timing, Work&& work) {
    VMM_RETURN_IF_ERROR(kernels_.Ordered());
    Stopwatch watch;
    VMM_RETURN_IF_ERROR(kernels_.Launched(work(), timing));
    if (timing != nullptr) timing->gpu_us = watch.ElapsedUs();
    return Status::Ok();
  }
  // Proves every byte the node touches is accessible to the device that runs it, then does its
  // work (a replay: `exec` gives the allocation flags and the device; nullptr for direct work on
  // the selected device).
  Status Run(const GraphNode& node, const Exec* exec);
  Status RunGraph(const HostGraph& graph, const Exec* exec);
  // host_engine_conditional.cc: the kernels of conditional nodes and the node itself, run in a
  // replay (`device` judges the words' access).
  Status RunConditionKernel(const GraphNode& node, int device);
  Status RunConditional(const GraphNode& node, const Exec* exec);
  // Calls that wait for the stream are illegal while it captures; they invalidate the capture.
  Status SyncPoint(const char* function);
  // Capture-only calls outside a capture.
  Status NeedCapture(const char* function) const;
  // Every memset node of `graph` (child graphs and conditional bodies included) writes memory the
  // selected device may write (the check cudaGraphInstantiate and cudaGraphExecMemsetNodeSetParams
  // make), else `function`'s CUDA_ERROR_INVALID_VALUE.
  Status CheckMemsetNodes(const char* function, const HostGraph& graph) const;
  // The graph allocations `graph` holds the alloc nodes of (Hold or Drop each).
  void HoldAllocations(const HostGraph& graph, bool hold);

  const HostGraph* FindGraph(GraphHandle graph) const;
  static Status UnknownGraph(const char* function, GraphHandle graph);
  static Status UnknownExec(const char* function, ExecHandle exec);

  IdSource ids_;
  DeviceInfo info_;
  AddressSpace space_;
  HostDataPlane data_{&space_, &ids_};  // snapshots go before the address space
  GraphMemoryPool pool_;
  bool capturing_ = false;
  std::string invalidated_by_;  // the call that invalidated the current capture, if any
  std::optional<CaptureBuilder> capture_;
  std::vector<DevicePtr> capture_allocs_;  // graph allocations the capture reserved
  uint64_t host_calls_ = 0;
  std::map<int, uint64_t> event_records_;  // by event: how many times a record node ran
  std::map<uint64_t, HostGraph> graphs_;   // by handle value
  std::map<uint64_t, Exec> execs_;         // by handle value
  // Conditional nodes: each handle's condition value, as the kernels before and in the node set
  // it (cudaGraphSetConditional); a handle without a value reads 0 (no default is assigned).
  std::map<uint64_t, uint32_t> conditions_;
  int current_;       // the selected device's ordinal (SelectDevice)
  bool trap_faults_;  // an isolate block's child (host_engine.h)
  // The latest releases, and whether the next Map may name one (AllowReleasedHandle).
  std::array<uint64_t, kReleasedHandlesKept> released_{};
  size_t released_next_ = 0;
  bool allow_released_ = false;
  // host_engine_checkpoint.cc: the process as cuCheckpointProcessGetState would say, with the
  // driver's one-way door: a restore that failed leaves it checkpointed for good (kFailed).
  enum class ProcessState { kRunning, kCheckpointed, kFailed };
  ProcessState process_ = ProcessState::kRunning;
  KernelRunner kernels_;  // kernels, their stream, the sticky fault; last: destroyed first
};

}  // namespace vmm::host

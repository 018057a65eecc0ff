// FakeEngine: an Engine with no memory behind it, for the executor's unit tests.
//
// It records every call as one readable line, in call order, e.g.
//   "Reserve(size=0x200000, align=0x0) -> 0x100000000"
//   "Map(va=0x100000000, size=0x200000, offset=0x0, handle=0x1)"
//   "vmm_matmul_f32(a=0x100000000, b=0x100200000, c=0x100400000, m=256, n=256, k=256) [captured]"
//   "Update(exec=0x1, graph=0x2) -> success"
// and a failed call as its line plus " -> error: <message>".
//
// Behaviour (deterministic, no validation of VMM rules: the plan proves those):
//   - Reserve hands out VAs from 0x100000000 upwards, each aligned to max(alignment, granularity)
//     and advanced by the size rounded up to the granularity; a hint at or above the next VA
//     with that alignment is honoured (the next VA moves past it), any other hint is not. Create,
//     EndCapture and Instantiate hand out handles 0x1, 0x2, ... (one counter per kind).
//   - LaunchKernel (Fill, Matmul and every other kernel: its line is the kernel's call,
//     KernelCallText) while capturing appends a kernel node with the KernelNodeParams it was
//     given, as the host and CUDA backends record them; outside a capture it reports gpu_us = 1.
//     Replay reports gpu_us = 1 per node.
//   - NameCapturedNode names the last recorded node; CaptureLane accepts lane 0 only (the fake
//     has one capture stream). DescribeGraph reports a graph's nodes as a chain of kernel nodes
//     with their names and kernel names (no operands, no DOT text).
//   - KernelNodes returns a graph's recorded nodes; graph calls with an unknown handle fail with
//     "fake engine: unknown graph 0x7" (or exec); BeginCapture while capturing and EndCapture
//     without one fail too.
//   - Its memory reads as zeros: CopyToHost writes zeros; Checksum returns SetChecksum's value, by
//     default the datagen hash of `count` zero words; CompareData finds no mismatch and
//     CompareValue finds every word different from a non-zero pattern (want = the pattern, got =
//     0), each with the hash of zeros, unless SetCompareResult gave the result to return;
//     CheckMatmul passes (zeros are an exact product) with the method the size selects, unless
//     SetMatmulCheckResult gave one. AllocSnapshot hands out addresses from 0x700000000000
//     upwards; Copy records its places and bytes. Update returns SetUpdateResult's value (success
//     by default). Unmap and Release report SyncNote{waited = false}.
//   - Create records "Create(size=0x200000) -> 0x1", with ", device=1" after the size when the
//     props name a device.
//   - SetAccess records "access=read_write" for the engine's own device alone, else the list
//     "access={0: read_write, 1: read}" by ordinal. GetAccess answers SetGetAccess's value
//     (read_write by default) and records "GetAccess(va=0x..., device=-1) -> read_write";
//     SelectDevice(n) records "SelectDevice(n)" and always succeeds (SetDeviceCount sets
//     info().device_count, 1 by default).
//   - Inventory returns what QueueInventory queued, one per call, then empty inventories (the fake
//     holds no memory).
//   - FailAt(method, nth, status): the nth call (1-based) of `method` returns `status` and has no
//     other effect (no handle is handed out, no node is recorded).
// Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/engine/engine.h"

namespace vmm {

class FakeEngine final : public Engine {
 public:
  static constexpr DevicePtr kFirstVa = 0x100000000;

  // info(): backend "fake", name "fake engine", vmm_supported, both granularities = `granularity`.
  explicit FakeEngine(uint64_t granularity = 2 << 20);

  // Every call so far, one line each (see the header comment).
  const std::vector<std::string>& calls() const { return calls_; }

  // Makes the `nth` call (1-based, counted from construction) of `method` ("Map", "Replay", ...)
  // fail with `status`, which must not be ok.
  void FailAt(const std::string& method, int nth, Status status);
  void SetUpdateResult(UpdateResult result) { update_result_ = std::move(result); }
  void SetChecksum(uint64_t hash) { checksum_ = hash; }  // for every later Checksum call
  void SetCompareResult(DataCompareResult result) { compare_result_ = std::move(result); }
  void SetMatmulCheckResult(MatmulCheckResult result) { matmul_result_ = std::move(result); }
  void SetGetAccess(Access access) { get_access_ = access; }  // what every GetAccess answers
  void SetDeviceCount(int count) { info_.device_count = count; }
  // The next Inventory call returns `inventory` (queued in call order).
  void QueueInventory(EngineInventory inventory) { inventories_.push_back(std::move(inventory)); }

  const DeviceInfo& info() const override { return info_; }
  using Engine::Reserve;
  Status Reserve(uint64_t size, uint64_t alignment, DevicePtr hint, DevicePtr* va) override;
  Status Free(DevicePtr va, uint64_t size) override;
  using Engine::Create;
  Status Create(const AllocProps& props, AllocHandle* out) override;
  Status Release(AllocHandle handle, SyncNote* note) override;
  Status Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) override;
  using Engine::SetAccess;
  Status SetAccess(DevicePtr va, uint64_t size, std::span<const DeviceAccess> access,
                   SyncNote* note) override;
  Status GetAccess(DevicePtr va, int device, Access* out) override;
  Status SelectDevice(int device) override;
  Status Unmap(DevicePtr va, uint64_t size, SyncNote* note) override;
  Status LaunchKernel(const KernelNodeParams& params, OpTiming* timing) override;
  Status BeginCapture() override;
  Status EndCapture(GraphHandle* out) override;
  Status CaptureLane(int lane) override;
  Status NameCapturedNode(const std::string& name) override;
  Status InstantiateWith(GraphHandle graph, const InstantiateOptions& options, ExecHandle* out,
                         InstantiateInfo* info) override;
  Status DescribeGraph(GraphHandle graph, GraphStructure* out) override;
  Status Replay(ExecHandle exec, OpTiming* timing) override;
  Status Update(ExecHandle exec, GraphHandle graph, UpdateResult* result) override;
  Status KernelNodes(GraphHandle graph, std::vector<KernelNodeParams>* out) override;
  Status DestroyGraph(GraphHandle graph) override;
  Status DestroyExec(ExecHandle exec) override;
  Status CopyToHost(DevicePtr src, uint64_t bytes, void* dst) override;
  Status Checksum(DevicePtr src, uint64_t count, uint64_t* hash) override;
  Status AllocSnapshot(uint64_t bytes, DataPlace place, SnapshotHandle* out) override;
  Status FreeSnapshot(const SnapshotHandle& snapshot) override;
  Status Copy(DataRef dst, DataRef src, uint64_t bytes, OpTiming* timing) override;
  // Copy, then Checksum of the source: the two lines, as a backend without the fused pass.
  Status CopyHashed(DataRef dst, DevicePtr src, uint64_t count, OpTiming* timing,
                    uint64_t* hash) override;
  Status CompareData(DevicePtr a, DataRef b, uint64_t count, const CompareOptions& options,
                     DataCompareResult* out) override;
  Status CompareValue(DevicePtr a, uint32_t pattern, uint64_t count, uint32_t max_report,
                      DataCompareResult* out) override;
  Status CheckMatmul(const MatmulArgs& args, uint32_t max_report, MatmulCheckResult* out) override;
  Status Synchronize() override;
  Status Inventory(EngineInventory* out) override;

 private:
  // Counts the call; returns the injected failure for it (recording "line -> error: ...") or ok.
  Status Enter(const std::string& method, const std::string& line);
  // Records "line -> error: <message>" and returns `status`.
  Status Fail(const std::string& line, Status status);
  // Records `line` as the call's line (ok calls; `line` may carry a " -> result" suffix).
  void Record(std::string line) { calls_.push_back(std::move(line)); }
  // Records a kernel node while capturing; returns whether it did.
  bool Capture(KernelNodeParams params);

  DeviceInfo info_;
  std::vector<std::string> calls_;
  std::map<std::string, int> call_counts_;
  std::map<std::pair<std::string, int>, Status> failures_;
  UpdateResult update_result_{UpdateCode::kSuccess, "", "", ""};
  std::optional<uint64_t> checksum_;  // unset: the hash of zeros
  std::optional<DataCompareResult> compare_result_;
  std::optional<MatmulCheckResult> matmul_result_;
  uint64_t next_snapshot_ = 0x700000000000;
  Access get_access_ = Access::kReadWrite;
  std::vector<EngineInventory> inventories_;

  DevicePtr next_va_ = kFirstVa;
  uint64_t next_alloc_ = 1, next_graph_ = 1, next_exec_ = 1;
  bool capturing_ = false;
  std::vector<KernelNodeParams> capture_;
  std::vector<std::string> capture_names_;                    // by node of capture_
  std::map<uint64_t, std::vector<KernelNodeParams>> graphs_;  // by handle value
  std::map<uint64_t, std::vector<std::string>> graph_names_;  // by handle value
  std::map<uint64_t, size_t> execs_;                          // handle -> node count
};

}  // namespace vmm

// FaultEngine: wraps a real engine and makes one chosen call fail the way the driver would, to
// prove that every step of every scenario fails cleanly (docs/limits-and-safety.md, "Fault
// injection"): the step is reported failed with the error, later steps are skipped, and
// everything the run created is released.
//
// Every call is counted, overall and per kind (kFaultKinds below). With a FaultPlan, the k-th
// call (1-based) overall, or the k-th call of one kind, returns the driver's error for that kind
// ("cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY (injected fault)") WITHOUT reaching the wrapped engine,
// as a refused driver call leaves nothing behind. Every other call is forwarded unchanged.
// Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runner/engine/engine.h"

namespace vmm {

// What a call is, for counting and for choosing which call fails.
enum class FaultKind : uint8_t {
  kReserve,
  kFree,
  kCreate,
  kRelease,
  kMap,
  kSetAccess,
  kUnmap,
  kExport,       // Export (an allocation as a POSIX fd)
  kImport,       // Import (a POSIX fd as an allocation)
  kLaunch,       // work on the stream: Fill, Matmul, Memset, HostFunction
  kCopy,         // CopyDevice, Copy, CopyToHost
  kSnapshot,     // AllocSnapshot, FreeSnapshot (snapshot storage)
  kCheck,        // Checksum, CompareData, CompareValue, CheckMatmul (checks that read data)
  kCapture,      // BeginCapture, EndCapture
  kGraphNode,    // capture-only calls that shape the graph: CaptureLane, ForkLane, JoinLane,
                 // NameCapturedNode, RecordEvent, WaitEvent, CaptureChildGraph,
                 // BeginConditional, EndConditional
  kGraphMemory,  // GraphAlloc, GraphFree, GraphMemory, TrimGraphMemory
  kInstantiate,  // InstantiateWith (and so Instantiate)
  kReplay,
  kUpdate,        // Update, SetNodeParams, SetNodeEnabled
  kQuery,         // KernelNodes, DescribeGraph, GetAccess, Inventory
  kDevice,        // SelectDevice, DescribeDevice
  kDestroy,       // DestroyGraph, DestroyExec
  kRetain,        // Retain (a new handle to mapped memory)
  kProperties,    // AllocProperties, Granularity, ProbeCapability (what an allocation gets)
  kMemoryInfo,    // MemoryInfo
  kAddressRange,  // AddressRange
  kSameMemory,    // SameAllocation (maps both and reads through them)
  kSynchronize,
};
inline constexpr size_t kFaultKindCount = static_cast<size_t>(FaultKind::kSynchronize) + 1;

// A kind's name ("create", "set_access", ...), and the driver call and error an injected fault
// reports for it.
struct FaultKindInfo {
  const char* name;
  const char* driver_call;
  const char* error;
};
const FaultKindInfo& Describe(FaultKind kind);

struct FaultPlan {
  std::optional<FaultKind> kind;  // nullopt: count every call; else only calls of this kind
  uint64_t nth = 1;               // 1-based
};

class FaultEngine final : public Engine {
 public:
  // `inner` must outlive this engine.
  FaultEngine(Engine& inner, std::optional<FaultPlan> plan) : inner_(inner), plan_(plan) {}

  uint64_t calls() const { return total_; }
  uint64_t calls(FaultKind kind) const { return by_kind_[static_cast<size_t>(kind)]; }
  bool injected() const { return injected_; }

  const DeviceInfo& info() const override { return inner_.info(); }
  using Engine::Reserve;
  Status Reserve(uint64_t size, uint64_t alignment, DevicePtr hint, DevicePtr* va) override;
  Status Free(DevicePtr va, uint64_t size) override;
  using Engine::Create;
  Status Create(const AllocProps& props, AllocHandle* out) override;
  Status Release(AllocHandle handle, SyncNote* note) override;
  Status Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) override;
  using Engine::SetAccess;
  Status SetAccess(DevicePtr va, uint64_t size, std::span<const DeviceAccess> access) override;
  Status GetAccess(DevicePtr va, int device, Access* out) override;
  Status SelectDevice(int device) override;
  Status DescribeDevice(int ordinal, DeviceInfo* out) override;
  Status Unmap(DevicePtr va, uint64_t size, SyncNote* note) override;
  Status Export(AllocHandle handle, int* fd) override;
  Status Import(int fd, AllocHandle* out) override;
  Status Fill(DevicePtr dst, uint64_t count, uint64_t seed, OpTiming* timing) override;
  Status Matmul(const MatmulArgs& args, OpTiming* timing) override;
  Status Memset(DevicePtr dst, uint64_t count, uint32_t pattern, OpTiming* timing) override;
  Status CopyDevice(DevicePtr dst, DevicePtr src, uint64_t bytes, OpTiming* timing) override;
  Status Copy(DataRef dst, DataRef src, uint64_t bytes, OpTiming* timing) override;
  Status HostFunction(OpTiming* timing) override;
  uint64_t host_calls() const override { return inner_.host_calls(); }  // not a driver call
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
  // Conditional nodes (engine.h's block; both count as kGraphNode).
  Status BeginConditional(ConditionKind kind, DevicePtr word, DevicePtr passes,
                          const std::string& name) override;
  Status EndConditional() override;
  // End of the conditional nodes block.
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
  Status AllocSnapshot(uint64_t bytes, DataPlace place, SnapshotHandle* out) override;
  Status FreeSnapshot(const SnapshotHandle& snapshot) override;
  Status CompareData(DevicePtr a, DataRef b, uint64_t count, const CompareOptions& options,
                     DataCompareResult* out) override;
  Status CompareValue(DevicePtr a, uint32_t pattern, uint64_t count, uint32_t max_report,
                      DataCompareResult* out) override;
  Status CheckMatmul(const MatmulArgs& args, uint32_t max_report, MatmulCheckResult* out) override;
  Status Synchronize() override;
  Status MemoryInfo(uint64_t* free_bytes, uint64_t* total_bytes) override;
  Status Granularity(const AllocProps& props, GranularityKind kind, uint64_t* bytes) override;
  Status AllocProperties(AllocHandle handle, AllocProps* granted) override;
  Status Retain(DevicePtr va, AllocHandle* out) override;
  Status SameAllocation(AllocHandle a, AllocHandle b, bool* same) override;
  Status AddressRange(DevicePtr va, DevicePtr* base, uint64_t* size) override;
  Status ProbeCapability(Capability capability, std::string* why_not) override;
  Status Inventory(EngineInventory* out) override;

 private:
  // Counts the call; returns the injected error when this is the planned one, else ok.
  Status Enter(FaultKind kind);

  Engine& inner_;
  std::optional<FaultPlan> plan_;
  uint64_t total_ = 0;
  std::array<uint64_t, kFaultKindCount> by_kind_{};
  bool injected_ = false;
};

}  // namespace vmm

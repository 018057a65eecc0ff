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
  kExport,   // Export (an allocation as a POSIX fd)
  kImport,   // Import (a POSIX fd as an allocation)
  kLaunch,   // kernels: Fill, Matmul, Memset
  kCopy,     // CopyDevice, CopyFromHost, CopyToHost
  kCheck,    // Checksum, Compare (kernels that read data back)
  kCapture,  // BeginCapture, EndCapture
  kInstantiate,
  kReplay,
  kUpdate,
  kQuery,         // KernelNodes, GetAccess, DescribeDevice, Inventory
  kSelect,        // SelectDevice
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
  Status CopyFromHost(DevicePtr dst, const void* src, uint64_t bytes, OpTiming* timing) override;
  Status BeginCapture() override;
  Status EndCapture(GraphHandle* out) override;
  Status Instantiate(GraphHandle graph, ExecHandle* out) override;
  Status Replay(ExecHandle exec, OpTiming* timing) override;
  Status Update(ExecHandle exec, GraphHandle graph, UpdateResult* result) override;
  Status KernelNodes(GraphHandle graph, std::vector<KernelNodeParams>* out) override;
  Status DestroyGraph(GraphHandle graph) override;
  Status DestroyExec(ExecHandle exec) override;
  Status CopyToHost(DevicePtr src, uint64_t bytes, void* dst) override;
  Status Checksum(DevicePtr src, uint64_t count, uint64_t* hash) override;
  Status Compare(DevicePtr a, DevicePtr b, uint64_t count, uint32_t max_report,
                 CompareResult* out) override;
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

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
  kLaunch,       // work on the stream: Fill, Matmul, Memset, Busy, HostFunction
  kCopy,         // CopyDevice, Copy, CopyToHost, CopyHashed
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
  // Every call of engine_calls.def: counted under its kind (Enter), then forwarded unless this
  // is the planned fault.
#define VMMRUN_ENGINE_CALL(name, fault_kind, params, args) \
  Status name params override {                            \
    VMM_RETURN_IF_ERROR(Enter(FaultKind::fault_kind));     \
    return inner_.name args;                               \
  }
#include "runner/engine/engine_calls.def"
#undef VMMRUN_ENGINE_CALL
  using Engine::Create;
  using Engine::Reserve;
  using Engine::SetAccess;
  Status SelectDevice(int device) override {
    VMM_RETURN_IF_ERROR(Enter(FaultKind::kDevice));
    return inner_.SelectDevice(device);
  }
  Status DescribeDevice(int ordinal, DeviceInfo* out) override {
    VMM_RETURN_IF_ERROR(Enter(FaultKind::kDevice));
    return inner_.DescribeDevice(ordinal, out);
  }

  uint64_t host_calls() const override { return inner_.host_calls(); }  // not a driver call

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

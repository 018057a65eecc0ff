// The kinds of engine call, as fault injection counts them and a scenario's inject_error names
// them: each kind's name, the driver call an injected fault names, and the error it returns by
// default (the one the driver returns for a refused call of that kind that leaves nothing behind).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

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
  kLaunch,       // work on the stream: LaunchKernel (fill, matmul, ...), Memset, Busy, HostFunction
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
  kCheckpoint,  // CheckpointProcess, RestoreProcess (cuCheckpointProcess*, by a helper process)
};
inline constexpr size_t kFaultKindCount = static_cast<size_t>(FaultKind::kCheckpoint) + 1;

// A kind's name ("create", "set_access", ...), and the driver call and error an injected fault
// reports for it.
struct FaultKindInfo {
  const char* name;
  const char* driver_call;
  const char* error;
};
const FaultKindInfo& Describe(FaultKind kind);

// The fault kind named `name` (Describe(kind).name: "create", "set_access", "launch", ...).
std::optional<FaultKind> FaultKindNamed(std::string_view name);

}  // namespace vmm

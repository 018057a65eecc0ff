// Engine: the one interface between the executor and a VMM/graph backend.
//
// Every VMM method maps one to one onto a CUDA driver call, so the CUDA backend is a thin wrapper
// and the host backend (Linux mmap/memfd) reproduces the same semantics:
//   Reserve   -> cuMemAddressReserve      Free      -> cuMemAddressFree
//   Create    -> cuMemCreate              Release   -> cuMemRelease
//   Map       -> cuMemMap                 Unmap     -> cuMemUnmap
//   SetAccess -> cuMemSetAccess        Memset    -> cuMemsetD32Async
//   GetAccess -> cuMemGetAccess        SelectDevice -> cudaSetDevice (which stream work goes to)
//   Export    -> cuMemExportToShareableHandle   Import -> cuMemImportFromShareableHandle
//   BeginCapture/EndCapture -> cudaStreamBeginCapture/EndCapture   Instantiate ->
//   cudaGraphInstantiateWithFlags (+ cudaGraphUpload)   Replay -> cudaGraphLaunch + sync
//   Update -> cudaGraphExecUpdate   KernelNodes -> cudaGraphGetNodes + cudaGraphKernelNodeGetParams
//   SetNodeParams -> cudaGraphExec{Kernel,Memset,Memcpy}NodeSetParams   SetNodeEnabled ->
//   cudaGraphNodeSetEnabled   GraphAlloc/GraphFree -> cudaMallocAsync/cudaFreeAsync
//   TrimGraphMemory -> cudaDeviceGraphMemTrim   GraphMemory -> cudaDeviceGetGraphMemAttribute
//   DescribeGraph -> cudaGraphGetNodes, cudaGraphNodeGetDependencies, the nodes' params and
//   cudaGraphDebugDotPrint
//   MemoryInfo -> cuMemGetInfo            Granularity -> cuMemGetAllocationGranularity
//   AllocProperties -> cuMemGetAllocationPropertiesFromHandle
//   Retain -> cuMemRetainAllocationHandle   AddressRange -> cuMemGetAddressRange
//
// VMM rules every backend enforces (the driver's, written here because the executor relies on
// them):
//   - A new mapping has no access until SetAccess is called on it; touching it before is a fault.
//   - Map needs the whole [va, va+size) inside one reservation and not mapped; size and offsets are
//     multiples of the granularity; it maps whole allocations only (offset 0, the handle's size);
//     the handle stays alive while mapped even after Release. runner/vocab/vmm_rules.h lists every
//     rule with the error the H200's driver returns for it.
//   - Unmap does not wait for kernels on its own: Unmap and Release here first wait for in-flight
//     work (the engine's stream) and say so in SyncNote, because unmapping under a running kernel
//     is the illegal-address crash inference engines hit in practice. SyncNote::wait = false skips
//     the wait (isolate blocks only: the fault that follows poisons the process).
//   - Free needs the range fully unmapped.
//
// Work (Fill, Matmul, Memset, CopyDevice, Copy, HostFunction) runs on the selected
// device's in-order stream (SelectDevice; the engine's own device unless another was selected).
// Between BeginCapture and EndCapture it is recorded into the graph instead of running (its
// OpTiming stays unmeasured), each call making one node on the current capture lane (see
// CaptureLane); the caller names that node with NameCapturedNode right after the call.
//
// Data plane (data_plane.h): snapshots are storage the engine owns (AllocSnapshot: cudaMalloc on
// the device by default, cudaHostAlloc or pageable memory on the host); Copy moves bytes between
// device memory and snapshots in any direction on the stream (cudaMemcpyAsync); CompareData,
// CompareValue and CheckMatmul judge the data where it lives and return only verdicts, counts,
// the first mismatches and datagen hashes, so nothing proportional to the data crosses PCIe.
//
// Matmul contract (so host and device results are bit-identical): row-major fp32,
// C[m x n] = A[m x k] * B[k x n], each element accumulated as acc = fmaf(A[i,p], B[p,j], acc) for
// p = 0 .. k-1 in order, starting from acc = 0.0f.
//
// Ownership and lifetime: the engine owns every object it creates. Destroying the engine releases
// what is still alive in reverse order of creation (snapshots, execs, graphs, mappings, handles,
// reservations), so a failed run never leaks. Handles are plain values; using one after it was
// destroyed returns an error Status, never undefined behaviour. Not thread-safe: one executor
// drives one engine.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/launch_config.h"
#include "runner/base/status.h"
#include "runner/engine/data_plane.h"
#include "runner/vocab/access.h"
#include "runner/vocab/alloc_props.h"
#include "runner/vocab/graph_node.h"

namespace vmm {

struct AllocHandle {
  uint64_t value = 0;
};
struct GraphHandle {
  uint64_t value = 0;
};
struct ExecHandle {
  uint64_t value = 0;
};

struct DeviceInfo {
  std::string backend;             // "host" or "cuda"
  std::string name;                // e.g. "NVIDIA H200" or "host (x86_64, Linux 6.1)"
  int ordinal = 0;                 // device ordinal (0 on host)
  std::string compute_capability;  // "9.0"; empty on host
  std::string driver_version;      // "13.0" (CUDA driver API version); kernel release on host
  std::string runtime_version;     // CUDA runtime the binary was built with; empty on host
  bool vmm_supported = false;
  uint64_t granularity_min = 0;          // bytes
  uint64_t granularity_recommended = 0;  // bytes
  uint64_t total_memory = 0;             // bytes
  int device_count = 1;                  // devices of this backend on the machine
  std::string pci_bus_id;                // "0000:19:00.0" (cuDeviceGetPCIBusId); "host" on host
  // Ordinals of the devices whose memory this one can reach through a mapping
  // (cuDeviceCanAccessPeer); itself included. Every emulated device on the host.
  std::vector<int> peers;
};

// The physical ordinal of a scenario's device `index`: device 0 is the engine's own device
// (--device), device i the one i ordinals after it, wrapping around (so `--device 1` on two GPUs
// swaps their roles). Where the backend has fewer devices than the index asks for, ordinal + index
// (an ordinal the backend refuses by name).
inline int ScenarioDeviceOrdinal(const DeviceInfo& info, int index) {
  if (index < info.device_count && info.device_count > 0)
    return (info.ordinal + index) % info.device_count;
  return info.ordinal + index;
}

// One entry of a SetAccess: the access `device` gets (-1: the engine's own device).
struct DeviceAccess {
  int device = -1;
  Access access = Access::kReadWrite;
};

// Device-side timing of one operation; gpu_us < 0 means "not measured" (e.g. inside a capture).
struct OpTiming {
  double gpu_us = -1;
};

// Unmap/Release: whether to wait for in-flight work first (in), and whether there was any (out).
struct SyncNote {
  bool waited = false;  // out: true when there was enqueued work that had not finished yet
  double wait_us = 0;   // out: wall time spent waiting
  // In: false sends the call without waiting for in-flight work (`wait: false`, validated to occur
  // only inside an isolate block). The outputs then stay false/0.
  bool wait = true;
};

// What CheckpointProcess / RestoreProcess saw (the driver's calls, timed by whoever made them).
struct CheckpointFacts {
  double lock_us = -1, checkpoint_us = -1;  // CheckpointProcess
  double restore_us = -1, unlock_us = -1;   // RestoreProcess
  int64_t freed_bytes = 0;                  // device free memory after the call, less before
  std::string state;  // the process state after the call: running, locked, checkpointed, failed
};

struct MatmulArgs {
  DevicePtr a = 0, b = 0, c = 0;
  uint32_t m = 0, n = 0, k = 0;
};

// add / scale / axpy: c[i] = alpha * a[i] + b[i] (one fused rounding) for i < count, or
// c[i] = alpha * a[i] when b is 0. fp32 elements; c is a or b itself, or overlaps neither.
struct AxpyArgs {
  DevicePtr a = 0, b = 0, c = 0;
  uint64_t count = 0;
  float alpha = 1.0f;
};

struct UpdateResult {
  UpdateCode code = UpdateCode::kError;
  // The node of the updating graph that blocked the update (cudaGraphExecUpdateResultInfo's
  // errorNode), by the name NameCapturedNode gave it; "" when the API names none. For a changed
  // dependency, error_from_node names the mismatched dependency (errorFromNode).
  std::string error_node, error_from_node;
  std::string api_error;  // the API's own error name when it returned one
                          // ("cudaErrorGraphExecUpdateFailure")
};

// How Instantiate makes an exec (cudaGraphInstantiateWithFlags and cudaGraphUpload).
struct InstantiateOptions {
  bool upload = false;               // cudaGraphUpload on the engine's stream, waited for
  bool auto_free_on_launch = false;  // cudaGraphInstantiateFlagAutoFreeOnLaunch
  bool device_launch = false;        // cudaGraphInstantiateFlagDeviceLaunch
};
// What Instantiate did and how long each part took (host wall time, microseconds).
struct InstantiateInfo {
  double instantiate_us = 0;
  double upload_us = -1;         // < 0: no upload
  unsigned long long flags = 0;  // the cudaGraphInstantiateFlags value passed
};

// The new parameters of one node of an executable graph (SetNodeParams). One kind per node type
// the language can change; the others stay unset.
struct NodeParams {
  enum class Kind { kFill, kMatmul, kMemset, kCopy } kind = Kind::kFill;
  DevicePtr dst = 0, src = 0;  // fill, memset, copy: the destination; copy: the source
  uint64_t count = 0;          // fill, memset: 32-bit elements; copy: bytes
  uint64_t seed = 0;           // fill
  uint32_t pattern = 0;        // memset
  MatmulArgs matmul;           // matmul
};

// How many of its latest releases an engine remembers for AllowReleasedHandle (engine_calls.def).
inline constexpr size_t kReleasedHandlesKept = 16;

// The names BeginConditional / EndConditional give the kernel nodes they add: the step's name and
// this suffix ("drain (condition)", "drain (next pass)").
inline constexpr const char* kConditionNodeSuffix = " (condition)";
inline constexpr const char* kNextPassNodeSuffix = " (next pass)";

// One memory range a node touches: reads (Access::kRead) or writes (Access::kReadWrite).
struct NodeOperand {
  DevicePtr va = 0;
  uint64_t bytes = 0;
  Access access = Access::kRead;
  std::string_view name = {};  // the kernel's parameter ("dst", "a", ...): errors name it
  // The memory alone (a name is how one backend's messages say it).
  bool operator==(const NodeOperand& o) const {
    return va == o.va && bytes == o.bytes && access == o.access;
  }
};
// One node of a graph as the backend holds it (DescribeGraph).
struct GraphNodeInfo {
  std::string name;  // given by NameCapturedNode; "" for a node nobody named
  NodeType type = NodeType::kEmpty;
  // What it does, the same words on every backend: the kernel's name; "device_to_device",
  // "host_to_device", "device_to_host" or "host_to_host"; "value 0x..." (memset); "event N"; "bytes
  // N" (mem_alloc); "" otherwise.
  std::string detail;
  std::vector<uint32_t> dependencies;   // indices into the graph's node list, in edge order
  std::vector<NodeOperand> operands;    // memory it reads and writes (mem_alloc: the allocation)
  std::vector<GraphNodeInfo> children;  // a child graph node: the child's nodes
};
struct GraphStructure {
  // Named nodes in the order they were named (capture order), then any others.
  std::vector<GraphNodeInfo> nodes;
  std::string dot;  // Graphviz text: cudaGraphDebugDotPrint on CUDA, the same structure on host
};

// The graph memory pool of the device (cudaDeviceGetGraphMemAttribute), bytes.
struct GraphMemoryUsage {
  uint64_t used_current = 0, used_high = 0, reserved_current = 0, reserved_high = 0;
};

// The launch parameters of one kernel node, as the backend stores them: two captures whose nodes
// compare equal here can share one executable graph without any update.
struct KernelNodeParams {
  std::string function;  // kernel name, e.g. "vmm_matmul_f32"
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t shared_bytes = 0;
  std::vector<uint8_t> arg_bytes;  // the kernel arguments, packed as the ABI lays them out
  bool operator==(const KernelNodeParams&) const = default;
};

// What an engine holds at one moment: every live reservation, allocation and mapping. A step with
// expect_error compares it before and after the refused call to prove that the call changed
// nothing (runner/exec/expect_error.cc); tests use it to see what a call left behind.
struct EngineInventory {
  struct Range {
    DevicePtr va = 0;
    uint64_t size = 0;
    bool operator==(const Range&) const = default;
  };
  struct Allocation {
    uint64_t handle = 0;  // the AllocHandle value
    uint64_t size = 0;    // bytes; 0 where the backend cannot tell (an imported handle on CUDA)
    bool operator==(const Allocation&) const = default;
  };
  struct Mapping {
    DevicePtr va = 0;
    uint64_t size = 0;
    uint64_t handle = 0;  // the AllocHandle value it was mapped from (it may be released since)
    // By device ordinal (0 .. info().device_count - 1): the access each device has, as GetAccess
    // reads it back (CUDA: cuMemGetAccess).
    std::vector<Access> access;
    bool access_known = true;  // false: GetAccess did not answer for some device of this mapping
    bool operator==(const Mapping&) const = default;
  };
  std::vector<Range> reservations;      // by address
  std::vector<Allocation> allocations;  // by handle value
  std::vector<Mapping> mappings;        // by address
  bool operator==(const EngineInventory&) const = default;
};

// Every method has a default that refuses (Refuse below): a backend overrides what it implements,
// and the step that needs a method its backend lacks fails with a message that says so.
class Engine {
 public:
  virtual ~Engine() = default;
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  virtual const DeviceInfo& info() const = 0;

  // What the backend itself recorded of a device fault that poisoned it, beyond the error name
  // (the host twin: its fault trap's account, e.g. "SIGSEGV (SEGV_ACCERR: ...), write at 0x7f...");
  // "" when none, or when the backend knows no more than the error (CUDA: the kernel log has it).
  virtual std::string FaultNote() const { return ""; }
  // How many host functions (HostFunction) have run so far.
  virtual uint64_t host_calls() const { return 0; }

  // Threads (runner/engine/shared_engine.h serialises every other call of several threads).
  // True when the VMM calls (Reserve, Free, Create, Map, SetAccess, Unmap, Release) may run from
  // several threads at once, and beside one other call, their waits for in-flight work included:
  // the CUDA backend (the driver takes them from any thread; the engine guards its own tables and
  // tracks the stream's work in atomics). The host twin says false: its calls are serialised.
  virtual bool ConcurrentVmm() const { return false; }
  // Waits until the work in flight when it is called has run; true when there was some. Errors
  // are the next waiting call's to report. Safe to call from any thread while another calls the
  // engine; SharedEngine calls it, outside its lock, before a call that would wait for the stream,
  // so that one thread's wait does not hold the others back. The default waits for nothing.
  virtual bool WaitForWork() { return false; }
  // Readies the calling thread to call the engine (CUDA: the device's context current on it), so
  // that a threads group's first step does not pay for it; with `with_context` false the thread
  // keeps NO context current (CUDA: made so, and every later call of the thread's leaves it so;
  // the plan gives such a thread VMM calls only, which the driver takes without one). Safe from
  // any thread.
  virtual void PrepareThread(bool with_context) { (void)with_context; }
  // Brackets a burst of memory calls on the calling thread (HoldContext(true) before its first,
  // HoldContext(false) after its last): in between, the thread runs nothing but this engine's
  // memory calls (reserve, free, create, release, map, set_access, unmap, export, import and the
  // queries a create makes), so a context the engine made current stays current unless the
  // engine itself changes it (CUDA: its calls then skip asking the driver which context is
  // current). Outside a bracket every call asks. Nesting is not allowed. The default does nothing.
  virtual void HoldContext(bool hold) { (void)hold; }
  // True while this process is checkpointed (CheckpointProcess, and no RestoreProcess that
  // succeeded since): then a CUDA call other than those engine_calls.def names would block for
  // good, so the run ends without one (no synchronize, no teardown).
  virtual bool Checkpointed() const { return false; }
  // Ends the processes the engine started for itself (CUDA: the checkpoint helper, which gives
  // back its hold and its context first), waiting for them. Makes no CUDA call of this process's,
  // so it is safe while checkpointed. An isolate child calls it before it exits.
  virtual void EndHelpers() {}

  // The backend calls, one virtual method per row of engine_calls.def (their contracts are
  // written there), each refusing by default. The parameters are named for the backends and
  // unused here.
#define VMMRUN_ENGINE_CALL(name, fault_kind, params, args) \
  virtual Status name params { return Refuse(#name); }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "runner/engine/engine_calls.def"
#pragma GCC diagnostic pop
#undef VMMRUN_ENGINE_CALL

  // --- Devices (defaults that serve the engine's own device) ---
  // Work enqueued after this call (kernels, copies, captures, instantiations, data checks) runs on
  // device `device`'s stream, in its primary context; -1 (the start) is the engine's own device.
  // Replay runs an exec where it was instantiated, whatever is selected. VMM calls are
  // process-wide and ignore the selection; Unmap, Release and Synchronize wait for every device's
  // work. An ordinal the backend lacks, or a device without VMM support, is an error Status.
  virtual Status SelectDevice(int device) {
    if (device < 0 || device == info().ordinal) return Status::Ok();
    return Refuse("SelectDevice");
  }
  // What device `ordinal` is (for the report's `devices`): the engine's own info for its own.
  virtual Status DescribeDevice(int ordinal, DeviceInfo* out) {
    if (ordinal >= 0 && ordinal != info().ordinal) return Refuse("DescribeDevice");
    *out = info();
    return Status::Ok();
  }

  // Conveniences over the calls above (Fill and Matmul: kernel_params.cc). A backend that
  // overrides Reserve, Create or SetAccess says `using Engine::Reserve;` (Create, SetAccess) so
  // that these stay visible on it.
  // Reserve without a hint.
  Status Reserve(uint64_t size, uint64_t alignment, DevicePtr* va) {
    return Reserve(size, alignment, 0, va);
  }
  // The plain allocation of `size` bytes (AllocProps defaults).
  Status Create(uint64_t size, AllocHandle* out) {
    AllocProps props;
    props.size = size;
    return Create(props, out);
  }
  // Several devices, waiting for in-flight work first.
  Status SetAccess(DevicePtr va, uint64_t size, std::span<const DeviceAccess> access) {
    return SetAccess(va, size, access, nullptr);
  }
  // The engine's own device only.
  Status SetAccess(DevicePtr va, uint64_t size, Access access) {
    const DeviceAccess one{-1, access};
    return SetAccess(va, size, std::span<const DeviceAccess>(&one, 1), nullptr);
  }
  // cudaGraphInstantiate with no flags.
  Status Instantiate(GraphHandle graph, ExecHandle* out) {
    return InstantiateWith(graph, InstantiateOptions{}, out, nullptr);
  }
  // LaunchKernel of vmm_fill_f32: `count` fp32 elements at dst set to datagen::FillValue(seed, i).
  Status Fill(DevicePtr dst, uint64_t count, uint64_t seed, OpTiming* timing);
  // LaunchKernel of vmm_matmul_f32: c = a x b (row-major fp32, m x k by k x n); m and n must be
  // above 0 (a launch of no blocks is refused).
  Status Matmul(const MatmulArgs& args, OpTiming* timing);

 protected:
  // For Inventory overrides: fills every mapping's `access` with GetAccess for each device of
  // this backend; a mapping for which some device gets no answer is marked !access_known (its
  // access reads kNone there). The inventory still compares equal before and after a call.
  void ReadAccessBack(EngineInventory* inventory) {
    const int devices = info().device_count > 0 ? info().device_count : 1;
    for (EngineInventory::Mapping& m : inventory->mappings) {
      m.access.assign(static_cast<size_t>(devices), Access::kNone);
      m.access_known = true;
      for (int d = 0; d < devices; ++d) {
        if (!GetAccess(m.va, d, &m.access[static_cast<size_t>(d)]).ok()) {
          m.access[static_cast<size_t>(d)] = Access::kNone;
          m.access_known = false;
        }
      }
    }
  }
  // What every method does unless the backend overrides it: a run-time error naming the backend
  // and the method ("the fake backend does not implement Memset"), so a new engine method needs
  // code only in the backends that run it.
  Status Refuse(const char* method) const {
    return RuntimeError("the " + info().backend + " backend does not implement " + method);
  }
};

}  // namespace vmm

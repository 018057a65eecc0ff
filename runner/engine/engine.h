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
#include <vector>

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

struct MatmulArgs {
  DevicePtr a = 0, b = 0, c = 0;
  uint32_t m = 0, n = 0, k = 0;
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

// The names BeginConditional / EndConditional give the kernel nodes they add: the step's name and
// this suffix ("drain (condition)", "drain (next pass)").
inline constexpr const char* kConditionNodeSuffix = " (condition)";
inline constexpr const char* kNextPassNodeSuffix = " (next pass)";

// One memory range a node touches: reads (Access::kRead) or writes (Access::kReadWrite).
struct NodeOperand {
  DevicePtr va = 0;
  uint64_t bytes = 0;
  Access access = Access::kRead;
  bool operator==(const NodeOperand&) const = default;
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

  // --- VMM (one to one with the driver; see the table above) ---
  // `alignment` 0 means the granularity. `*va` receives the reserved base address. `hint` (0: none)
  // is the `addr` argument of cuMemAddressReserve: an address the range should start at if it is
  // free. It is only a hint: an occupied (or unsuitable) hint yields another address, never an
  // error, so the caller compares *va with it.
  virtual Status Reserve(uint64_t /*size*/, uint64_t /*alignment*/, DevicePtr /*hint*/,
                         DevicePtr* /*va*/) {
    return Refuse("Reserve");
  }
  // Reserve without a hint. A backend that overrides Reserve says `using Engine::Reserve;`.
  Status Reserve(uint64_t size, uint64_t alignment, DevicePtr* va) {
    return Reserve(size, alignment, 0, va);
  }
  virtual Status Free(DevicePtr /*va*/, uint64_t /*size*/) { return Refuse("Free"); }
  virtual Status Create(const AllocProps& /*props*/, AllocHandle* /*out*/) {
    return Refuse("Create");
  }
  // The plain allocation of `size` bytes (AllocProps defaults). A backend that overrides Create
  // says `using Engine::Create;` so this overload stays visible on it.
  Status Create(uint64_t size, AllocHandle* out) {
    AllocProps props;
    props.size = size;
    return Create(props, out);
  }
  virtual Status Release(AllocHandle /*handle*/, SyncNote* /*note*/) { return Refuse("Release"); }
  // Maps [handle+offset, +size) at va. The mapping has no access until SetAccess.
  virtual Status Map(DevicePtr /*va*/, uint64_t /*size*/, uint64_t /*offset*/,
                     AllocHandle /*handle*/) {
    return Refuse("Map");
  }
  // cuMemSetAccess with one CUmemAccessDesc per entry, in ONE call: each listed device gets its
  // access; devices not listed keep theirs. Every device's access starts at none on a new mapping.
  virtual Status SetAccess(DevicePtr /*va*/, uint64_t /*size*/,
                           std::span<const DeviceAccess> /*access*/) {
    return Refuse("SetAccess");
  }
  // The engine's own device only. A backend that overrides SetAccess says `using
  // Engine::SetAccess;` so this overload stays visible on it.
  Status SetAccess(DevicePtr va, uint64_t size, Access access) {
    const DeviceAccess one{-1, access};
    return SetAccess(va, size, std::span<const DeviceAccess>(&one, 1));
  }
  // cuMemGetAccess: the access `device` (-1: the engine's own) has at address `va`, which must be
  // mapped (else the driver's CUDA_ERROR_INVALID_VALUE).
  virtual Status GetAccess(DevicePtr /*va*/, int /*device*/, Access* /*out*/) {
    return Refuse("GetAccess");
  }

  // --- Devices ---
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
  virtual Status Unmap(DevicePtr /*va*/, uint64_t /*size*/, SyncNote* /*note*/) {
    return Refuse("Unmap");
  }
  // Exports the allocation as a POSIX file descriptor (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  // the allocation was created with kHandleTypePosixFd). On success `*fd` is a new descriptor that
  // the caller owns and must close (closing it does not release the allocation). Another process
  // that receives it (SCM_RIGHTS) can Import it.
  virtual Status Export(AllocHandle /*handle*/, int* /*fd*/) { return Refuse("Export"); }
  // Imports a descriptor made by Export (in this process or another) as a new allocation handle:
  // the same physical memory, mapped and released like a created one. Does not take ownership of
  // `fd`: the caller still closes it (the new handle does not need it afterwards).
  virtual Status Import(int /*fd*/, AllocHandle* /*out*/) { return Refuse("Import"); }

  // --- Kernels (enqueued on the engine's stream; recorded while capturing) ---
  // With a `timing`, the call waits for the kernel and reports its device time. With nullptr it
  // returns as soon as the kernel is enqueued: the work stays in flight (a later Unmap or Release
  // then waits for it and says so). The host backend runs kernels synchronously either way.
  // Fills `count` fp32 elements at dst with datagen::FillValue(seed, i).
  virtual Status Fill(DevicePtr /*dst*/, uint64_t /*count*/, uint64_t /*seed*/,
                      OpTiming* /*timing*/) {
    return Refuse("Fill");
  }
  virtual Status Matmul(const MatmulArgs& /*args*/, OpTiming* /*timing*/) {
    return Refuse("Matmul");
  }
  // Sets `count` 32-bit words at dst to `pattern` (cuMemsetD32Async): a byte poison is the byte
  // repeated four times (0xA5 -> 0xA5A5A5A5).
  virtual Status Memset(DevicePtr /*dst*/, uint64_t /*count*/, uint32_t /*pattern*/,
                        OpTiming* /*timing*/) {
    return Refuse("Memset");
  }

  // A kernel that runs for `duration_ns` (spinning on the device's clock) and then sets `count`
  // 32-bit words at dst to `pattern`: in-flight work of a known length, so that an Unmap without
  // waiting races it for real. Timing as for the kernels above (nullptr: leave it in flight).
  virtual Status Busy(DevicePtr /*dst*/, uint64_t /*count*/, uint64_t /*duration_ns*/,
                      uint32_t /*pattern*/, OpTiming* /*timing*/) {
    return Refuse("Busy");
  }

  // Copies `bytes` from device address src to dst on the stream (cudaMemcpyAsync, device to
  // device); timing as for kernels.
  virtual Status CopyDevice(DevicePtr /*dst*/, DevicePtr /*src*/, uint64_t /*bytes*/,
                            OpTiming* /*timing*/) {
    return Refuse("CopyDevice");
  }
  // Copies `bytes` from src to dst in any direction: device memory (a mapped range or a device
  // snapshot) or a host snapshot on either side (cudaMemcpyAsync on the stream, so it is ordered
  // with the kernels). Timing as for kernels: with `timing` it waits and reports the transfer's
  // device time; with nullptr it returns once enqueued (a pageable host side may make the call
  // wait on its own, as cudaMemcpyAsync does). The two sides may not overlap.
  virtual Status Copy(DataRef /*dst*/, DataRef /*src*/, uint64_t /*bytes*/, OpTiming* /*timing*/) {
    return Refuse("Copy");
  }

  // --- Graphs ---
  virtual Status BeginCapture() { return Refuse("BeginCapture"); }
  virtual Status EndCapture(GraphHandle* /*out*/) { return Refuse("EndCapture"); }
  // Capture lanes: lane 0 is the capturing stream; lane N > 0 is a stream of the engine that
  // joins the capture when ForkLane makes it wait for another lane (an event recorded on `from`
  // and waited for on `to`: no node). Work captured after CaptureLane(n) goes to lane n.
  // JoinLane makes `into` wait for everything captured on `from`. Every lane that was forked must
  // be joined into lane 0 (directly or through others) before EndCapture. Outside a capture these
  // fail.
  virtual Status CaptureLane(int /*lane*/) { return Refuse("CaptureLane"); }
  virtual Status ForkLane(int /*from*/, int /*to*/) { return Refuse("ForkLane"); }
  virtual Status JoinLane(int /*from*/, int /*into*/) { return Refuse("JoinLane"); }
  // Names the node the last call made on the current lane (the step that made it). Fails when
  // that call made no node.
  virtual Status NameCapturedNode(const std::string& /*name*/) {
    return Refuse("NameCapturedNode");
  }
  // Capture only: an event record node / event wait node on event `event` (the engine keeps one
  // event per number, created on first use).
  virtual Status RecordEvent(int /*event*/) { return Refuse("RecordEvent"); }
  virtual Status WaitEvent(int /*event*/) { return Refuse("WaitEvent"); }
  // A host function on the stream (cudaLaunchHostFunc; in a capture, a host node). When it runs it
  // adds one to host_calls(). Outside a capture the call waits for it.
  virtual Status HostFunction(OpTiming* /*timing*/) { return Refuse("HostFunction"); }
  // How many host functions have run so far.
  virtual uint64_t host_calls() const { return 0; }
  // Capture only: a graph allocation of `bytes` (cudaMallocAsync while capturing: a mem alloc
  // node); *ptr receives its address, fixed for the graph's life.
  virtual Status GraphAlloc(uint64_t /*bytes*/, DevicePtr* /*ptr*/) { return Refuse("GraphAlloc"); }
  // Frees a graph allocation: in a capture a mem free node, else cudaFreeAsync on the stream.
  virtual Status GraphFree(DevicePtr /*ptr*/) { return Refuse("GraphFree"); }
  // Capture only: embeds a copy of `child` as one child graph node.
  virtual Status CaptureChildGraph(GraphHandle /*child*/) { return Refuse("CaptureChildGraph"); }
  // --- Conditional nodes (if / while, CUDA 12.4+): one block, keep it together ---
  // Capture only. BeginConditional adds, on the current lane, a kernel node that reads the 32-bit
  // word at `word` and sets the condition to (word != 0) (cudaGraphSetConditional), named `name`
  // + kConditionNodeSuffix, then a conditional node of `kind` after it. Work captured from then
  // until the matching EndConditional goes into the conditional node's body graph, as one chain
  // (CaptureLane/ForkLane are refused meanwhile); NameCapturedNode names the body's nodes.
  // Bodies nest. EndConditional ends the innermost body; for a while loop it first adds the body's
  // last node, a kernel named `name` + kNextPassNodeSuffix that subtracts one from the counter at
  // `word` (not below 0), adds one to the word at `passes` (0: none) and sets the condition to
  // (counter != 0), so a counter of N runs N passes. After EndConditional the lane depends on the
  // conditional node: NameCapturedNode names it.
  virtual Status BeginConditional(ConditionKind /*kind*/, DevicePtr /*word*/, DevicePtr /*passes*/,
                                  const std::string& /*name*/) {
    return Refuse("BeginConditional");
  }
  virtual Status EndConditional() { return Refuse("EndConditional"); }
  // --- end of the conditional nodes block ---

  // The graph memory pool (waits for the stream first).
  virtual Status GraphMemory(GraphMemoryUsage* /*out*/) { return Refuse("GraphMemory"); }
  virtual Status TrimGraphMemory() { return Refuse("TrimGraphMemory"); }

  // Instantiates `graph` with `options`; `info` (may be null) says what was done and how long it
  // took.
  virtual Status InstantiateWith(GraphHandle /*graph*/, const InstantiateOptions& /*options*/,
                                 ExecHandle* /*out*/, InstantiateInfo* /*info*/) {
    return Refuse("Instantiate");
  }
  // cudaGraphInstantiate with no flags.
  Status Instantiate(GraphHandle graph, ExecHandle* out) {
    return InstantiateWith(graph, InstantiateOptions{}, out, nullptr);
  }
  // Launches the executable graph and waits for it.
  virtual Status Replay(ExecHandle /*exec*/, OpTiming* /*timing*/) { return Refuse("Replay"); }
  // cudaGraphExecUpdate(exec, graph). A refused update is not an error Status: the Status is ok and
  // `result->code` says why. An error Status means the call itself could not be made.
  virtual Status Update(ExecHandle /*exec*/, GraphHandle /*graph*/, UpdateResult* /*result*/) {
    return Refuse("Update");
  }
  // Per-node updates of an exec. `node` is the name of a node of the graph the exec was
  // instantiated from (that graph must still exist). SetNodeParams changes what the node does on
  // later launches (its kind must match the node's); SetNodeEnabled turns a kernel, memset or
  // memcpy node off (it does nothing when the exec runs) or on again.
  virtual Status SetNodeParams(ExecHandle /*exec*/, const std::string& /*node*/,
                               const NodeParams& /*params*/) {
    return Refuse("SetNodeParams");
  }
  virtual Status SetNodeEnabled(ExecHandle /*exec*/, const std::string& /*node*/,
                                bool /*enabled*/) {
    return Refuse("SetNodeEnabled");
  }
  // Kernel nodes of `graph` in capture order.
  virtual Status KernelNodes(GraphHandle /*graph*/, std::vector<KernelNodeParams>* /*out*/) {
    return Refuse("KernelNodes");
  }
  // The nodes and edges of `graph`, read back from the backend.
  virtual Status DescribeGraph(GraphHandle /*graph*/, GraphStructure* /*out*/) {
    return Refuse("DescribeGraph");
  }
  virtual Status DestroyGraph(GraphHandle /*graph*/) { return Refuse("DestroyGraph"); }
  virtual Status DestroyExec(ExecHandle /*exec*/) { return Refuse("DestroyExec"); }

  // --- Data (synchronous: each waits for the stream first) ---
  virtual Status CopyToHost(DevicePtr /*src*/, uint64_t /*bytes*/, void* /*dst*/) {
    return Refuse("CopyToHost");
  }
  // The datagen hash (wrapping sum of HashWord) of `count` 32-bit words at src.
  virtual Status Checksum(DevicePtr /*src*/, uint64_t /*count*/, uint64_t* /*hash*/) {
    return Refuse("Checksum");
  }

  // --- Data plane: snapshots and checks judged where the data lives ---
  // Snapshot storage of `bytes` at `place` (device memory, pinned or pageable host memory),
  // owned by the engine until FreeSnapshot or the engine's destruction. Its contents are
  // undefined until a Copy writes them.
  virtual Status AllocSnapshot(uint64_t /*bytes*/, DataPlace /*place*/, SnapshotHandle* /*out*/) {
    return Refuse("AllocSnapshot");
  }
  // Waits for work in flight, then frees the storage.
  virtual Status FreeSnapshot(const SnapshotHandle& /*snapshot*/) { return Refuse("FreeSnapshot"); }
  // Bitwise comparison of `count` 32-bit words of device memory at `a` (the checked buffer) with
  // `b` (device memory or a host snapshot, the reference): the mismatch count, the first
  // options.max_report mismatches {index, want = b[i], got = a[i]} in ascending index order, and
  // the datagen hashes of both sides. Judged on the device: only the result crosses PCIe (a host
  // snapshot's words are staged to the device in pieces).
  virtual Status CompareData(DevicePtr /*a*/, DataRef /*b*/, uint64_t /*count*/,
                             const CompareOptions& /*options*/, DataCompareResult* /*out*/) {
    return Refuse("CompareData");
  }
  // As CompareData against `count` copies of the word `pattern` (other_hash stays 0).
  virtual Status CompareValue(DevicePtr /*a*/, uint32_t /*pattern*/, uint64_t /*count*/,
                              uint32_t /*max_report*/, DataCompareResult* /*out*/) {
    return Refuse("CompareValue");
  }
  // Verifies C = A·B against fp64 with the rigorous error bound of matmul_verify.h (full
  // reference for m*n*k <= kFullReferenceLimit, else Freivalds' check with the failing rows
  // recomputed in full), where the data lives. Keeps at most `max_report` (<= 64) mismatches.
  virtual Status CheckMatmul(const MatmulArgs& /*args*/, uint32_t /*max_report*/,
                             MatmulCheckResult* /*out*/) {
    return Refuse("CheckMatmul");
  }
  virtual Status Synchronize() { return Refuse("Synchronize"); }

  // --- Queries (each one driver call, except where said) ---
  // The device's free and total memory, bytes (cuMemGetInfo). The count covers the whole device
  // (other processes included); memory released while still mapped is not free yet.
  virtual Status MemoryInfo(uint64_t* /*free_bytes*/, uint64_t* /*total_bytes*/) {
    return Refuse("MemoryInfo");
  }
  // The minimum or recommended granularity for allocations with `props` (size ignored), bytes
  // (cuMemGetAllocationGranularity).
  virtual Status Granularity(const AllocProps& /*props*/, GranularityKind /*kind*/,
                             uint64_t* /*bytes*/) {
    return Refuse("Granularity");
  }
  // The properties `handle` was granted (cuMemGetAllocationPropertiesFromHandle); `size` is the
  // allocation's size, known to the engine.
  virtual Status AllocProperties(AllocHandle /*handle*/, AllocProps* /*granted*/) {
    return Refuse("AllocProperties");
  }
  // A new handle to the allocation mapped at `va` (cuMemRetainAllocationHandle). It is released
  // like any other handle; the allocation lives until every handle is released and every mapping
  // unmapped.
  virtual Status Retain(DevicePtr /*va*/, AllocHandle* /*out*/) { return Refuse("Retain"); }
  // Whether `a` and `b` are handles to the same physical allocation. Not one driver call: the
  // CUDA backend compares the handle values and, when they differ, proves it by data (see
  // cuda_engine.h); the host twin knows which memory each handle holds.
  virtual Status SameAllocation(AllocHandle /*a*/, AllocHandle /*b*/, bool* /*same*/) {
    return Refuse("SameAllocation");
  }
  // The base and size of the address range `va` lies in (cuMemGetAddressRange).
  virtual Status AddressRange(DevicePtr /*va*/, DevicePtr* /*base*/, uint64_t* /*size*/) {
    return Refuse("AddressRange");
  }
  // Whether this device has `capability`, decided by a trial: a Create of one granule with the
  // capability's properties, read back and released (the CUDA backend asks the device attribute
  // first, where one exists). Ok with *why_not empty: it has it. Ok with *why_not set: it lacks it,
  // and why ("cuMemCreate: CUDA_ERROR_NOT_PERMITTED: ..."). An error Status: the trial itself
  // failed in a way that says nothing about the capability (e.g. its release failed).
  virtual Status ProbeCapability(Capability /*capability*/, std::string* /*why_not*/) {
    return Refuse("ProbeCapability");
  }

  // --- Introspection ---
  // Fills `out` with what the engine holds now (see EngineInventory). Makes no driver call that
  // changes anything; each mapping's access is read back through GetAccess (ReadAccessBack).
  virtual Status Inventory(EngineInventory* /*out*/) { return Refuse("Inventory"); }

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

// Engine: the one interface between the executor and a VMM/graph backend.
//
// Every VMM method maps one to one onto a CUDA driver call, so the CUDA backend is a thin wrapper
// and the host backend (Linux mmap/memfd) reproduces the same semantics:
//   Reserve   -> cuMemAddressReserve      Free      -> cuMemAddressFree
//   Create    -> cuMemCreate              Release   -> cuMemRelease
//   Map       -> cuMemMap                 Unmap     -> cuMemUnmap
//   SetAccess -> cuMemSetAccess        Memset    -> cuMemsetD32Async
//   BeginCapture/EndCapture -> cudaStreamBeginCapture/EndCapture   Instantiate ->
//   cudaGraphInstantiate Replay -> cudaGraphLaunch + sync      Update -> cudaGraphExecUpdate
//   KernelNodes -> cudaGraphGetNodes + cudaGraphKernelNodeGetParams
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
// Kernels (Fill, Matmul, Memset) run on the engine's single in-order stream. Between BeginCapture
// and EndCapture, Fill and Matmul are recorded into the graph instead of running (their OpTiming
// stays unmeasured); capturing Memset is not supported yet.
//
// Matmul contract (so host and device results are bit-identical): row-major fp32,
// C[m x n] = A[m x k] * B[k x n], each element accumulated as acc = fmaf(A[i,p], B[p,j], acc) for
// p = 0 .. k-1 in order, starting from acc = 0.0f.
//
// Ownership and lifetime: the engine owns every object it creates. Destroying the engine releases
// what is still alive in reverse order of creation (execs, graphs, mappings, handles,
// reservations), so a failed run never leaks. Handles are plain values; using one after it was
// destroyed returns an error Status, never undefined behaviour. Not thread-safe: one executor
// drives one engine.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/vocab/access.h"

namespace vmm {

using DevicePtr = uint64_t;  // a virtual address in the engine's address space

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
  int64_t error_node = -1;  // index (capture order) of the node that blocked the update, -1 if none
  std::string api_error;    // the API's own error name when it returned one
                            // ("cudaErrorGraphExecUpdateFailure")
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

// Where a Create places physical memory (CUmemLocationType).
enum class MemLocation : uint8_t {
  kDevice,    // a GPU's memory; AllocProps::location_id is the device ordinal
  kHost,      // host memory (CUDA 13)
  kHostNuma,  // host memory on one NUMA node; location_id is the node
};

// Shareable handle types a Create asks for, as bits (the values of CUmemAllocationHandleType).
inline constexpr uint32_t kHandleTypePosixFd = 0x1;
inline constexpr uint32_t kHandleTypeFabric = 0x8;

// What a Create asks for (CUmemAllocationProp). The defaults are the plain allocation every
// scenario made before properties existed: device memory on the engine's device, not shareable,
// not compressible, no RDMA flag. A backend that cannot grant a property refuses the Create with an
// error that names it (never silently drops it).
struct AllocProps {
  uint64_t size = 0;
  MemLocation location = MemLocation::kDevice;
  int location_id = -1;       // -1: the engine's device for kDevice; the node for kHostNuma
  uint32_t handle_types = 0;  // kHandleType* bits
  bool compression = false;
  bool gpudirect_rdma = false;

  // True when nothing beyond the size and the engine's own device is asked for.
  bool IsPlain() const {
    return location == MemLocation::kDevice && location_id < 0 && handle_types == 0 &&
           !compression && !gpudirect_rdma;
  }
};

// Result of an exact (bitwise) comparison of two buffers of 32-bit elements.
struct CompareResult {
  uint64_t mismatches = 0;
  std::vector<uint64_t> first_indices;  // up to max_report indices, ascending
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
  // `alignment` 0 means the granularity. `*va` receives the reserved base address.
  virtual Status Reserve(uint64_t /*size*/, uint64_t /*alignment*/, DevicePtr* /*va*/) {
    return Refuse("Reserve");
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
  virtual Status SetAccess(DevicePtr /*va*/, uint64_t /*size*/, Access /*access*/) {
    return Refuse("SetAccess");
  }
  virtual Status Unmap(DevicePtr /*va*/, uint64_t /*size*/, SyncNote* /*note*/) {
    return Refuse("Unmap");
  }

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
  // Copies `bytes` of host memory at src to device address dst (cudaMemcpyAsync, host to device)
  // and waits for it: src may be pageable and is free to reuse on return. `timing` gets the
  // transfer's device time.
  virtual Status CopyFromHost(DevicePtr /*dst*/, const void* /*src*/, uint64_t /*bytes*/,
                              OpTiming* /*timing*/) {
    return Refuse("CopyFromHost");
  }

  // --- Graphs ---
  virtual Status BeginCapture() { return Refuse("BeginCapture"); }
  virtual Status EndCapture(GraphHandle* /*out*/) { return Refuse("EndCapture"); }
  virtual Status Instantiate(GraphHandle /*graph*/, ExecHandle* /*out*/) {
    return Refuse("Instantiate");
  }
  // Launches the executable graph and waits for it.
  virtual Status Replay(ExecHandle /*exec*/, OpTiming* /*timing*/) { return Refuse("Replay"); }
  // cudaGraphExecUpdate(exec, graph). A refused update is not an error Status: the Status is ok and
  // `result->code` says why. An error Status means the call itself could not be made.
  virtual Status Update(ExecHandle /*exec*/, GraphHandle /*graph*/, UpdateResult* /*result*/) {
    return Refuse("Update");
  }
  // Kernel nodes of `graph` in capture order.
  virtual Status KernelNodes(GraphHandle /*graph*/, std::vector<KernelNodeParams>* /*out*/) {
    return Refuse("KernelNodes");
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
  // Bitwise comparison of `count` 32-bit words; records at most `max_report` indices.
  virtual Status Compare(DevicePtr /*a*/, DevicePtr /*b*/, uint64_t /*count*/,
                         uint32_t /*max_report*/, CompareResult* /*out*/) {
    return Refuse("Compare");
  }
  virtual Status Synchronize() { return Refuse("Synchronize"); }

 protected:
  // What every method does unless the backend overrides it: a run-time error naming the backend
  // and the method ("the fake backend does not implement Memset"), so a new engine method needs
  // code only in the backends that run it.
  Status Refuse(const char* method) const {
    return RuntimeError("the " + info().backend + " backend does not implement " + method);
  }
};

}  // namespace vmm

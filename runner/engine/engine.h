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
//   work
//     (the engine's stream) and say so in SyncNote, because unmapping under a running kernel is the
//     illegal-address crash inference engines hit in practice.
//   - Free needs the range fully unmapped.
//
// Kernels (Fill, Matmul, Memset) run on the engine's single in-order stream. Between BeginCapture
// and EndCapture, Fill and Matmul are recorded into the graph instead of running (their OpTiming
// stays unmeasured); capturing Memset is not supported yet.
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
#include <string>
#include <vector>

#include "runner/base/status.h"
#include "runner/engine/data_plane.h"
#include "runner/vocab/access.h"

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
};

// Device-side timing of one operation; gpu_us < 0 means "not measured" (e.g. inside a capture).
struct OpTiming {
  double gpu_us = -1;
};

// Whether Unmap/Release had to wait for in-flight work before touching the mapping.
struct SyncNote {
  bool waited = false;  // true when there was enqueued work that had not finished yet
  double wait_us = 0;   // wall time spent waiting
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

// Every method has a default that refuses (Refuse below): a backend overrides what it implements,
// and the step that needs a method its backend lacks fails with a message that says so.
class Engine {
 public:
  virtual ~Engine() = default;
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  virtual const DeviceInfo& info() const = 0;

  // --- VMM (one to one with the driver; see the table above) ---
  // `alignment` 0 means the granularity. `*va` receives the reserved base address.
  virtual Status Reserve(uint64_t /*size*/, uint64_t /*alignment*/, DevicePtr* /*va*/) {
    return Refuse("Reserve");
  }
  virtual Status Free(DevicePtr /*va*/, uint64_t /*size*/) { return Refuse("Free"); }
  virtual Status Create(uint64_t /*size*/, AllocHandle* /*out*/) { return Refuse("Create"); }
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

 protected:
  // What every method does unless the backend overrides it: a run-time error naming the backend
  // and the method ("the fake backend does not implement Memset"), so a new engine method needs
  // code only in the backends that run it.
  Status Refuse(const char* method) const {
    return RuntimeError("the " + info().backend + " backend does not implement " + method);
  }
};

}  // namespace vmm

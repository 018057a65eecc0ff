// The host backend: a real VMM twin on Linux virtual memory, with CPU kernels and recorded graphs.
//
//   Reserve   = mmap(PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE), aligned by trimming
//   Create    = memfd_create + ftruncate (+ fallocate, so it fails now rather than SIGBUS later)
//   Map       = mmap(va, PROT_NONE, MAP_SHARED|MAP_FIXED, fd, offset): no access until SetAccess
//   SetAccess = mprotect          Unmap   = re-reserve the range (anonymous PROT_NONE, MAP_FIXED)
//   Release   = close the fd (a live mapping keeps the memory, as in CUDA)
//   Free      = munmap
//   Reserve with a hint = mmap(hint) without MAP_FIXED first (used when the range is free there)
//   Create with props   = host memory either way; host_numa committed under MPOL_BIND to its node;
//                         POSIX fd handles granted (a memfd), fabric refused, compression and the
//                         RDMA flag never granted (address_space.h has the rules)
//   Queries   = MemoryInfo (RAM total minus live device allocations), Granularity (the configured
//               granularity), AllocProperties, Retain, SameAllocation, AddressRange (the mapping),
//               ProbeCapability (the trial of capability_probe.h)
//
// Every driver rule is enforced (address_space.h lists them, with what an H200 driver returned) and
// reported as a Code::kRuntime Status in the CUDA backend's words,
// "<driver function>: <CUDA error name>: <reason>". Every kernel, copy, Checksum and data check
// first proves that each byte it touches is mapped with enough access (writes need read_write), or
// lies in a snapshot of the right place, instead of faulting: a kernel reports
// "<kernel>: CUDA_ERROR_ILLEGAL_ADDRESS: ..." (the device fault; kernels vmm_fill_f32,
// vmm_matmul_f32, vmm_checksum_u32 for Checksum, vmm_compare_count for CompareData,
// vmm_value_count for CompareValue, vmm_matmul_check for CheckMatmul; "cuGraphLaunch: node <i>: "
// in front during a replay), and a copy reports "cuMemcpy...: CUDA_ERROR_INVALID_VALUE: ..." (the
// driver refuses such a copy when it is enqueued). Graph calls are named cuStreamBeginCapture,
// cuStreamEndCapture, cuGraphInstantiate, cuGraphLaunch, cuGraphExecUpdate, cuGraphGetNodes,
// cuGraphDestroy and cuGraphExecDestroy.
//
// Snapshots and data checks are host_data.h's: snapshots of every place are anonymous host memory
// the engine owns, and checks run in place (the plain C++ reference of the device kernels).
//
// Kernels run synchronously on the calling thread: OpTiming::gpu_us is the wall time of the CPU
// kernel itself (of all nodes, for Replay). The one exception is Busy left in flight (timing
// nullptr): it runs on the worker thread of a HostStream (host_stream.h), and every later kernel,
// copy, Synchronize and waiting Unmap/Release first waits for it (Unmap/Release report that in
// SyncNote); an Unmap or Release with SyncNote::wait false goes ahead under it. The worker runs
// under the fault trap (fault_trap.h): a write to memory unmapped under it poisons the engine with
// CUDA_ERROR_ILLEGAL_ADDRESS, which every later call returns (a CUDA context's sticky error).
//
// With HostEngineOptions::trap_faults (an isolate block's child only), kernels skip the access
// proof and really run, under the fault trap: a kernel that touches memory without access faults
// for real and reports "<kernel>: CUDA_ERROR_ILLEGAL_ADDRESS: the kernel faulted: SIGSEGV (...)",
// poisoning the engine; a kernel launched without timing (async) reports it at the next call, as
// the GPU does. Copies keep their access proof (the driver refuses such a copy when enqueued).
// While capturing, calls that would synchronize the stream (Replay, CopyToHost, Checksum, the
// data checks, Synchronize) fail with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidate the
// capture, as they do under cudaStreamCaptureModeGlobal; EndCapture then fails with
// CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and ends the capture.
//
// Devices: the twin emulates options.device_count devices (address_space.h says how memory and
// access are kept per device). SelectDevice picks the device whose access kernels, copies and data
// reads are judged by; an exec replays with the device it was instantiated on. All memory is host
// memory, so peer access always works (DeviceInfo::peers lists every device).
//
// Graphs follow host_graph.h: capture records one node per call on the current capture lane
// (kernels with the CUDA kernels' exact parameters, memsets, copies — a copy from host memory keeps
// its own copy of the source —, host functions, event record/wait, graph memory and child graph
// nodes), lanes fork and join like streams, and update follows the CUDA runtime's documented rules.
// Graph memory follows host_graph_memory.h. Handles of all kinds come from one counter and are
// never reused, so a stale handle is always reported as unknown.
#pragma once

#include <cstdint>
#include <memory>

#include "runner/base/status.h"
#include "runner/engine/engine.h"

namespace vmm {

// How many devices the twin emulates unless told (--host-devices): two, so every multi-device
// scenario (`requires: {devices: 2}`) runs in CI on a machine without a GPU.
inline constexpr int kDefaultHostDevices = 2;

struct HostEngineOptions {
  // Bytes; 0 means the page size. Must be a power-of-two multiple of the page size (the CUDA
  // backend reports 2 MiB on current GPUs; scenarios pass theirs so both backends agree).
  uint64_t granularity = 0;
  // Emulated devices (1 .. kMaxScenarioDevices) and which of them is the engine's own (--device).
  int device_count = kDefaultHostDevices;
  int device = 0;
  // Run kernels for real under the fault trap instead of proving their access first (see above).
  // Installs the process-wide fault trap; for the child process of an isolate block.
  bool trap_faults = false;
  // The memory each emulated device has (DeviceInfo::total_memory, what `requires: device_memory`
  // is held to and creates draw from): at most this machine's RAM; 0 means the RAM.
  uint64_t memory_bytes = 0;
};

// Creates the host engine. Fails with Code::kInvalidInput when the granularity is not a
// power-of-two multiple of the page size or the device count is out of range, and with
// Code::kUnavailable when options.device is not one of the emulated devices. DeviceInfo: backend
// "host", name "host CPU (<model name from /proc/cpuinfo>)", driver_version = kernel release
// (uname), vmm_supported, granularity_min = page size, granularity_recommended = the granularity in
// use, total_memory = physical RAM or less (memory_bytes), ordinal = options.device, device_count =
// options.device_count, pci_bus_id "host".
StatusOr<std::unique_ptr<Engine>> CreateHostEngine(const HostEngineOptions& options);

}  // namespace vmm

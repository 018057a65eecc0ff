#include "runner/engine/host/host_engine.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <utility>

#include "kernels/launch_config.h"
#include "runner/base/format.h"
#include "runner/base/stopwatch.h"
#include "runner/engine/capability_probe.h"
#include "runner/engine/host/address_space.h"
#include "runner/engine/host/cpu_kernels.h"
#include "runner/engine/host/host_data.h"
#include "runner/engine/host/host_engine_impl.h"
#include "runner/engine/host/host_vmm.h"
#include "runner/engine/kernel_params.h"

namespace vmm {
namespace host {
namespace {

constexpr const char* kChecksumKernel = "vmm_checksum_u32";

// "host CPU (<model name>)", or the machine name where /proc/cpuinfo has no model name.
std::string CpuName(const struct utsname& uts) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return "host CPU (" + line.substr(start) + ")";
  }
  return std::string("host CPU (") + uts.machine + ")";
}

DeviceInfo HostInfo(uint64_t granularity, int device_count, int device, uint64_t memory_bytes) {
  struct utsname uts;
  std::memset(&uts, 0, sizeof uts);
  uname(&uts);
  DeviceInfo info;
  info.backend = "host";
  info.name = CpuName(uts);
  info.driver_version = uts.release;
  info.vmm_supported = true;
  info.granularity_min = PageSize();
  info.granularity_recommended = granularity;
  const uint64_t ram =
      static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  info.total_memory = memory_bytes != 0 && memory_bytes < ram ? memory_bytes : ram;
  info.ordinal = device;
  info.device_count = device_count;
  info.pci_bus_id = "host";
  for (int d = 0; d < device_count; ++d) info.peers.push_back(d);  // all memory is host memory
  return info;
}

}  // namespace

HostEngine::HostEngine(uint64_t granularity, int device_count, int device, bool trap_faults,
                       uint64_t memory_bytes)
    : info_(HostInfo(granularity, device_count, device, memory_bytes)),
      space_(granularity, info_.total_memory, &ids_, device_count),
      pool_(&space_),
      current_(device),
      trap_faults_(trap_faults),
      kernels_(space_, trap_faults) {}

Status HostEngine::Reserve(uint64_t size, uint64_t alignment, DevicePtr hint, DevicePtr* va) {
  VMM_RETURN_IF_ERROR(kernels_.Poisoned());
  return space_.Reserve(size, alignment, hint, va);
}
Status HostEngine::Free(DevicePtr va, uint64_t size) {
  VMM_RETURN_IF_ERROR(kernels_.Poisoned());
  return space_.Free(va, size);
}
Status HostEngine::Create(const AllocProps& props, AllocHandle* out) {
  VMM_RETURN_IF_ERROR(kernels_.Poisoned());
  AllocProps resolved = props;  // a device location names an ordinal of the twin
  if (props.location == MemLocation::kDevice) resolved.location_id = Ordinal(props.location_id);
  return space_.Create(resolved, out);
}
Status HostEngine::Release(AllocHandle handle, SyncNote* note) {
  VMM_RETURN_IF_ERROR(kernels_.WaitIfAsked(note));
  allow_released_ = false;  // a second release: INVALID_VALUE, as driver 580 answers right after
  VMM_RETURN_IF_ERROR(space_.Release(handle));
  released_[released_next_] = handle.value;
  released_next_ = (released_next_ + 1) % released_.size();
  return Status::Ok();
}
Status HostEngine::Map(DevicePtr va, uint64_t size, uint64_t offset, AllocHandle handle) {
  VMM_RETURN_IF_ERROR(kernels_.Poisoned());
  const bool allowed = std::exchange(allow_released_, false);
  if (allowed && trap_faults_ &&
      std::find(released_.begin(), released_.end(), handle.value) != released_.end()) {
    // Driver 580 segfaults on a map of a released handle (tools/unsafe_calls_probe.cc on the
    // H200): an isolate block's child ends the same way here.
    std::fflush(nullptr);
    std::raise(SIGSEGV);
  }
  return space_.Map(va, size, offset, handle);
}
Status HostEngine::AllowReleasedHandle() {
  allow_released_ = true;
  return Status::Ok();
}
Status HostEngine::SetAccess(DevicePtr va, uint64_t size, std::span<const DeviceAccess> access,
                             SyncNote* note) {
  DeviceAccess resolved[kMaxScenarioDevices];
  if (access.size() > kMaxScenarioDevices) {
    return CudaError("cuMemSetAccess", kInvalidValue,
                     std::to_string(access.size()) + " descriptors, more than the " +
                         std::to_string(kMaxScenarioDevices) + " devices vmm-run knows");
  }
  VMM_RETURN_IF_ERROR(kernels_.Poisoned());
  VMM_RETURN_IF_ERROR(kernels_.WaitIfAsked(note));  // as cuda's: a busy kernel finishes first
  for (size_t i = 0; i < access.size(); ++i)
    resolved[i] = DeviceAccess{Ordinal(access[i].device), access[i].access};
  return space_.SetAccess(va, size, std::span<const DeviceAccess>(resolved, access.size()));
}
Status HostEngine::GetAccess(DevicePtr va, int device, Access* out) {
  return space_.GetAccess(va, Ordinal(device), out);
}

Status HostEngine::SelectDevice(int device) {
  const int ordinal = Ordinal(device);
  if (std::string e = space_.CheckDevice(ordinal); !e.empty())
    return CudaError("cudaSetDevice", "CUDA_ERROR_INVALID_DEVICE", e);
  current_ = ordinal;
  return Status::Ok();
}
Status HostEngine::DescribeDevice(int ordinal, DeviceInfo* out) {
  const int device = Ordinal(ordinal);
  if (std::string e = space_.CheckDevice(device); !e.empty())
    return CudaError("cuDeviceGet", "CUDA_ERROR_INVALID_DEVICE", e);
  *out = info_;
  out->ordinal = device;
  return Status::Ok();
}
Status HostEngine::Unmap(DevicePtr va, uint64_t size, SyncNote* note) {
  VMM_RETURN_IF_ERROR(kernels_.WaitIfAsked(note));
  return space_.Unmap(va, size);
}
Status HostEngine::Export(AllocHandle handle, int* fd) { return space_.Export(handle, fd); }
Status HostEngine::Import(int fd, AllocHandle* out) { return space_.Import(fd, out); }
Status HostEngine::Inventory(EngineInventory* out) {
  space_.Inventory(out);
  ReadAccessBack(out);
  return Status::Ok();
}

Status HostEngine::LaunchKernel(const KernelNodeParams& params, OpTiming* timing) {
  const kernels::GraphKernel* row = FindGraphKernel(params.function);
  if (row == nullptr || params.arg_bytes.size() != row->layout.bytes) {
    return CudaError(
        "cudaLaunchKernel", kInvalidValue,
        row == nullptr ? "no graph kernel is named '" + params.function + "'"
                       : KernelCallText(params) + " takes " + std::to_string(row->layout.bytes) +
                             " bytes of arguments, got " + std::to_string(params.arg_bytes.size()));
  }
  // cudaLaunchKernel refuses a launch of no blocks or no threads (cudaErrorInvalidConfiguration).
  for (int i = 0; i < 3; ++i) {
    if (params.grid[i] == 0 || params.block[i] == 0) {
      return CudaError("cudaLaunchKernel", kInvalidValue,
                       KernelCallText(params) + " has a launch dimension of 0 (grid " +
                           std::to_string(params.grid[0]) + "x" + std::to_string(params.grid[1]) +
                           "x" + std::to_string(params.grid[2]) + ", block " +
                           std::to_string(params.block[0]) + "x" + std::to_string(params.block[1]) +
                           "x" + std::to_string(params.block[2]) + ")");
    }
  }
  return Launch(MakeKernelNode(params), timing);
}

Status HostEngine::Memset(DevicePtr dst, uint64_t count, uint32_t pattern, OpTiming* timing) {
  return Launch(MakeMemsetNode(dst, count, pattern), timing);
}

Status HostEngine::WriteValue(DevicePtr dst, uint32_t value, OpTiming* timing) {
  if (timing != nullptr) timing->gpu_us = -1;
  if (capturing_) {
    return CudaError("cuStreamWriteValue32", "CUDA_ERROR_NOT_SUPPORTED",
                     "vmm-run does not capture write_value");
  }
  if (dst % 4 != 0) {  // refused at the call, as the driver does
    return CudaError("cuStreamWriteValue32", kInvalidValue,
                     "the address " + Hex(dst) + " is not 4-byte aligned");
  }
  auto write = [&] { *Ptr<uint32_t>(dst) = value; };
  return RunNow(timing, [&] {
    return kernels_.Guarded("cuStreamWriteValue32", current_, {{"dst", dst, 4, Access::kReadWrite}},
                            write);
  });
}

Status HostEngine::Busy(DevicePtr dst, uint64_t count, uint64_t duration_ns, uint32_t pattern,
                        kernels::BusyTouch touch, int flag, OpTiming* timing) {
  if (timing != nullptr) timing->gpu_us = -1;
  if (capturing_) {
    return CudaError(kernels::kBusyKernelName, "CUDA_ERROR_NOT_SUPPORTED",
                     "vmm-run does not capture busy kernels");
  }
  return kernels_.Busy(dst, count, duration_ns, pattern, touch, flag, timing, current_);
}

Status HostEngine::SetFlag(int flag, bool* expired) { return kernels_.SetFlag(flag, expired); }

Status HostEngine::CopyDevice(DevicePtr dst, DevicePtr src, uint64_t bytes, OpTiming* timing) {
  return Launch(MakeCopyNode(dst, src, bytes), timing);
}

Status HostEngine::Copy(DataRef dst, DataRef src, uint64_t bytes, OpTiming* timing) {
  if (capturing_ &&
      (dst.place == DataPlace::kHostPageable || src.place == DataPlace::kHostPageable)) {
    // The runtime refuses a memcpy node over pageable memory (and would invalidate the capture);
    // both backends refuse it before the call.
    if (timing != nullptr) timing->gpu_us = -1;
    return CudaError("cudaMemcpyAsync", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
                     "a captured copy cannot use pageable host memory; keep the snapshot pinned "
                     "or on the device");
  }
  // One node when capturing (it reads and writes the places when its graph runs), else run now.
  return Launch(MakeDataCopyNode(dst, src, bytes), timing);
}

Status HostEngine::HostFunction(OpTiming* timing) {
  return Launch(MakeNode(NodeType::kHost), timing);
}

Status HostEngine::CopyToHost(DevicePtr src, uint64_t bytes, void* dst) {
  const char* fn = "cuMemcpyDtoH";
  VMM_RETURN_IF_ERROR(SyncPoint(fn));
  VMM_RETURN_IF_ERROR(kernels_.Ordered());
  if (dst == nullptr && bytes != 0) return CudaError(fn, kInvalidValue, "the destination is null");
  VMM_RETURN_IF_ERROR(data_.CheckRef(fn, kInvalidValue, "src", DataRef::Device(src), bytes,
                                     Access::kRead, current_));
  if (bytes != 0) std::memcpy(dst, Ptr<const void>(src), bytes);
  return Status::Ok();
}

Status HostEngine::Checksum(DevicePtr src, uint64_t count, uint64_t* hash) {
  VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
  VMM_RETURN_IF_ERROR(kernels_.Ordered());
  // Device snapshots are device memory too: the data plane proves the access (host_data.h).
  VMM_RETURN_IF_ERROR(data_.CheckRef(kChecksumKernel, kIllegalAddress, "src", DataRef::Device(src),
                                     Bytes4(count), Access::kRead, current_));
  auto kernel = [&] { *hash = ChecksumWords(Ptr<const void>(src), count); };
  return kernels_.Guarded(kChecksumKernel, current_, {}, kernel);
}

Status HostEngine::CopyHashed(DataRef dst, DevicePtr src, uint64_t count, OpTiming* timing,
                              uint64_t* hash) {
  VMM_RETURN_IF_ERROR(Copy(dst, DataRef::Device(src), Bytes4(count), timing));
  return Checksum(src, count, hash);
}

// --- Data plane (host_data.h) ---
Status HostEngine::AllocSnapshot(uint64_t bytes, DataPlace place, SnapshotHandle* out) {
  return data_.AllocSnapshot(bytes, place, out);
}
Status HostEngine::FreeSnapshot(const SnapshotHandle& snapshot) {
  VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
  VMM_RETURN_IF_ERROR(kernels_.Ordered());
  return data_.FreeSnapshot(snapshot);
}
Status HostEngine::CompareData(DevicePtr a, DataRef b, uint64_t count,
                               const CompareOptions& options, DataCompareResult* out) {
  VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
  VMM_RETURN_IF_ERROR(kernels_.Ordered());
  return data_.CompareData(a, b, count, options, current_, out);
}
Status HostEngine::CompareValue(DevicePtr a, uint32_t pattern, uint64_t count, uint32_t max_report,
                                DataCompareResult* out) {
  VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
  VMM_RETURN_IF_ERROR(kernels_.Ordered());
  return data_.CompareValue(a, pattern, count, max_report, current_, out);
}
Status HostEngine::CheckMatmul(const MatmulArgs& args, uint32_t max_report,
                               MatmulCheckResult* out) {
  VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
  VMM_RETURN_IF_ERROR(kernels_.Ordered());
  return data_.CheckMatmul(args, max_report, current_, out);
}

Status HostEngine::Synchronize() {
  VMM_RETURN_IF_ERROR(SyncPoint("cuStreamSynchronize"));
  return kernels_.Ordered();
}

Status HostEngine::MemoryInfo(uint64_t* free_bytes, uint64_t* total_bytes) {
  space_.MemoryInfo(current_, free_bytes, total_bytes);
  return Status::Ok();
}
Status HostEngine::HoldMemory(uint64_t leave_free, uint64_t* held) {
  return space_.HoldMemory(current_, leave_free, held);
}
Status HostEngine::ReturnMemory(uint64_t* returned) {
  space_.ReturnMemory(current_, returned);
  return Status::Ok();
}
Status HostEngine::Granularity(const AllocProps& props, GranularityKind kind, uint64_t* bytes) {
  return space_.Granularity(props, kind, bytes);
}
Status HostEngine::AllocProperties(AllocHandle handle, AllocProps* granted) {
  return space_.AllocProperties(handle, granted);
}
Status HostEngine::Retain(DevicePtr va, AllocHandle* out) { return space_.Retain(va, out); }
Status HostEngine::SameAllocation(AllocHandle a, AllocHandle b, bool* same) {
  return space_.SameAllocation(a, b, same);
}
Status HostEngine::AddressRange(DevicePtr va, DevicePtr* base, uint64_t* size) {
  return space_.RangeOf(va, current_, base, size);
}
// No device attributes: the trial alone decides (memfd handles are POSIX fds; host and NUMA node 0
// memory exist where the kernel has them; compression, RDMA and fabric never).
Status HostEngine::ProbeCapability(Capability capability, std::string* why_not) {
  if (capability == Capability::kCheckpoint) {  // host_engine_checkpoint.cc
    why_not->clear();
    return Status::Ok();
  }
  return ProbeByTrial(*this, capability, why_not);
}

Status HostEngine::Launch(GraphNode node, OpTiming* timing) {
  if (timing != nullptr) timing->gpu_us = -1;
  if (capturing_) {
    VMM_RETURN_IF_ERROR(kernels_.Poisoned());
    if (node.type == NodeType::kMemcpy) {
      // The runtime checks a copy's memory when it is captured: on the H200 cudaMemcpyAsync
      // refused (cudaErrorInvalidValue) a destination without read_write access and a source
      // without read access (tools/twin_fidelity_probe.cc). Kernels and memsets are not checked.
      // The graph's own memory (an alloc node's range) is mapped when a replay reaches it; an
      // address of anything else is checked, as the runtime checks it.
      const char* fn = "cudaMemcpyAsync";
      if (!capture_->graph().Allocates(node.src))
        VMM_RETURN_IF_ERROR(data_.CheckRef(fn, kInvalidValue, "src", {node.src, node.src_place},
                                           node.count, Access::kRead, current_));
      if (!capture_->graph().Allocates(node.dst))
        VMM_RETURN_IF_ERROR(data_.CheckRef(fn, kInvalidValue, "dst", {node.dst, node.dst_place},
                                           node.count, Access::kReadWrite, current_));
    }
    return capture_->Add(std::move(node));
  }
  return RunNow(timing, [&] { return Run(node, nullptr); });
}

int HostEngine::Ordinal(int device) const { return device < 0 ? info_.ordinal : device; }

Status HostEngine::Run(const GraphNode& node, const Exec* exec) {
  if (!node.enabled) return Status::Ok();                        // a disabled node does nothing
  const int device = exec != nullptr ? exec->device : current_;  // whose access is judged
  switch (node.type) {
    case NodeType::kKernel: {
      const std::string& fn = node.params.function;
      if (fn == kernels::kSetConditionKernelName || fn == kernels::kNextPassKernelName)
        return RunConditionKernel(node, device);
      const CpuKernel* cpu = FindCpuKernel(fn);
      if (cpu == nullptr) return InternalError("the host twin has no CPU kernel '" + fn + "'");
      // Guarded: every operand proven accessible to `device` first, or (an isolate child) run
      // under the trap.
      std::vector<Operand> operands;
      for (const NodeOperand& o : KernelOperands(fn, node.params.arg_bytes))
        operands.push_back({o.name.empty() ? "arg" : o.name.data(), o.va, o.bytes, o.access});
      auto kernel = [&] { cpu->run(node.params.arg_bytes); };
      return kernels_.Guarded(fn, device, operands, kernel);
    }
    case NodeType::kMemset: {
      auto kernel = [&] { std::fill_n(Ptr<uint32_t>(node.dst), node.count, node.pattern); };
      return kernels_.Guarded("cuMemsetD32Async", device,
                              {{"dst", node.dst, Bytes4(node.count), Access::kReadWrite}}, kernel);
    }
    case NodeType::kMemcpy:  // device memory, device snapshots and host snapshots alike
      return data_.Copy(DataRef{node.dst, node.dst_place}, DataRef{node.src, node.src_place},
                        node.count, nullptr, device);
    case NodeType::kHost:
      ++host_calls_;
      return Status::Ok();
    case NodeType::kEventRecord:
      ++event_records_[node.event];
      return Status::Ok();
    case NodeType::kEventWait:  // work runs in order here: every record it waits for is done
    case NodeType::kEmpty:
      return Status::Ok();
    case NodeType::kMemAlloc:
      return pool_.Allocate(node.ptr, exec != nullptr && exec->auto_free);
    case NodeType::kMemFree:
      return pool_.Free(node.ptr, "cuGraphLaunch");
    case NodeType::kGraph:
      return RunGraph(*node.child, exec);
    case NodeType::kConditional:
      return RunConditional(node, exec);
  }
  return InternalError("unknown node type");
}

Status HostEngine::SyncPoint(const char* function) {
  if (!capturing_) return Status::Ok();
  if (invalidated_by_.empty()) invalidated_by_ = function;
  return CudaError(function, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
                   "not allowed while the stream is capturing (the capture is now invalidated)");
}

}  // namespace host

StatusOr<std::unique_ptr<Engine>> CreateHostEngine(const HostEngineOptions& options) {
  const uint64_t page = host::PageSize();
  const uint64_t granularity = options.granularity == 0 ? page : options.granularity;
  if (granularity % page != 0 || (granularity & (granularity - 1)) != 0) {
    return InvalidInput("host backend: granularity " + FormatBytes(granularity) +
                        " is not a power-of-two multiple of the page size " + FormatBytes(page));
  }
  if (options.device_count < 1 || options.device_count > kMaxScenarioDevices) {
    return InvalidInput("host backend: " + std::to_string(options.device_count) +
                        " emulated devices; give 1 to " + std::to_string(kMaxScenarioDevices));
  }
  if (options.device < 0 || options.device >= options.device_count) {
    return Unavailable("no host device " + std::to_string(options.device) + ": the host twin has " +
                       std::to_string(options.device_count) + " (--host-devices " +
                       std::to_string(options.device_count) + ")");
  }
  return std::unique_ptr<Engine>(
      std::make_unique<host::HostEngine>(granularity, options.device_count, options.device,
                                         options.trap_faults, options.memory_bytes));
}

}  // namespace vmm
